//! The words every task sends to the model, whichever capability defines it: the common
//! system prompt, the user prompt built from the caller's words, the task's option lines, the
//! note on how the media was sent and the expectations to check, and the JSON shape asked back.
//! The tasks' own words live with their capabilities (see `task`); a change of wording here is
//! one edit (the version goes into the cache key).

use serde_json::{json, Map, Value};

use crate::analysis::TaskOptions;
use crate::task::Tool;

/// Bumped whenever the prompts change, so cached answers to old prompts are not reused.
pub const PROMPT_VERSION: u32 = 2;

pub const SYSTEM: &str =
    "You are Vaider, the eyes of an AI coding agent that cannot see the screen. \
The agent is building and testing a graphical user interface and will act on your words. \
Describe only what is visible; never guess what is not shown, and say so when something is unclear \
or too small to read. Quote visible text exactly, in double quotes. Be precise and concise.";

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
            .unwrap_or(tool.task().default_prompt)
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

/// The system prompt for a task: the common one plus the task's own.
pub fn system(tool: Tool) -> String {
    match tool.task().system {
        Some(task) => format!("{SYSTEM}\n\n{task}"),
        None => SYSTEM.to_string(),
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
    if let Some(note) = (tool.task().options_note)(options) {
        text.push_str(&format!("\n{note}"));
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

/// An array of objects with these fields, each a JSON type.
pub fn object_array(fields: &[(&str, &str)]) -> Value {
    let properties: Map<String, Value> = fields
        .iter()
        .map(|(name, kind)| (name.to_string(), json!({"type": kind})))
        .collect();
    json!({"type": "array", "items": strict_object(Value::Object(properties))})
}

/// An object whose every property is required and no other allowed: what OpenAI's strict
/// structured outputs demand, and harmless for the other providers.
pub fn strict_object(properties: Value) -> Value {
    let required: Vec<Value> = properties
        .as_object()
        .map(|p| p.keys().map(|k| json!(k)).collect())
        .unwrap_or_default();
    json!({"type": "object", "properties": properties, "required": required, "additionalProperties": false})
}

/// The JSON the model must answer with, or None for a plain-text answer.
pub fn response_schema(tool: Tool, with_expectations: bool) -> Option<Value> {
    let task = tool.task().answer.map(|answer| answer());
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
    use crate::analysis::tools;

    #[test]
    fn every_tool_has_its_own_task_and_schema_where_the_answer_has_structure() {
        for tool in tools::ALL {
            assert!(system(tool).starts_with(SYSTEM));
            assert!(!tool.task().default_prompt.is_empty());
        }
        assert!(response_schema(tools::ANALYZE_VIDEO, false).is_none());
        let diff = response_schema(tools::UI_DIFF_CHECK, false).unwrap();
        let severity = &diff["properties"]["differences"]["items"]["properties"]["severity"];
        assert_eq!(severity["enum"], json!(["high", "medium", "low"]));
        let both = response_schema(tools::UI_DIFF_CHECK, true).unwrap();
        assert!(both["required"]
            .as_array()
            .unwrap()
            .contains(&json!("expectations")));
        assert_eq!(both["additionalProperties"], false);
    }

    #[test]
    fn options_and_expectations_reach_the_prompt() {
        let options = TaskOptions {
            programming_language: Some("rust".into()),
            ..Default::default()
        };
        let text = user_prompt(
            tools::EXTRACT_TEXT_FROM_SCREENSHOT,
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
