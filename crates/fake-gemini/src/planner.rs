//! A scripted planner, so tests of plan generation can check it end to end: a request whose
//! schema asks for `steps` with `commands` (as Vaider's `generate_test_plan` sends it) gets a
//! plan a test can predict from the prompt. The requirements are the text between the first
//! `<<<` and `>>>`, the first page's text between the second pair. The plan opens `/`, then for
//! each phrase quoted in the requirements checks it: a scripted `assertVisible` when the page
//! shows it, else an `agentic_assertion` that the page shows it. Two markers test the retry:
//! `[invalid first]` answers a plan with an empty step until the prompt carries validation
//! errors; `[always invalid]` always does. The summary carries the proof of the media bytes.

use serde_json::{json, Value};

/// Whether the schema is a plan's.
pub(crate) fn asks_for_plan(schema: &Value) -> bool {
    schema["properties"]["steps"]["items"]["properties"]["commands"].is_object()
}

/// The scripted plan for this prompt, with `proof` in its summary.
pub(crate) fn plan(prompt: &str, proof: &str) -> Value {
    let mut fenced = prompt
        .split("<<<")
        .skip(1)
        .filter_map(|p| p.split_once(">>>"));
    let requirements = fenced.next().map(|(r, _)| r.trim()).unwrap_or("");
    let page = fenced.next().map(|(p, _)| p).unwrap_or("");
    let retried = prompt.contains("Validation errors:");
    let invalid = requirements.contains("[always invalid]")
        || (requirements.contains("[invalid first]") && !retried);
    let mut steps = vec![step(
        "step-1",
        "open the app",
        "selenese",
        json!({
            "commands": [{"command": "open", "target": "/", "value": ""}]
        }),
    )];
    for (index, phrase) in requirements.split('"').skip(1).step_by(2).enumerate() {
        let id = format!("step-{}", index + 2);
        let checked = if page.contains(phrase) {
            step(
                &id,
                &format!("shows {phrase}"),
                "selenese",
                json!({
                    "commands": [{"command": "assertVisible", "target": format!("text={phrase}"), "value": ""}]
                }),
            )
        } else {
            step(
                &id,
                &format!("judge {phrase}"),
                "agentic_assertion",
                json!({
                    "instruction": "Look at the page.",
                    "criteria": format!("the page shows \"{phrase}\"")
                }),
            )
        };
        steps.push(checked);
    }
    if invalid {
        steps.push(step("step-broken", "broken", "selenese", json!({})));
    }
    let words: Vec<&str> = requirements.split_whitespace().take(5).collect();
    json!({
        "name": format!("Plan: {}", words.join(" ")),
        "summary": format!("Scripted from the requirements. {proof}"),
        "steps": steps,
    })
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

    #[test]
    fn phrases_on_the_page_are_scripted_the_others_judged() {
        let plan = plan(PROMPT, "proof");
        let steps = plan["steps"].as_array().unwrap();
        assert_eq!(steps.len(), 3);
        assert_eq!(steps[1]["commands"][0]["target"], "text=Sign in");
        assert_eq!(steps[2]["type"], "agentic_assertion");
        assert_eq!(steps[2]["criteria"], "the page shows \"Welcome\"");
        assert!(plan["summary"].as_str().unwrap().ends_with("proof"));
    }

    #[test]
    fn the_markers_give_an_invalid_plan_until_errors_come_back() {
        let first = PROMPT.replace("The page says", "[invalid first] The page says");
        assert_eq!(
            plan(&first, "").as_object().unwrap()["steps"]
                .as_array()
                .unwrap()
                .len(),
            4
        );
        let retried = format!("{first}Validation errors:\n- step 4: no commands\n");
        assert_eq!(plan(&retried, "")["steps"].as_array().unwrap().len(), 3);
        let always = format!(
            "{}Validation errors:\n",
            PROMPT.replace("The page", "[always invalid] The page")
        );
        assert_eq!(plan(&always, "")["steps"].as_array().unwrap().len(), 4);
        assert!(asks_for_plan(
            &json!({"properties": {"steps": {"items": {"properties": {"commands": {}}}}}})
        ));
        assert!(!asks_for_plan(&json!({"properties": {"passed": {}}})));
    }
}
