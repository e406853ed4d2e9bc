//! A plan's secret values (a test account's password): the plan names where each is read, an
//! environment variable or an entry of the plan secrets' own keychain service, never the value
//! itself, and its steps write `{{secret:NAME}}` where it goes. The value replaces the
//! placeholder only at the moment a step types it into the page, so the model, the prompts,
//! the history and the run's files see the placeholder; whatever a step reports is redacted
//! once more before it is kept.
//!
//! A plan file may come from anywhere (a cloned repository), so what a secret may be is the
//! user's grant, not the plan's: never a credential of the machine (a provider key, Vaider's
//! token, a cloud account) whatever it is called, typed only into the origin it is bound to
//! (the plan's base origin unless the grant names another) and only into a password field or a
//! field the grant names. The grant itself is the plan's approval (`trust.rs`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Where one secret value is read, and where it may be typed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretRef {
    /// The environment variable holding it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub env: Option<String>,
    /// The OS keychain entry holding it (service `vaider-plan-secrets`, this account name;
    /// `vaider plan secret set NAME` stores one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub keychain: Option<String>,
    /// The one origin it may be typed into (`https://shop.example.com`); the plan's base URL
    /// origin when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
    /// CSS selectors of fields besides password fields it may be typed into (a PIN box).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub fields: Vec<String>,
}

/// One value of a run, with where it may go.
#[derive(Clone)]
struct Secret {
    name: String,
    placeholder: String,
    value: String,
    origin: String,
    fields: Vec<String>,
}

/// The values of a run, by placeholder. Debug never shows them.
#[derive(Default, Clone)]
pub struct PlanSecrets {
    values: Vec<Secret>,
}

impl std::fmt::Debug for PlanSecrets {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.values.iter().map(|s| s.name.as_str()).collect();
        write!(f, "PlanSecrets({names:?})")
    }
}

/// `{{secret:NAME}}`.
pub fn placeholder(name: &str) -> String {
    format!("{{{{secret:{name}}}}}")
}

/// The origin (`scheme://host[:port]`) of `url`, or None when it has none.
pub fn origin_of(url: &str) -> Option<String> {
    let parsed = reqwest::Url::parse(url.trim()).ok()?;
    let origin = parsed.origin();
    origin.is_tuple().then(|| origin.ascii_serialization())
}

/// What a secret is checked against as it is read.
pub struct Guard<'a> {
    /// The plan's base URL origin: where a secret without its own origin may be typed.
    pub base_origin: &'a str,
    /// Vaider's own secret values ([`vaider_core::Vaider::own_secret_values`]).
    pub own: &'a [String],
}

impl PlanSecrets {
    /// Reads every value the plan names (blocking: the keychain). A value that cannot be read,
    /// or that is a credential of the machine, is an error naming the variable or entry,
    /// never a value.
    pub fn read(refs: &BTreeMap<String, SecretRef>, guard: &Guard) -> Result<PlanSecrets, String> {
        let mut values = Vec::new();
        for (name, from) in refs {
            let value = read_one(name, from)?;
            if guard.own.iter().any(|own| own.trim() == value.trim()) {
                return Err(format!(
                    "the plan's secret {name} holds one of Vaider's own secrets (its token or a provider's key): a plan never receives those. Give it the test account's own value"
                ));
            }
            let origin = match &from.origin {
                Some(origin) => origin_of(origin).ok_or_else(|| {
                    format!("the plan's secret {name} names the origin {origin:?}, which is not an http(s) origin such as https://shop.example.com")
                })?,
                None => guard.base_origin.to_string(),
            };
            values.push(Secret {
                name: name.clone(),
                placeholder: placeholder(name),
                value,
                origin,
                fields: from.fields.clone(),
            });
        }
        Ok(PlanSecrets { values })
    }

    /// The secrets `text` types (by placeholder).
    fn used_in<'a>(&'a self, text: &'a str) -> impl Iterator<Item = &'a Secret> + 'a {
        self.values
            .iter()
            .filter(move |s| text.contains(&s.placeholder))
    }

    /// The selectors of every field that `text`'s secrets were all granted, or None when it
    /// types no secret. A field must accept each secret in `text`, so only selectors every one
    /// of them names count.
    pub fn granted_fields(&self, text: &str) -> Option<Vec<String>> {
        let mut used = self.used_in(text).peekable();
        let first = used.peek()?.fields.clone();
        let common = used.fold(first, |mut fields, s| {
            fields.retain(|f| s.fields.contains(f));
            fields
        });
        Some(common)
    }

    /// Whether the secrets in `text` may be typed on the page at `page_url`: an error names the
    /// secret, its origin and the page's.
    pub fn check_origin(&self, text: &str, page_url: &str) -> Result<(), String> {
        let page = origin_of(page_url).unwrap_or_else(|| page_url.to_string());
        match self.used_in(text).find(|s| s.origin != page) {
            None => Ok(()),
            Some(secret) => Err(format!(
                "SECRET_REFUSED: the secret {} may be typed only on {}, and this page is {page}. To use it there, set \"origin\" on the plan's secret (the plan then asks for approval again)",
                secret.name, secret.origin
            )),
        }
    }

    /// `text` with each placeholder replaced by its value: only for what is typed into a page,
    /// after [`PlanSecrets::check_origin`] and the field's check.
    pub fn fill(&self, text: &str) -> String {
        let mut out = text.to_string();
        for secret in &self.values {
            out = out.replace(secret.placeholder.as_str(), &secret.value);
        }
        out
    }

    /// Every value, for a redactor.
    pub fn values(&self) -> Vec<String> {
        self.values.iter().map(|s| s.value.clone()).collect()
    }

    /// `text` with each value replaced by [`vaider_core::redact::REDACTED`].
    pub fn redact(&self, text: &str) -> String {
        vaider_core::redact::text(text, &self.values())
    }
}

