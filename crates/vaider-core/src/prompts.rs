//! The words Vaider sends to the model, per tool, and the JSON shape it asks back. Kept in one
//! place so every door and every provider asks the same thing, and a change of wording is one
//! edit (the version goes into the cache key).

use serde_json::{json, Map, Value};

use crate::analysis::{TaskOptions, Tool};

/// Bumped whenever the prompts change, so cached answers to old prompts are not reused.
pub const PROMPT_VERSION: u32 = 2;

pub const SYSTEM: &str =
    "You are Vaider, the eyes of an AI coding agent that cannot see the screen. \
The agent is building and testing a graphical user interface and will act on your words. \
Describe only what is visible; never guess what is not shown, and say so when something is unclear \
or too small to read. Quote visible text exactly, in double quotes. Be precise and concise.";

/// The actions a `browse_step` answer may name, as the schema lists them.
pub const BROWSE_ACTIONS: [&str; 7] = [
    "click", "type", "press", "scroll", "navigate", "done", "give_up",
];

/// Everything one call asks the model, worked out once per call: the prompt in force (the
/// agent's or the tool's default), the system prompt, and the answer's schema. Only the note on
/// how the media was sent is added later, when the media has been prepared.
#[derive(Debug, Clone)]
pub struct Prompts {
    tool: Tool,
    /// The agent's prompt, or the tool's default when it gave none.
    pub prompt: String,
    pub system: String,
    /// The JSON the model must answer with; none for a plain-text answer.
    pub schema: Option<Value>,
    options: TaskOptions,
    expectations: Vec<String>,
}

impl Prompts {
    pub fn new(
        tool: Tool,
        prompt: Option<&str>,
        options: &TaskOptions,
        expectations: &[String],
    ) -> Prompts {
        let prompt = prompt
            .filter(|p| !p.trim().is_empty())
            .unwrap_or_else(|| default_prompt(tool))
            .to_string();
        Prompts {
            tool,
            system: system(tool),
            schema: response_schema(tool, !expectations.is_empty()),
            prompt,
            options: options.clone(),
            expectations: expectations.to_vec(),
        }
    }

    /// The user prompt, with the note on how the media was sent (keyframes) when there is one.
    pub fn user(&self, media_note: Option<&str>) -> String {
        user_prompt(
            self.tool,
            &self.prompt,
            &self.options,
            media_note,
            &self.expectations,
        )
    }
}

