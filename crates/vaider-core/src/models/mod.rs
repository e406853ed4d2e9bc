//! Which models a provider offers today, and which are going away. Providers shut models down
//! on a published schedule, so Vaider does not hard-code one model as the only choice: it
//! ships a current default (config/mod.rs), keeps the known shutdowns in one table here, lists
//! what the provider serves (`GET /v1beta/models` for Gemini, `GET /models` for
//! OpenAI-compatible servers, `GET /v1/models` for Anthropic), and turns a provider's "no
//! such model" answer into an error that names the model and the current choices.
//!
//! Here: the table of shutdowns and a model's lifecycle. What a provider serves is
//! `listing`, the "no such model" error `not_found`, the marked list the doors show
//! `catalogue`.

use chrono::NaiveDate;
use serde::Serialize;

mod catalogue;
mod listing;
mod not_found;
pub use catalogue::{catalogue, Catalogue, ModelEntry};
pub use listing::{list_models, ListLimits, ModelInfo};
pub use not_found::{
    current_choices, is_model_not_found, not_found_error, not_found_message, ModelGone,
};

/// A model the provider has shut down or will shut down, and what it names instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Retirement {
    pub model: &'static str,
    /// The day the model stops answering (YYYY-MM-DD).
    pub shutdown: &'static str,
    /// The models the provider names as its replacements, best first.
    pub replacements: &'static [&'static str],
}

/// Google's schedule (the Gemini API "deprecations" page, checked 2026-11-24).
/// gemini-2.5-flash-lite stays "until further notice".
pub const RETIREMENTS: &[Retirement] = &[
    Retirement {
        model: "gemini-2.5-flash",
        shutdown: "2026-12-01",
        replacements: &["gemini-3.5-flash-lite", "gemini-3.8-flash"],
    },
    Retirement {
        model: "gemini-2.5-pro",
        shutdown: "2026-12-01",
        replacements: &["gemini-3.5-flash-lite", "gemini-3.8-flash"],
    },
    Retirement {
        model: "gemini-2.0-flash",
        shutdown: "2026-06-01",
        replacements: &["gemini-3.5-flash-lite", "gemini-3.8-flash"],
    },
];

/// The model a name stands for: "models/gemini-2.5-flash" and "gemini-2.5-flash-001" are
/// gemini-2.5-flash.
pub fn base_name(model: &str) -> &str {
    let model = model.trim();
    let model = model.strip_prefix("models/").unwrap_or(model);
    match model.rsplit_once('-') {
        Some((base, version))
            if version.len() == 3 && version.chars().all(|c| c.is_ascii_digit()) =>
        {
            base
        }
        _ => model,
    }
}

/// The shutdown entry of a model, if it has one.
pub fn retirement(model: &str) -> Option<&'static Retirement> {
    let base = base_name(model);
    RETIREMENTS.iter().find(|r| r.model == base)
}

/// Where a model stands on a given day.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "state", rename_all = "camelCase")]
pub enum Lifecycle {
    Current,
    /// Still answers, but shuts down on `shutdown`.
    Deprecated {
        shutdown: &'static str,
    },
    /// Shut down on `shutdown`: calls answer 404.
    ShutDown {
        shutdown: &'static str,
    },
}

/// Where `model` stands on `today`, from the table.
pub fn lifecycle_on(model: &str, today: NaiveDate) -> Lifecycle {
    let Some(r) = retirement(model) else {
        return Lifecycle::Current;
    };
    match NaiveDate::parse_from_str(r.shutdown, "%Y-%m-%d") {
        Ok(day) if today >= day => Lifecycle::ShutDown {
            shutdown: r.shutdown,
        },
        _ => Lifecycle::Deprecated {
            shutdown: r.shutdown,
        },
    }
}

/// Where `model` stands today (UTC).
pub fn lifecycle(model: &str) -> Lifecycle {
    lifecycle_on(model, chrono::Utc::now().date_naive())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(text: &str) -> NaiveDate {
        NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
    }

    #[test]
    fn names_with_prefix_or_version_find_their_retirement() {
        assert_eq!(
            retirement("models/gemini-2.5-flash-001").map(|r| r.model),
            Some("gemini-2.5-flash")
        );
        assert!(retirement("gemini-2.5-flash-lite").is_none());
        assert!(retirement("gemini-3.5-flash-lite").is_none());
        assert!(retirement(crate::config::DEFAULT_GEMINI_MODEL).is_none());
    }

    #[test]
    fn a_model_is_deprecated_until_its_shutdown_day_then_gone() {
        assert_eq!(
            lifecycle_on("gemini-2.5-flash", day("2026-11-30")),
            Lifecycle::Deprecated {
                shutdown: "2026-12-01"
            }
        );
        assert_eq!(
            lifecycle_on("gemini-2.5-flash", day("2026-12-01")),
            Lifecycle::ShutDown {
                shutdown: "2026-12-01"
            }
        );
        assert_eq!(
            lifecycle_on("gemini-2.0-flash", day("2026-11-27")),
            Lifecycle::ShutDown {
                shutdown: "2026-06-01"
            }
        );
        assert_eq!(
            lifecycle_on("gemini-2.5-flash-lite", day("2030-01-01")),
            Lifecycle::Current
        );
    }

    #[test]
    fn an_old_gemini_default_left_in_the_file_is_not_another_providers_model() {
        let config: crate::config::Config =
            toml::from_str("provider = \"openai\"\nmodel = \"gemini-2.5-flash\"\n").unwrap();
        assert_eq!(config.provider("openai").unwrap().model, "gpt-4.1-mini");
        // A model named for the provider still counts.
        let config: crate::config::Config =
            toml::from_str("provider = \"openai\"\nmodel = \"gpt-4.1\"\n").unwrap();
        assert_eq!(config.provider("openai").unwrap().model, "gpt-4.1");
    }
}
