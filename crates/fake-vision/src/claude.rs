//! Claude's rules on sampling and thinking, by model version, as Anthropic documents them and
//! its API answers them (the same on Bedrock, whose Converse hands them to the model):
//! - Claude 4.7 and later (and the unnumbered names, all newer) refuse `temperature`,
//!   `top_p` and `top_k`: "`temperature` is deprecated for this model.";
//! - they think adaptively only: `thinking.type: "enabled"` is refused;
//! - adaptive thinking came with Claude 4.6: earlier models take `enabled` with a
//!   `budget_tokens` of at least 1024 and below `max_tokens`;
//! - with thinking on, the temperature may only be 1;
//! - `output_config.effort` is low, medium, high, xhigh or max.

use serde_json::{Map, Value};

/// A Claude model's version, from its id (`claude-opus-4-7`, `claude-3-5-sonnet-20241022`,
/// `us.anthropic.claude-sonnet-4-5-20250929-v1:0`, `claude-opus-4-20250514` is 4.0). None
/// for a name without a number (`claude-mythos-preview`).
pub(crate) fn version(model: &str) -> Option<(u32, u32)> {
    let model = model.to_ascii_lowercase();
    let rest = &model[model.find("claude-")? + "claude-".len()..];
    let small = |p: &str| {
        (!p.is_empty() && p.len() <= 2 && p.bytes().all(|b| b.is_ascii_digit()))
            .then(|| p.parse::<u32>().ok())
            .flatten()
    };
    let mut parts = rest.split(['-', '.', '@', ':']);
    let major = parts.by_ref().find_map(small)?;
    let minor = parts.next().and_then(small).unwrap_or(0);
    Some((major, minor))
}

/// Claude 4.7 and later: no sampling parameters, adaptive thinking only.
pub(crate) fn current(model: &str) -> bool {
    version(model).is_none_or(|v| v >= (4, 7))
}

/// A broken rule, in Anthropic's words.
pub(crate) struct Refusal(pub String);

/// The sampling parameters a Claude 4.7+ model refuses, the first one given.
pub(crate) fn refused_sampling(model: &str, fields: &Map<String, Value>) -> Option<Refusal> {
    if !current(model) {
        return None;
    }
    ["temperature", "top_p", "top_k"]
        .into_iter()
        .find(|name| fields.get(*name).is_some_and(|v| !v.is_null()))
        .map(|name| Refusal(format!("`{name}` is deprecated for this model.")))
}

/// `thinking` and `output_config` against the model and the request's `max_tokens`.
pub(crate) fn check_thinking(
    model: &str,
    fields: &Map<String, Value>,
    max_tokens: u64,
) -> Result<(), Refusal> {
    check_effort(fields)?;
    let Some(thinking) = fields.get("thinking").filter(|v| !v.is_null()) else {
        return Ok(());
    };
    let kind = thinking.get("type").and_then(Value::as_str).unwrap_or("");
    match kind {
        "disabled" => return Ok(()),
        "enabled" => check_budget(model, thinking, max_tokens)?,
        "adaptive" if version(model).is_some_and(|v| v < (4, 6)) => {
            return Err(Refusal(
                "thinking.type: adaptive thinking is not supported on this model; use \
                 \"enabled\" with budget_tokens"
                    .into(),
            ))
        }
        "adaptive" => {}
        other => {
            return Err(Refusal(format!(
                "thinking: Input tag '{other}' found using 'type' does not match any of the \
                 expected tags: 'enabled', 'disabled', 'adaptive'"
            )))
        }
    }
    match fields.get("temperature").and_then(Value::as_f64) {
        Some(t) if t != 1.0 => Err(Refusal(
            "`temperature` may only be set to 1 when thinking is enabled. Please consult our \
             documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking"
                .into(),
        )),
        _ => Ok(()),
    }
}

/// Manual thinking: refused from 4.7 on; a budget of at least 1024, below `max_tokens`.
fn check_budget(model: &str, thinking: &Value, max_tokens: u64) -> Result<(), Refusal> {
    if current(model) {
        return Err(Refusal(
            "\"thinking.type.enabled\" is not supported for this model. Use \
             \"thinking.type.adaptive\" and \"output_config.effort\" to control thinking \
             behavior."
                .into(),
        ));
    }
    let budget = thinking.get("budget_tokens").and_then(Value::as_u64);
    match budget {
        None => Err(Refusal(
            "thinking.enabled.budget_tokens: Field required".into(),
        )),
        Some(b) if b < 1024 => Err(Refusal(
            "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024".into(),
        )),
        Some(b) if b >= max_tokens => Err(Refusal(
            "`max_tokens` must be greater than `thinking.budget_tokens`.".into(),
        )),
        Some(_) => Ok(()),
    }
}

/// `output_config.effort`, when given.
fn check_effort(fields: &Map<String, Value>) -> Result<(), Refusal> {
    let Some(effort) = fields.get("output_config").and_then(|c| c.get("effort")) else {
        return Ok(());
    };
    match effort.as_str() {
        Some("low" | "medium" | "high" | "xhigh" | "max") => Ok(()),
        _ => Err(Refusal(
            "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'"
                .into(),
        )),
    }
}

/// Whether the request asked the model to think (its answer then starts with a thinking
/// block).
pub(crate) fn thinks(model: &str, fields: &Map<String, Value>) -> bool {
    match fields
        .get("thinking")
        .and_then(|t| t.get("type"))
        .and_then(Value::as_str)
    {
        Some("enabled" | "adaptive") => true,
        Some(_) => false,
        // Claude Opus 5 thinks adaptively when not told otherwise.
        None => version(model).is_some_and(|v| v >= (5, 0)) && model.contains("opus"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fields(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn versions_and_rules() {
        assert_eq!(version("claude-opus-4-7"), Some((4, 7)));
        assert_eq!(version("claude-3-5-sonnet-20241022"), Some((3, 5)));
        assert_eq!(version("claude-opus-4-20250514"), Some((4, 0)));
        assert_eq!(
            version("us.anthropic.claude-sonnet-4-5-20250929-v1:0"),
            Some((4, 5))
        );
        assert_eq!(version("claude-mythos-preview"), None);
        let t = fields(json!({"temperature": 0.2}));
        assert!(refused_sampling("claude-opus-4-7", &t).is_some());
        assert!(refused_sampling("claude-sonnet-4-6", &t).is_none());
        let adaptive = fields(json!({"thinking": {"type": "adaptive"}, "temperature": 0.2}));
        assert!(check_thinking("claude-sonnet-4-6", &adaptive, 16000).is_err());
        let adaptive = fields(json!({"thinking": {"type": "adaptive"}}));
        assert!(check_thinking("claude-sonnet-4-6", &adaptive, 16000).is_ok());
        assert!(check_thinking("claude-sonnet-4-5", &adaptive, 16000).is_err());
        let manual = fields(json!({"thinking": {"type": "enabled", "budget_tokens": 2048}}));
        assert!(check_thinking("claude-sonnet-4-5", &manual, 4096).is_ok());
        assert!(check_thinking("claude-sonnet-4-5", &manual, 2048).is_err());
        assert!(check_thinking("claude-opus-4-7", &manual, 16000).is_err());
    }
}
