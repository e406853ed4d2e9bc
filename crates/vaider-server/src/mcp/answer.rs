//! The one shape of every tool result, so that an agent loses nothing whichever part of it
//! its client passes on: some clients hand their model only the text blocks (Gemini CLI,
//! Claude Code), others only `structuredContent` (Codex). The first text block holds the
//! sentences for reading; `structuredContent` is the JSON with the same sentences as its
//! `summary`; a second text block carries that JSON (without `summary`, already above) for
//! text-only clients, as the MCP spec asks of a tool with structured output.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

/// The field of `structuredContent` that repeats the text block's sentences.
pub(super) const SUMMARY: &str = "summary";

/// A successful (or failed, with `is_error`) result: `text` for reading, `structured` as
/// `structuredContent` with `summary` set to `summary`. `text` is `summary` for most tools;
/// an analysis's text also holds its description and verdicts, which are fields already.
pub(super) fn answer(
    text: String,
    summary: String,
    structured: Value,
    is_error: bool,
) -> CallToolResult {
    let plain = structured.to_string();
    let mut structured = structured;
    if let Value::Object(fields) = &mut structured {
        fields.insert(SUMMARY.into(), Value::String(summary));
    }
    result(text, plain, structured, is_error)
}

/// A result whose sentence is made of its fields only (the AgentResult of contracts.md §2,
/// whose exact fields are the contract): the JSON as it is, with no `summary`.
pub(super) fn of_fields(sentence: String, structured: Value, is_error: bool) -> CallToolResult {
    let plain = structured.to_string();
    result(sentence, plain, structured, is_error)
}

/// The two text blocks (the sentences, the JSON as text) and `structuredContent`.
fn result(text: String, plain: String, structured: Value, is_error: bool) -> CallToolResult {
    let content = vec![ContentBlock::text(text), ContentBlock::text(plain)];
    let mut result = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = Some(structured);
    result
}

/// [`answer`] for a result whose text is its summary.
pub(super) fn said(summary: String, structured: Value, is_error: bool) -> CallToolResult {
    answer(summary.clone(), summary, structured, is_error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_sentences_are_in_both_parts_and_the_json_once_in_text() {
        let result = said("Phase 3 kept.".into(), json!({"success": true}), false);
        let texts: Vec<String> = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect();
        assert_eq!(texts, ["Phase 3 kept.", r#"{"success":true}"#]);
        assert_eq!(
            result.structured_content,
            Some(json!({"success": true, "summary": "Phase 3 kept."}))
        );
        assert_eq!(result.is_error, Some(false));
    }
}
