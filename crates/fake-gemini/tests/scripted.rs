//! The scripted answers (a browsing action, a page judgement, a test plan) come from what a
//! model reads in the request (its text parts, wherever the content is; the conversation;
//! the schema), not from the client's wording: the same content, worded and fenced otherwise,
//! split over parts or reordered, gets the same answer.

mod common;

use base64::Engine;
use common::*;
use fake_gemini::FakeGemini;
use reqwest::Client;
use serde_json::{json, Value};

/// A screenshot's bytes (the fake proves which bytes arrived in every answer).
fn screenshot() -> Value {
    let bytes = data(3_000);
    json!({"inlineData": {"mimeType": "image/png",
        "data": base64::engine::general_purpose::STANDARD.encode(bytes)}})
}

/// Asks with these user turns (text parts after the screenshot; `model` turns as given) and
/// this schema; returns the JSON answer.
async fn answer(fake: &FakeGemini, contents: Value, system: &str, schema: &Value) -> Value {
    let body = json!({
        "systemInstruction": {"parts": [{"text": system}]},
        "contents": contents,
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": schema},
    });
    let response = generate(fake, &Client::new(), "gemini-3.5-flash-lite", &body).await;
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    let text = body["candidates"][0]["content"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    serde_json::from_str(text).unwrap()
}

/// One user turn: the screenshot, then each text as its own part.
fn user(texts: &[&str]) -> Value {
    let mut parts = vec![screenshot()];
    parts.extend(texts.iter().map(|t| json!({"text": t})));
    json!([{"role": "user", "parts": parts}])
}

fn object(properties: Value) -> Value {
    let required: Vec<&String> = properties.as_object().unwrap().keys().collect();
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

#[tokio::test]
async fn a_browsing_action_is_the_same_whatever_the_wording() {
    let fake = FakeGemini::start().await;
    let text = json!({"type": "string"});
    let schema = object(json!({
        "description": text,
        "action": {"type": "string", "enum": ["click", "type", "press", "scroll", "navigate", "done", "give_up"]},
        "ref": text, "text": text, "reasoning": text,
    }));
    let instruction = "Log in: type \"ada@example.com\" into \"Email\", click \"Sign in\".";
    // As Vaider words it today.
    let vaider = format!(
        "Instruction: {instruction}\nThe page's address: http://127.0.0.1:1/\nActions so far:\n\
         Action 1: type \"ada@example.com\" into [2] textbox \"Email\" — ok\n\
         The page's elements now, each with its ref (act on one by its ref):\n<<<\n\
         [1] label \"Email\"\n[2] textbox \"Email\" value=\"ada@example.com\"\n[3] button \"Sign in\"\n\
         … 12 more elements not listed (scroll to reach them)\n>>>\nName the one next action."
    );
    let first = answer(&fake, user(&[&vaider]), "Act.", &schema).await;
    assert_eq!(
        (&first["action"], &first["ref"]),
        (&json!("click"), &json!("3"))
    );

    // Other words, no fences, the blocks reordered and split over parts, bulleted elements.
    let elements = "On screen right now:\n- [3] button \"Sign in\"\n- [1] label \"Email\"\n\
                    - [2] textbox \"Email\" value=\"ada@example.com\"";
    let history =
        "What you did before:\n1. type \"ada@example.com\" into [2] textbox \"Email\" (it worked)";
    let goal = format!("Your goal. {instruction}");
    let reworded = answer(
        &fake,
        user(&[elements, history, &goal]),
        "Be a tester.",
        &schema,
    )
    .await;
    assert_eq!(reworded, first);

    // A conversation: the action done is the model's own earlier turn, not a line of text.
    let mut chat = user(&[&format!("{instruction}\n{elements}")]);
    chat.as_array_mut().unwrap().extend([
        json!({"role": "model", "parts": [{"text": "{\"action\":\"type\",\"ref\":\"2\"}"}]}),
        json!({"role": "user", "parts": [{"text": "Done. What next?"}]}),
    ]);
    assert_eq!(answer(&fake, chat, "Act.", &schema).await, first);

    // The answer fits the schema sent: a schema without `text` gets none.
    let narrow = object(json!({
        "action": {"type": "string", "enum": ["click", "done", "give_up"]},
        "ref": text,
    }));
    let fitted = answer(&fake, user(&[&vaider]), "Act.", &narrow).await;
    assert_eq!(fitted, json!({"action": "click", "ref": "3"}));
}

#[tokio::test]
async fn a_judgement_is_the_same_whatever_the_wording() {
    let fake = FakeGemini::start().await;
    let schema = object(json!({
        "description": {"type": "string"}, "passed": {"type": "boolean"},
        "reasoning": {"type": "string"}, "confidence": {"type": "number"},
    }));
    for (page, passed) in [("Welcome, Ada\n3 items", true), ("Welcome, guest", false)] {
        let vaider = format!(
            "Check the greeting.\nCriteria: the greeting says \"Welcome, Ada\"\n\
             The page's visible text:\n<<<\n{page}\n>>>"
        );
        let first = answer(&fake, user(&[&vaider]), "Judge.", &schema).await;
        assert_eq!(first["passed"], passed, "{first}");
        let reworded = answer(
            &fake,
            user(&[
                &format!("PAGE TEXT\n{page}"),
                "Is this true of the page? the greeting says \"Welcome, Ada\".",
            ]),
            "You judge pages.",
            &schema,
        )
        .await;
        assert_eq!(reworded, first);
    }
}

#[tokio::test]
async fn a_plan_and_its_retry_are_the_same_whatever_the_wording() {
    let fake = FakeGemini::start().await;
    let text = json!({"type": "string"});
    let command = object(json!({"command": text, "target": text, "value": text}));
    let step = object(json!({
        "id": text, "name": text, "type": text,
        "commands": {"type": "array", "items": command},
        "assertions": {"type": "array", "items": {"type": "object"}},
        "instruction": text, "criteria": text, "context": text, "expectedOutcome": text,
    }));
    let schema = object(json!({
        "name": text, "summary": text, "steps": {"type": "array", "items": step},
    }));
    let requirements = "[invalid first] It shows \"Sign in\" and \"Welcome\"";
    let vaider = format!(
        "Write a test plan for these requirements:\n<<<\n{requirements}\n>>>\n\
         The app runs at http://127.0.0.1:1/.\nThe first page's visible text:\n<<<\nSign in\nEmail\n>>>\n\
         Context from the code base (local):\n--- index.html ---\n<button id=\"sign-in\">Sign in</button>\n\
         <script>const BUG = \"__BUG__\";</script>\n"
    );
    let reworded = [
        "The app's first page reads:\nSign in\nEmail",
        &format!("Requirements from the user:\n{requirements}"),
    ];
    let steps = |plan: &Value| plan["steps"].as_array().unwrap().len();

    let first = answer(&fake, user(&[&vaider]), "Plan.", &schema).await;
    assert_eq!(
        steps(&first),
        4,
        "open, two checks and the broken step: {first}"
    );
    assert_eq!(first["steps"][1]["commands"][0]["target"], "text=Sign in");
    assert_eq!(first["steps"][2]["type"], "agentic_assertion");
    let other = answer(&fake, user(&reworded), "Write plans.", &schema).await;
    assert_eq!(other, first);

    // The retry: Vaider's report of the errors, or any words that speak of the broken step.
    let retry = format!(
        "{vaider}Your previous plan was refused. Validation errors:\n- step 4 (step-broken): a selenese step needs commands\n"
    );
    let fixed = answer(&fake, user(&[&retry]), "Plan.", &schema).await;
    assert_eq!(steps(&fixed), 3, "{fixed}");
    let mut reworded_retry = reworded.to_vec();
    reworded_retry.insert(0, "Last time, step-broken was empty. Try again.");
    let other = answer(&fake, user(&reworded_retry), "Write plans.", &schema).await;
    assert_eq!(other, fixed);
}
