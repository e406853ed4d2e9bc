//! Redaction of secrets out of what Vaider keeps: a value typed into a password field during
//! agentic browsing, a plan's secret values. A caller that knows what is secret in a model's
//! answer (only it can tell, from the page it showed) hands the pipeline a [`Redactor`]; the
//! pipeline records the answer with every secret replaced by [`REDACTED`] (response.json, the
//! history row) and still returns the whole answer to the caller, who needs it to act.

use std::sync::Arc;

use serde_json::Value;

/// What a secret is replaced with wherever it is kept or shown.
pub const REDACTED: &str = "[redacted]";

/// Finds the secrets in a model's answer (its `details`).
type Finder = dyn Fn(Option<&Value>) -> Vec<String> + Send + Sync;

/// A request's way of naming the secrets in its answer. The default finds none.
#[derive(Clone, Default)]
pub struct Redactor(Option<Arc<Finder>>);

impl Redactor {
    pub fn new(find: impl Fn(Option<&Value>) -> Vec<String> + Send + Sync + 'static) -> Self {
        Redactor(Some(Arc::new(find)))
    }

    /// The secrets in `details`, longest first (so a secret inside another goes with it);
    /// empty strings are not secrets.
    pub fn secrets(&self, details: Option<&Value>) -> Vec<String> {
        let mut found: Vec<String> = match &self.0 {
            Some(find) => find(details),
            None => Vec::new(),
        };
        found.retain(|s| !s.is_empty());
        found.sort_by_key(|s| std::cmp::Reverse(s.len()));
        found.dedup();
        found
    }
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self.0 {
            Some(_) => "Redactor(..)",
            None => "Redactor(none)",
        })
    }
}

/// `text` with every secret replaced, as written and as escaped inside JSON text (a model's
/// answer is JSON inside the provider's JSON).
pub fn text(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_string();
    for secret in secrets {
        out = out.replace(secret.as_str(), REDACTED);
        let escaped = serde_json::to_string(secret).unwrap_or_default();
        let escaped = escaped.trim_matches('"');
        if escaped != secret {
            out = out.replace(escaped, REDACTED);
        }
    }
    out
}

/// `value` with every secret replaced in every string, keys included.
pub fn json(value: &Value, secrets: &[String]) -> Value {
    match value {
        Value::String(s) => Value::String(text(s, secrets)),
        Value::Array(items) => Value::Array(items.iter().map(|v| json(v, secrets)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (text(k, secrets), json(v, secrets)))
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Any serialisable record with its secrets replaced (a record that does not round-trip keeps
/// only what could be redacted: it is never written with the secret).
pub fn record<T>(value: &T, secrets: &[String]) -> Option<T>
where
    T: serde::Serialize + serde::de::DeserializeOwned,
{
    let plain = serde_json::to_value(value).ok()?;
    serde_json::from_value(json(&plain, secrets)).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_secret_goes_from_strings_keys_and_json_inside_strings() {
        let secrets = vec!["pa\"ss".to_string()];
        let answer = serde_json::json!({
            "text": r#"{"action":"type","text":"pa\"ss"}"#,
            "pa\"ss": ["said pa\"ss twice: pa\"ss"],
            "n": 3
        });
        let out = json(&answer, &secrets).to_string();
        assert!(
            !out.contains("pa\\\"ss") && !out.contains("pa\"ss"),
            "{out}"
        );
        assert_eq!(out.matches(REDACTED).count(), 4, "{out}");
    }

    #[test]
    fn no_redactor_finds_nothing_and_empty_values_are_no_secret() {
        assert!(Redactor::default().secrets(None).is_empty());
        let r = Redactor::new(|_| vec![String::new(), "ab".into(), "abc".into(), "ab".into()]);
        assert_eq!(r.secrets(None), ["abc", "ab"]);
    }
}
