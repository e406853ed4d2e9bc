//! Each model family's request rules, as Google states them. What the real service refuses
//! (a thinking level on a model before Gemini 3, a level the model does not have) is refused
//! in `generate/config.rs` with Google's 400. What it accepts but advises against (a lowered
//! temperature or a thinking budget on Gemini 3) is noted here, so a test can check that a
//! client asks each family as its guidance says ([`crate::FakeGemini::guidance_notes`]).

use serde_json::Value;

use crate::router::field;

/// Gemini 3 and later: thinking levels, and the default temperature of 1.0.
pub(crate) fn gemini_3(model: &str) -> bool {
    let model = model.strip_prefix("models/").unwrap_or(model);
    model
        .strip_prefix("gemini-")
        .and_then(|rest| {
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse::<u32>().ok()
        })
        .is_some_and(|major| major >= 3)
}

/// The thinking levels a Gemini 3 model takes: Gemini 3.8 Flash and the Pro models have no
/// `minimal` (both answer "Thinking level MINIMAL is not supported for this model.").
pub(crate) fn supports_level(model: &str, level: &str) -> bool {
    match level {
        "minimal" => !(model.contains("gemini-3.8-flash") || model.contains("-pro")),
        _ => true,
    }
}

/// Where a generateContent body departs from its model family's guidance, in words a test
/// failure can show; empty when it follows it.
pub(crate) fn notes(model: &str, body: &Value) -> Vec<String> {
    if !gemini_3(model) {
        return Vec::new();
    }
    let Some(gc) = body
        .as_object()
        .and_then(|b| field(b, "generationConfig"))
        .and_then(Value::as_object)
    else {
        return vec![format!(
            "{model}: no thinking level (generationConfig is missing)"
        )];
    };
    let mut notes = Vec::new();
    if let Some(t) = field(gc, "temperature").and_then(Value::as_f64) {
        if t < 1.0 {
            notes.push(format!(
                "{model}: temperature {t}; Google advises keeping Gemini 3 at its default 1.0 \
                 (lower values can make it loop or reason worse)"
            ));
        }
    }
    let thinking = field(gc, "thinkingConfig").and_then(Value::as_object);
    if thinking.is_some_and(|tc| field(tc, "thinkingBudget").is_some()) {
        notes.push(format!(
            "{model}: thinkingBudget; Gemini 3 is asked with thinkingLevel"
        ));
    }
    if thinking.is_none_or(|tc| field(tc, "thinkingLevel").is_none()) {
        notes.push(format!("{model}: no thinkingLevel"));
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn gemini_3_requests_are_held_to_its_guidance() {
        let good = json!({"generationConfig": {"thinkingConfig": {"thinkingLevel": "high"}}});
        assert!(notes("gemini-3.5-flash", &good).is_empty());
        let old_habits = json!({"generation_config": {"temperature": 0.2}});
        let said = notes("gemini-3.5-flash", &old_habits);
        assert_eq!(said.len(), 2, "{said:?}");
        assert!(said[0].contains("temperature 0.2"), "{said:?}");
        // Gemini 2.x keeps its old knobs.
        assert!(notes("gemini-2.5-flash-lite", &old_habits).is_empty());
        assert!(supports_level("gemini-3.5-flash", "minimal"));
        assert!(!supports_level("gemini-3.8-flash", "minimal"));
        assert!(!supports_level("gemini-3.1-pro-preview", "minimal"));
        assert!(supports_level("gemini-3.1-pro-preview", "medium"));
    }
}