/// The system prompt for a tool: the common one plus the tool's own task.
pub fn system(tool: Tool) -> String {
    let task = match tool {
        Tool::AnalyzeVideo | Tool::AnalyzeImage => return SYSTEM.to_string(),
        Tool::UiToArtifact => "Your task: turn a UI screenshot into an artifact a developer can use directly: code that reproduces it, a prompt that would generate it, a specification, or a description. Match layout, spacing, colours, typography and text exactly.",
        Tool::ExtractTextFromScreenshot => "Your task: transcribe all text in the image exactly, keeping line breaks, indentation and order. For code, keep it runnable: do not fix, reformat or complete it. Mark unreadable characters with [?].",
        Tool::DiagnoseErrorScreenshot => "Your task: read the error in the screenshot (message, code, stack trace, the element or line it points at), explain its most likely causes, and give concrete fixes, most likely first.",
        Tool::UnderstandTechnicalDiagram => "Your task: explain the technical diagram: its kind, every component with its role, and every connection with its direction and label, then what the diagram as a whole says.",
        Tool::AnalyzeDataVisualization => "Your task: read the chart or dashboard: its type, axes, units and legend, the values you can read, and the trends, outliers and comparisons that matter. Give numbers as read; say when a value is estimated.",
        Tool::VisualCompare => "Your task: explain what changed between two screenshots of the same UI, BEFORE (the first image) and AFTER (the second), where a pixel diff boxed and numbered every changed region on AFTER. For each numbered region say what changed in plain words (moved, resized, recoloured, text changed, appeared, disappeared; with sizes in pixels where you can tell). Then match the changes the developer expected against what you found: an expected change is matched only when you see it. Every change nobody expected is unexpected: its severity is error when something is broken, missing or wrong, warning when it is visible but may be harmless, info when it is cosmetic. Name regions as \"region N\".",
        Tool::JudgePage => "Your task: you are a QA tester judging a web page against criteria, from its screenshot and its visible text (given in the prompt). `passed` is true only when everything the criteria ask for is visibly true on this page; otherwise false. In `reasoning` say what you see that decides it, quoting the page's text exactly. `confidence` is how sure you are, from 0 to 1.",
        Tool::GeneratePlan => "Your task: you are a QA engineer writing a test plan for a web app from plain-English requirements. You see the app's first page (its screenshot, and its visible text and elements in the prompt) and context from its code base. Write steps that check each requirement, in the order a user would do them. Step types: `selenese` (commands open, click, type, waitForElement, assertText, assertVisible; `target` is a CSS selector, or text=Label, or role=button[name=\"Sign in\"]; `open` takes a path such as / ; `value` is what to type or the text expected), `unit_assertion` (equals, contains, matches, exists, visible on a selector's text, or its `property` such as value or disabled; `expected` as text: true/false for exists and visible), `agentic_assertion` (a judgement of the page by a vision model: `instruction` and `criteria`), `agentic_browsing` (an `instruction` a browsing agent carries out, and the `expectedOutcome`). Prefer selectors the page and code really have (ids, data-testid, labels); prefer scripted steps, and use agentic ones for what selectors cannot check. Give every step a short unique `id` (step-1, step-2, ...) and a `name`; fill the fields its type does not use with \"\" or []. A plan needs at least one step.",
        Tool::BrowseStep => "Your task: you are a QA tester using a web app in a browser to carry out an instruction, one action at a time. You see the page's screenshot and a list of its elements, each with a ref number: `[3] button \"Sign in\"`. Name the ONE next action: `click` an element (its ref), `type` text into a field (its ref; the field is cleared first), `press` a key (`text`: Enter, Tab, Escape, ArrowDown... or one character), `scroll` the page (`text`: up or down), `navigate` to a URL or a path (`text`), `done` when the instruction has been carried out, or `give_up` when it cannot be (say why). `ref` is the element's number from the list, \"\" when the action needs none. Act only on elements in the list; never repeat an action that already failed. In `reasoning` say in one sentence what you see and why this action.",
        Tool::UiDiffCheck => "Your task: compare two screenshots of the same UI, EXPECTED (the first image) and ACTUAL (the second). List every visible difference: layout, position, size, colour, text, missing or extra elements. For each, say where, how severe (high: broken or wrong content; medium: clearly visible; low: cosmetic), and how to fix it. Ignore differences in dynamic content such as clocks only when asked.",
    };
    format!("{SYSTEM}\n\n{task}")
}

/// The prompt used when the agent gives none.
pub fn default_prompt(tool: Tool) -> &'static str {
    match tool {
        Tool::AnalyzeVideo => "Describe, step by step, what happens on screen in this recording of a GUI test. \
For each step give the timestamp (mm:ss), what the user did (clicks, typing, navigation) and how the \
screen responded: pages, dialogs, messages, errors, loading states, animations. \
End with one line describing the final state of the screen.",
        Tool::AnalyzeImage => "Describe this screenshot of a GUI: its layout, the visible text (quoted exactly), \
the controls and their states, and any errors, warnings or visual defects.",
        Tool::UiToArtifact => "Turn this UI into the requested artifact.",
        Tool::ExtractTextFromScreenshot => "Extract all the text in this image.",
        Tool::DiagnoseErrorScreenshot => "What is this error, why did it happen, and how do I fix it?",
        Tool::UnderstandTechnicalDiagram => "Explain this diagram.",
        Tool::AnalyzeDataVisualization => "What does this chart show? Give the key findings.",
        Tool::UiDiffCheck => "Compare the expected and the actual UI and list every difference.",
        Tool::VisualCompare => "Explain what changed in each numbered region, and which expected changes you see.",
        Tool::JudgePage => "Does this page meet the criteria?",
        Tool::GeneratePlan => "Write a test plan for these requirements.",
        Tool::BrowseStep => "What is the next action?",
    }
}

