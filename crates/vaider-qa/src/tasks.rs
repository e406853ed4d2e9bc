//! The QA capability's model tasks: judging a page against criteria (`agentic_assertion`),
//! writing a test plan (`generate_test_plan`) and choosing the next action of an
//! `agentic_browsing` step. Their words, answer shapes and media live here, not in the core.

use serde_json::{json, Value};
use vaider_core::prompts::strict_object;
use vaider_core::task::{no_options_note, Job, Task, TaskMedia, Tool};

/// Every QA task; registered with the core so the history can name them.
pub const ALL: [Tool; 3] = [JUDGE_PAGE, GENERATE_PLAN, BROWSE_STEP];

/// The actions a `browse_step` answer may name, as the schema lists them.
pub const BROWSE_ACTIONS: [&str; 7] = [
    "click", "type", "press", "scroll", "navigate", "done", "give_up",
];

pub const JUDGE_PAGE: Tool = Tool::new(&Task {
    name: "judge_page",
    media: TaskMedia::Image,
    job: Job::Judge,
    system: Some("Your task: you are a QA tester judging a web page against criteria, from its screenshot and its visible text (given in the prompt). `passed` is true only when everything the criteria ask for is visibly true on this page; otherwise false. In `reasoning` say what you see that decides it, quoting the page's text exactly. `confidence` is how sure you are, from 0 to 1."),
    default_prompt: "Does this page meet the criteria?",
    answer: Some(judge_answer),
    options_note: no_options_note,
    image_labels: &[],
    more_images_label: None,
});

pub const GENERATE_PLAN: Tool = Tool::new(&Task {
    name: "generate_test_plan",
    media: TaskMedia::Image,
    job: Job::Plan,
    system: Some("Your task: you are a QA engineer writing a test plan for a web app from plain-English requirements. You see the app's first page (its screenshot, and its visible text and elements in the prompt) and context from its code base. Write steps that check each requirement, in the order a user would do them. Step types: `selenese` (commands open, click, type, waitForElement, assertText, assertVisible; `target` is a CSS selector, or text=Label, or role=button[name=\"Sign in\"]; `open` takes a path such as / ; `value` is what to type or the text expected), `unit_assertion` (equals, contains, matches, exists, visible on a selector's text, or its `property` such as value or disabled; `expected` as text: true/false for exists and visible), `agentic_assertion` (a judgement of the page by a vision model: `instruction` and `criteria`), `agentic_browsing` (an `instruction` a browsing agent carries out, and the `expectedOutcome`). Prefer selectors the page and code really have (ids, data-testid, labels); prefer scripted steps, and use agentic ones for what selectors cannot check. Give every step a short unique `id` (step-1, step-2, ...) and a `name`; fill the fields its type does not use with \"\" or []. A plan needs at least one step."),
    default_prompt: "Write a test plan for these requirements.",
    answer: Some(plan_answer),
    options_note: no_options_note,
    image_labels: &[],
    more_images_label: None,
});

pub const BROWSE_STEP: Tool = Tool::new(&Task {
    name: "browse_step",
    media: TaskMedia::Image,
    job: Job::Browse,
    system: Some("Your task: you are a QA tester using a web app in a browser to carry out an instruction, one action at a time. You see the page's screenshot and a list of its elements, each with a ref number: `[3] button \"Sign in\"`. Name the ONE next action: `click` an element (its ref), `type` text into a field (its ref; the field is cleared first), `press` a key (`text`: Enter, Tab, Escape, ArrowDown... or one character), `scroll` the page (`text`: up or down), `navigate` to a URL or a path (`text`), `done` when the instruction has been carried out, or `give_up` when it cannot be (say why). `ref` is the element's number from the list, \"\" when the action needs none. Act only on elements in the list; never repeat an action that already failed. In `reasoning` say in one sentence what you see and why this action."),
    default_prompt: "What is the next action?",
    answer: Some(browse_answer),
    options_note: no_options_note,
    image_labels: &[],
    more_images_label: None,
});

fn judge_answer() -> Value {
    json!({
        "passed": {"type": "boolean"},
        "reasoning": {"type": "string"},
        "confidence": {"type": "number"}
    })
}

fn browse_answer() -> Value {
    json!({
        "action": {"type": "string", "enum": BROWSE_ACTIONS},
        "ref": {"type": "string"},
        "text": {"type": "string"},
        "reasoning": {"type": "string"}
    })
}

/// A plan's fields, each step flat (every type's fields present; the unused ones empty):
/// the schema subset every provider accepts has no tagged unions. The plan is checked against
/// the real step shapes after it arrives.
fn plan_answer() -> Value {
    let text = json!({"type": "string"});
    let command = strict_object(json!({
        "command": {"type": "string", "enum": ["open", "click", "type", "waitForElement", "assertText", "assertVisible"]},
        "target": text,
        "value": text
    }));
    let assertion = strict_object(json!({
        "type": {"type": "string", "enum": ["equals", "contains", "matches", "exists", "visible"]},
        "selector": text,
        "property": text,
        "expected": text
    }));
    let step = strict_object(json!({
        "id": text,
        "name": text,
        "type": {"type": "string", "enum": ["selenese", "unit_assertion", "agentic_assertion", "agentic_browsing"]},
        "commands": {"type": "array", "items": command},
        "assertions": {"type": "array", "items": assertion},
        "instruction": text,
        "criteria": text,
        "context": text,
        "expectedOutcome": text
    }));
    json!({
        "name": text,
        "summary": text,
        "steps": {"type": "array", "items": step}
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use vaider_core::prompts::response_schema;

    #[test]
    fn browse_answers_name_one_of_the_actions_and_every_field() {
        let browse = response_schema(BROWSE_STEP, false).unwrap();
        assert_eq!(browse["properties"]["action"]["enum"][6], "give_up");
        for field in ["description", "action", "ref", "text", "reasoning"] {
            assert!(browse["required"]
                .as_array()
                .unwrap()
                .contains(&json!(field)));
        }
        assert_eq!(browse["additionalProperties"], false);
    }
}