/// Why a field may not receive the secrets a command types.
pub fn field_refusal(text: &str, secrets: &PlanSecrets, field: &str) -> String {
    let names: Vec<&str> = secrets.used_in(text).map(|s| s.name.as_str()).collect();
    format!(
        "SECRET_REFUSED: {field} is not a password field, so {} would show on the page (and to the model). Type it into a password field, or name this field in the secret's \"fields\" (the plan then asks for approval again)",
        names.join(", ")
    )
}

/// One secret's value, from the variable or the plan secrets' keychain service.
fn read_one(name: &str, from: &SecretRef) -> Result<String, String> {
    match (&from.env, &from.keychain) {
        (Some(var), _) if vaider_core::child_env::is_machine_credential(var) => Err(format!(
            "the plan's secret {name} is read from {var}, a credential of this machine or of Vaider: a plan never receives it. Put the test account's value in a variable of its own (such as SHOP_PASSWORD), or in the keychain with `vaider plan secret set {name}`"
        )),
        (Some(var), _) => {
            // A variable read for a secret never reaches a child process.
            vaider_core::child_env::mark_secret(var);
            std::env::var(var).ok().filter(|v| !v.is_empty()).ok_or_else(|| {
                format!("the plan's secret {name} is read from the environment variable {var}, which is not set")
            })
        }
        (None, Some(entry)) => vaider_core::secrets::plan_secret_get(entry)
            .map_err(|e| format!("the plan's secret {name}: {e}"))?
            .map(|value| value.expose().to_string())
            .ok_or_else(|| {
                format!("the plan's secret {name} is read from the keychain entry {entry} (service vaider-plan-secrets), which is empty: store it with `vaider plan secret set {entry}`")
            }),
        (None, None) => Err(format!(
            "the plan's secret {name} names neither `env` nor `keychain`"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn from_env(var: &str) -> SecretRef {
        SecretRef {
            env: Some(var.into()),
            keychain: None,
            origin: None,
            fields: Vec::new(),
        }
    }

    const BASE: Guard = Guard {
        base_origin: "http://localhost:3000",
        own: &[],
    };

    #[test]
    fn a_value_fills_its_placeholder_and_is_redacted_everywhere_else() {
        std::env::set_var("QA_UNIT_SECRET", "s3cr3t-value");
        let refs = BTreeMap::from([("PASSWORD".to_string(), from_env("QA_UNIT_SECRET"))]);
        let secrets = PlanSecrets::read(&refs, &BASE).unwrap();
        assert_eq!(secrets.fill("pw: {{secret:PASSWORD}}"), "pw: s3cr3t-value");
        assert_eq!(secrets.redact("typed s3cr3t-value"), "typed [redacted]");
        assert!(!format!("{secrets:?}").contains("s3cr3t"));
        assert!(!vaider_core::child_env::filter(
            [("QA_UNIT_SECRET".into(), "s3cr3t-value".into())].into_iter()
        )
        .iter()
        .any(|(n, _)| n == "QA_UNIT_SECRET"));
        let missing = BTreeMap::from([("TOKEN".to_string(), from_env("QA_UNIT_SECRET_UNSET"))]);
        let error = PlanSecrets::read(&missing, &BASE).unwrap_err();
        assert!(error.contains("QA_UNIT_SECRET_UNSET"), "{error}");
    }

    #[test]
    fn a_machine_credential_is_never_a_plan_secret_whatever_its_name() {
        for var in [
            "GEMINI_API_KEY",
            "VAIDER_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_TOKEN",
        ] {
            std::env::set_var(var, "the-real-credential");
            let refs = BTreeMap::from([("PASSWORD".to_string(), from_env(var))]);
            let error = PlanSecrets::read(&refs, &BASE).unwrap_err();
            assert!(error.contains("never receives"), "{var}: {error}");
            assert!(!error.contains("the-real-credential"), "{error}");
        }
        // Under an innocent name, the value itself gives it away.
        std::env::set_var("QA_UNIT_INNOCENT", "vdr_the_token");
        let own = ["vdr_the_token".to_string()];
        let guard = Guard {
            base_origin: "http://localhost:3000",
            own: &own,
        };
        let refs = BTreeMap::from([("PASSWORD".to_string(), from_env("QA_UNIT_INNOCENT"))]);
        let error = PlanSecrets::read(&refs, &guard).unwrap_err();
        assert!(error.contains("Vaider's own secrets"), "{error}");
        assert!(!error.contains("vdr_the_token"), "{error}");
    }

    #[test]
    fn a_secret_is_typed_only_on_its_origin_and_into_the_fields_granted() {
        std::env::set_var("QA_UNIT_BOUND", "bound-value");
        let mut pin = from_env("QA_UNIT_BOUND");
        pin.fields = vec!["#pin".into()];
        let refs = BTreeMap::from([("PIN".to_string(), pin)]);
        let secrets = PlanSecrets::read(&refs, &BASE).unwrap();
        let text = "{{secret:PIN}}";
        assert!(secrets
            .check_origin(text, "http://localhost:3000/login")
            .is_ok());
        let refused = secrets
            .check_origin(text, "http://127.0.0.1:4000/steal")
            .unwrap_err();
        assert!(refused.contains("http://localhost:3000"), "{refused}");
        assert!(!refused.contains("bound-value"), "{refused}");
        assert_eq!(secrets.granted_fields(text), Some(vec!["#pin".to_string()]));
        assert_eq!(secrets.granted_fields("no secret here"), None);
        assert_eq!(
            origin_of("https://Shop.example.com:443/a?b"),
            Some("https://shop.example.com".into())
        );
    }
}