/// The user prompt: the agent's words, the tool's options, a note on how the media was sent,
/// and the expectations to check.
pub fn user_prompt(
    tool: Tool,
    prompt: &str,
    options: &TaskOptions,
    media_note: Option<&str>,
    expectations: &[String],
) -> String {
    let mut text = prompt.trim().to_string();
    let mut add = |label: &str, value: &Option<String>| {
        if let Some(value) = value.as_deref().map(str::trim).filter(|v| !v.is_empty()) {
            text.push_str(&format!("\n{label}: {value}"));
        }
    };
    match tool {
        Tool::UiToArtifact => {
            let kind = options
                .output_type
                .clone()
                .unwrap_or_else(|| "code".to_string());
            add(
                "Artifact to produce (code, prompt, spec or description)",
                &Some(kind),
            );
        }
        Tool::ExtractTextFromScreenshot => add(
            "Programming language of any code",
            &options.programming_language,
        ),
        Tool::DiagnoseErrorScreenshot => add("What the user was doing", &options.context),
        Tool::UnderstandTechnicalDiagram => add("Diagram type", &options.diagram_type),
        Tool::AnalyzeDataVisualization => add("Focus on", &options.analysis_focus),
        Tool::UiDiffCheck => text.push_str("\nThe first image is EXPECTED, the second ACTUAL."),
        Tool::VisualCompare => text.push_str(
            "\nThe first image is BEFORE, the second AFTER with the changed regions boxed and numbered.",
        ),
        Tool::AnalyzeVideo
        | Tool::AnalyzeImage
        | Tool::JudgePage
        | Tool::GeneratePlan
        | Tool::BrowseStep => {}
    }
    if let Some(note) = media_note {
        text.push_str(&format!("\n\n{note}"));
    }
    if !expectations.is_empty() {
        let list: String = expectations
            .iter()
            .enumerate()
            .map(|(i, e)| format!("{}. {e}\n", i + 1))
            .collect();
        text.push_str(&format!(
            "\n\nThen check each of these expectations against what is on screen:\n{list}\
For each expectation, in the same order, give `expectation` (copied verbatim), `verdict` (\"met\", \"not_met\" or \
\"unclear\") and `evidence` (what on screen supports the verdict, with timestamps for a video)."
        ));
    }
    if response_schema(tool, !expectations.is_empty()).is_some() {
        text.push_str(
            "\n\nAnswer in JSON as the schema asks; `description` holds the readable answer.",
        );
    }
    text
}

/// The tool's own structured fields, beside `description`.
fn task_properties(tool: Tool) -> Option<Value> {
    let strings = json!({"type": "array", "items": {"type": "string"}});
    Some(match tool {
        Tool::AnalyzeVideo | Tool::AnalyzeImage => return None,
        Tool::UiToArtifact => json!({
            "output_type": {"type": "string", "enum": ["code", "prompt", "spec", "description"]},
            "artifact": {"type": "string"}
        }),
        Tool::ExtractTextFromScreenshot => json!({
            "text": {"type": "string"},
            "language": {"type": "string"}
        }),
        Tool::DiagnoseErrorScreenshot => json!({
            "error_message": {"type": "string"},
            "likely_causes": strings,
            "suggested_fixes": strings
        }),
        Tool::UnderstandTechnicalDiagram => json!({
            "diagram_type": {"type": "string"},
            "components": object_array(&[("name", "string"), ("role", "string")]),
            "connections": object_array(&[("from", "string"), ("to", "string"), ("label", "string")])
        }),
        Tool::AnalyzeDataVisualization => json!({
            "chart_type": {"type": "string"},
            "key_findings": strings,
            "data_points": object_array(&[("label", "string"), ("value", "string")])
        }),
        Tool::JudgePage => json!({
            "passed": {"type": "boolean"},
            "reasoning": {"type": "string"},
            "confidence": {"type": "number"}
        }),
        Tool::GeneratePlan => plan_properties(),
        Tool::BrowseStep => json!({
            "action": {"type": "string", "enum": BROWSE_ACTIONS},
            "ref": {"type": "string"},
            "text": {"type": "string"},
            "reasoning": {"type": "string"}
        }),
        Tool::VisualCompare => json!({
            "summary": {"type": "string"},
            "found_changes": object_array(&[("region", "string"), ("change", "string")]),
            "unexpected_changes": {
                "type": "array",
                "items": strict_object(json!({
                    "region": {"type": "string"},
                    "change": {"type": "string"},
                    "severity": {"type": "string", "enum": ["info", "warning", "error"]}
                }))
            },
            "expected_matched": strings,
            "expected_missed": strings
        }),
        Tool::UiDiffCheck => json!({
            "matches": {"type": "boolean"},
            "differences": {
                "type": "array",
                "items": strict_object(json!({
                    "region": {"type": "string"},
                    "description": {"type": "string"},
                    "severity": {"type": "string", "enum": ["high", "medium", "low"]},
                    "suggested_fix": {"type": "string"}
                }))
            }
        }),
    })
}

