//! A scripted planner, so tests of plan generation can check it end to end: a request whose
//! schema asks for `steps` with `commands` (as Vaider's `generate_test_plan` sends it) gets a
//! plan a test can predict, read from the content as a model reads it, not from the client's
//! wording (`received`). The plan opens `/`, then for each phrase quoted in what the client
//! wrote (the requirements) checks it: a scripted `assertVisible` when the text sent also shows
//! it unquoted (the first page's text), else an `agentic_assertion` that the page shows it.
//! Two markers in the requirements test the retry: `[invalid first]` answers a plan with an
//! empty step (`step-broken`) until the request is a retry, `[always invalid]` always does. A
//! retry is a conversation with the plan answered before, or a request that speaks of that
//! broken step, as a report of its errors does in whatever words. The summary carries the
//! proof of the media bytes; the plan fits the schema sent.

use serde_json::{json, Value};

use crate::received::Received;

/// The id of the step an invalid plan has.
const BROKEN: &str = "step-broken";

/// Whether the schema is a plan's.
pub(crate) fn asks_for_plan(schema: &Value) -> bool {
    schema["properties"]["steps"]["items"]["properties"]["commands"].is_object()
}

/// The scripted plan for what was received, with `proof` in its summary.
pub(crate) fn plan(read: &Received, schema: &Value, proof: &str) -> Value {
    let retried = !read.answers.is_empty() || read.says(BROKEN);
    let invalid = read.says("[always invalid]") || (read.says("[invalid first]") && !retried);
    let mut steps = vec![step(
        "step-1",
        "open the app",
        "selenese",
        json!({
            "commands": [{"command": "open", "target": "/", "value": ""}]
        }),
    )];
    // What is said of the broken step (its errors) is no requirement.
    let phrases = read.phrases_but(|line| match line.contains(BROKEN) {
        true => crate::received::quoted(line)
            .into_iter()
            .map(str::to_string)
            .collect(),
        false => Vec::new(),
    });
    for (index, phrase) in phrases.iter().enumerate() {
        steps.push(check_step(read, &format!("step-{}", index + 2), phrase));
    }
    if invalid {
        steps.push(step(BROKEN, "broken", "selenese", json!({})));
    }
    // Named after the requirements: the first line that quotes a phrase, else the first.
    let prose = read.prose();
    let first = phrases
        .first()
        .and_then(|p| prose.iter().find(|l| l.contains(&format!("\"{p}\""))))
        .or(prose.first())
        .copied()
        .unwrap_or("");
    let words: Vec<&str> = first.split_whitespace().take(5).collect();
    let answer = json!({
        "name": format!("Plan: {}", words.join(" ")),
        "summary": format!("Scripted from the requirements. {proof}"),
        "steps": steps,
    });
    crate::schema::fit(schema, &answer, proof)
}

/// The step that checks a phrase: a Selenese assertion when the page shows it, else a
/// judgement by the model.
fn check_step(read: &Received, id: &str, phrase: &str) -> Value {
    if read.shows(phrase) {
        step(
            id,
            &format!("shows {phrase}"),
            "selenese",
            json!({
                "commands": [{"command": "assertVisible", "target": format!("text={phrase}"), "value": ""}]
            }),
        )
    } else {
        step(
            id,
            &format!("judge {phrase}"),
            "agentic_assertion",
            json!({
                "instruction": "Look at the page.",
                "criteria": format!("the page shows \"{phrase}\"")
            }),
        )
    }
}

/// A flat step: every type's fields, the unused ones empty, as the schema asks.
fn step(id: &str, name: &str, kind: &str, fields: Value) -> Value {
    let mut step = json!({
        "id": id, "name": name, "type": kind, "commands": [], "assertions": [],
        "instruction": "", "criteria": "", "context": "", "expectedOutcome": ""
    });
    for (key, value) in fields.as_object().into_iter().flatten() {
        step[key] = value.clone();
    }
    step
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMPT: &str = "Write a test plan for these requirements:\n<<<\nThe page says \"Sign in\" and \"Welcome\"\n>>>\nThe first page's visible text:\n<<<\nSign in\nEmail\n>>>\n";

    fn received(text: &str) -> Received {
        Received {
            texts: vec![text.to_string()],
            ..Received::default()
        }
    }

    fn schema() -> Value {
        let text = json!({"type": "string"});
        json!({"type": "object", "properties": {
            "name": text, "summary": text,
            "steps": {"type": "array", "items": {"type": "object", "properties": {
                "id": text, "name": text, "type": text,
                "commands": {"type": "array", "items": {"type": "object", "properties": {
                    "command": text, "target": text, "value": text}}},
                "assertions": {"type": "array", "items": {"type": "object"}},
                "instruction": text, "criteria": text, "context": text, "expectedOutcome": text}}}}})
    }

    fn steps(text: &str) -> usize {
        plan(&received(text), &schema(), "")["steps"]
            .as_array()
            .unwrap()
            .len()
    }

    #[test]
    fn phrases_on_the_page_are_scripted_the_others_judged() {
        let plan = plan(&received(PROMPT), &schema(), "proof");
        let steps = plan["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 3);
        assert_eq!(steps[1]["commands"][0]["target"], "text=Sign in");
        assert_eq!(steps[2]["type"], "agentic_assertion");
        assert_eq!(steps[2]["criteria"], "the page shows \"Welcome\"");
        assert!(plan["summary"].as_str().unwrap().ends_with("proof"));
        assert_eq!(plan["name"], "Plan: The page says \"Sign in\"");
    }

    #[test]
    fn the_markers_give_an_invalid_plan_until_a_retry() {
        let first = PROMPT.replace("The page says", "[invalid first] The page says");
        assert_eq!(steps(&first), 4);
        // The errors come back in any words: they speak of the broken step.
        let retried = format!("{first}Please fix: step 4 (\"step-broken\") has no \"commands\".\n");
        assert_eq!(steps(&retried), 3);
        // Or the conversation holds the plan answered before.
        let mut chat = received(&first);
        chat.answers.push("{\"steps\": []}".into());
        assert_eq!(
            plan(&chat, &schema(), "")["steps"]
                .as_array()
                .unwrap()
                .len(),
            3
        );
        let always = format!(
            "{}step-broken: no commands\n",
            PROMPT.replace("The page", "[always invalid] The page")
        );
        assert_eq!(steps(&always), 4);
        assert!(asks_for_plan(
            &json!({"properties": {"steps": {"items": {"properties": {"commands": {}}}}}})
        ));
        assert!(!asks_for_plan(&json!({"properties": {"passed": {}}})));
    }
}
