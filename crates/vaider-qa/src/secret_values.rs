//! A plan's secret values (a test account's password): the plan names where each is read,
//! an environment variable or an entry of the OS keychain, never the value itself, and its
//! steps write `{{secret:NAME}}` where it goes. The value replaces the placeholder only at the
//! moment a step types it into the page, so the model, the prompts, the history and the run's
//! files see the placeholder; whatever a step reports is redacted once more before it is kept.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Where one secret value is read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretRef {
    /// The environment variable holding it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
    /// The OS keychain entry holding it (service `vaider`, this account name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keychain: Option<String>,
}

/// The values of a run, by placeholder. Debug never shows them.
#[derive(Default, Clone)]
pub struct PlanSecrets {
    values: Vec<(String, String)>,
}

impl std::fmt::Debug for PlanSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.values.iter().map(|(p, _)| p.as_str()).collect();
        write!(f, "PlanSecrets({names:?})")
    }
}

/// `{{secret:NAME}}`.
pub fn placeholder(name: &str) -> String {
    format!("{{{{secret:{name}}}}}")
}

impl PlanSecrets {
    /// Reads every value the plan names (blocking: the keychain). A value that cannot be read
    /// is an error naming the variable or entry, never a value.
    pub fn read(refs: &BTreeMap<String, SecretRef>) -> Result<PlanSecrets, String> {
        let mut values = Vec::new();
        for (name, from) in refs {
            let value = match (&from.env, &from.keychain) {
                (Some(var), _) => {
                    // A variable read for a secret never reaches a child process.
                    vaider_core::child_env::mark_secret(var);
                    std::env::var(var).ok().filter(|v| !v.is_empty()).ok_or_else(|| {
                        format!("the plan's secret {name} is read from the environment variable {var}, which is not set")
                    })?
                }
                (None, Some(entry)) => vaider_core::secrets::keychain_get(entry)
                    .map_err(|e| format!("the plan's secret {name}: {e}"))?
                    .map(|key| key.expose().to_string())
                    .ok_or_else(|| {
                        format!("the plan's secret {name} is read from the keychain entry {entry}, which is empty")
                    })?,
                (None, None) => {
                    return Err(format!(
                        "the plan's secret {name} names neither `env` nor `keychain`"
                    ))
                }
            };
            values.push((placeholder(name), value));
        }
        Ok(PlanSecrets { values })
    }

    /// `text` with each placeholder replaced by its value: only for what is typed into a page.
    pub fn fill(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (placeholder, value) in &self.values {
            out = out.replace(placeholder.as_str(), value);
        }
        out
    }

    /// `text` with each value replaced by [`vaider_core::redact::REDACTED`].
    pub fn redact(&self, text: &str) -> String {
        let values: Vec<String> = self.values.iter().map(|(_, v)| v.clone()).collect();
        vaider_core::redact::text(text, &values)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_fills_its_placeholder_and_is_redacted_everywhere_else() {
        std::env::set_var("QA_UNIT_SECRET", "s3cr3t-value");
        let refs = BTreeMap::from([(
            "PASSWORD".to_string(),
            SecretRef {
                env: Some("QA_UNIT_SECRET".into()),
                keychain: None,
            },
        )]);
        let secrets = PlanSecrets::read(&refs).unwrap();
        assert_eq!(secrets.fill("pw: {{secret:PASSWORD}}"), "pw: s3cr3t-value");
        assert_eq!(secrets.redact("typed s3cr3t-value"), "typed [redacted]");
        assert!(!format!("{secrets:?}").contains("s3cr3t"));
        assert!(!vaider_core::child_env::filter(
            [("QA_UNIT_SECRET".into(), "s3cr3t-value".into())].into_iter()
        )
        .iter()
        .any(|(n, _)| n == "QA_UNIT_SECRET"));
        let missing = BTreeMap::from([(
            "TOKEN".to_string(),
            SecretRef {
                env: Some("QA_UNIT_SECRET_UNSET".into()),
                keychain: None,
            },
        )]);
        let error = PlanSecrets::read(&missing).unwrap_err();
        assert!(error.contains("QA_UNIT_SECRET_UNSET"), "{error}");
    }
}