/// A plan's fields, each step flat (every type's fields present; the unused ones empty):
/// the schema subset every provider accepts has no tagged unions. The plan is checked against
/// the real step shapes after it arrives.
fn plan_properties() -> Value {
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

fn object_array(fields: &[(&str, &str)]) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|(name, kind)| (name.to_string(), json!({"type": kind})))
        .collect();
    json!({"type": "array", "items": strict_object(Value::Object(properties))})
}

/// An object whose every property is required and no other allowed: what OpenAI's strict
/// structured outputs demand, and harmless for the other providers.
fn strict_object(properties: Value) -> Value {
    let required: Vec<Value> = properties
        .as_object()
        .map(|p| p.keys().map(|k| json!(k)).collect())
        .unwrap_or_default();
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// The JSON the model must answer with, or None for a plain-text answer.
pub fn response_schema(tool: Tool, with_expectations: bool) -> Option<Value> {
    let task = task_properties(tool);
    if task.is_none() && !with_expectations {
        return None;
    }
    let mut properties = Map::new();
    properties.insert("description".into(), json!({"type": "string"}));
    if let Some(Value::Object(task)) = task {
        properties.extend(task);
    }
    if with_expectations {
        properties.insert(
            "expectations".into(),
            json!({"type": "array", "items": strict_object(json!({
                "expectation": {"type": "string"},
                "verdict": {"type": "string", "enum": ["met", "not_met", "unclear"]},
                "evidence": {"type": "string"}
            }))}),
        );
    }
    Some(strict_object(Value::Object(properties)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_its_own_task_and_schema_where_the_answer_has_structure() {
        for tool in Tool::ALL {
            assert!(system(tool).starts_with(SYSTEM));
            assert!(!default_prompt(tool).is_empty());
        }
        assert!(response_schema(Tool::AnalyzeVideo, false).is_none());
        let diff = response_schema(Tool::UiDiffCheck, false).unwrap();
        let severity = &diff["properties"]["differences"]["items"]["properties"]["severity"];
        assert_eq!(severity["enum"], json!(["high", "medium", "low"]));
        let both = response_schema(Tool::UiDiffCheck, true).unwrap();
        assert!(both["required"]
            .as_array()
            .unwrap()
            .contains(&json!("expectations")));
        assert_eq!(both["additionalProperties"], false);
        let browse = response_schema(Tool::BrowseStep, false).unwrap();
        assert_eq!(browse["properties"]["action"]["enum"][6], "give_up");
        for field in ["description", "action", "ref", "text", "reasoning"] {
            assert!(browse["required"]
                .as_array()
                .unwrap()
                .contains(&json!(field)));
        }
        assert_eq!(browse["additionalProperties"], false);
    }

    #[test]
    fn options_and_expectations_reach_the_prompt() {
        let options = TaskOptions {
            programming_language: Some("rust".into()),
            ..Default::default()
        };
        let text = user_prompt(
            Tool::ExtractTextFromScreenshot,
            "Read it",
            &options,
            Some("Frames follow."),
            &["a title is shown".into()],
        );
        assert!(text.contains("Programming language of any code: rust"));
        assert!(text.contains("Frames follow."));
        assert!(text.contains("1. a title is shown"));
    }
}
