//! The words Vaider sends to the model. Kept in one place so every door asks the same thing
//! and a change of wording is one edit (the version goes into the cache key).

use serde_json::{json, Value};

use crate::analysis::Tool;

/// Bumped whenever the prompts change, so cached answers to old prompts are not reused.
pub const PROMPT_VERSION: u32 = 1;

pub const SYSTEM: &str =
    "You are Vaider, the eyes of an AI coding agent that cannot see the screen. \
The agent is building and testing a graphical user interface and will act on your words. \
Describe only what is visible; never guess what is not shown, and say so when something is unclear \
or too small to read. Quote visible text exactly, in double quotes. Be precise and concise.";

pub fn default_prompt(tool: Tool) -> &'static str {
    match tool {
        Tool::AnalyzeVideo => "Describe, step by step, what happens on screen in this recording of a GUI test. \
For each step give the timestamp (mm:ss), what the user did (clicks, typing, navigation) and how the \
screen responded: pages, dialogs, messages, errors, loading states, animations. \
End with one line describing the final state of the screen.",
        Tool::AnalyzeImage => "Describe this screenshot of a GUI: its layout, the visible text (quoted exactly), \
the controls and their states, and any errors, warnings or visual defects.",
    }
}

/// The user prompt, with the expectations to check appended when there are any.
pub fn user_prompt(prompt: &str, expectations: &[String]) -> String {
    if expectations.is_empty() {
        return prompt.to_string();
    }
    let list: String = expectations
        .iter()
        .enumerate()
        .map(|(i, e)| format!("{}. {e}\n", i + 1))
        .collect();
    format!(
        "{prompt}\n\nThen check each of these expectations against what is on screen:\n{list}\n\
Answer in JSON: `description` holds the description asked for above; `expectations` holds one entry per \
expectation, in the same order, with `expectation` (copied verbatim), `verdict` (\"met\", \"not_met\" or \
\"unclear\") and `evidence` (what on screen supports the verdict, with timestamps for a video)."
    )
}

/// The JSON the model must answer with when expectations are given.
pub fn expectations_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "description": {"type": "string"},
            "expectations": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "expectation": {"type": "string"},
                        "verdict": {"type": "string", "enum": ["met", "not_met", "unclear"]},
                        "evidence": {"type": "string"}
                    },
                    "required": ["expectation", "verdict", "evidence"]
                }
            }
        },
        "required": ["description", "expectations"]
    })
}
