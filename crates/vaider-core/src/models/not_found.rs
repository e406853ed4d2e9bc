//! A provider's "no such model" answer, recognised and turned into `MODEL_NOT_FOUND`: an
//! error that names the model, its shutdown day if it was retired, and the current choices.

use serde_json::Value;

use super::{lifecycle, list_models, retirement, Lifecycle, ListLimits};
use crate::config::ProviderConfig;
use crate::error::VaiderError;
use crate::secrets::ApiKey;

/// Whether an upstream error says the model itself does not exist (rather than a file or a
/// route): Google's 404 NOT_FOUND naming `models/…`, OpenAI's `model_not_found`, Anthropic's
/// `not_found_error` about the model.
pub fn is_model_not_found(error: &VaiderError, model: &str) -> bool {
    let Some(response) = error.upstream_response() else {
        return false;
    };
    if response.status != 404 {
        return false;
    }
    let body = &response.body;
    let parsed: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let message = parsed["error"]["message"].as_str().unwrap_or("");
    let names_model = message.contains(&format!("models/{model}"))
        || message.contains("ListModels")
        || message.contains(&format!("model: {model}"))
        || message.contains(&format!("`{model}`"));
    names_model
        || parsed["error"]["code"] == "model_not_found"
        || (parsed["error"]["type"] == "not_found_error" && message.contains("model"))
}

/// What the user can pick instead of a model that is gone: the provider's own list (bounded
/// by `limits`, fetched now), else the table's replacements. Retiring models are left out.
pub async fn current_choices(
    http: &reqwest::Client,
    provider: &ProviderConfig,
    key: Option<&ApiKey>,
    model: &str,
    limits: ListLimits,
) -> Vec<String> {
    let mut choices: Vec<String> = match list_models(http, provider, key, limits).await {
        Ok(models) => models
            .into_iter()
            .map(|m| m.id)
            .filter(|id| retirement(id).is_none())
            .collect(),
        Err(e) => {
            tracing::info!(error = %e, "could not list models on the error path");
            Vec::new()
        }
    };
    if choices.is_empty() {
        choices = retirement(model)
            .map(|r| r.replacements.iter().map(|s| s.to_string()).collect())
            .unwrap_or_default();
    }
    choices
}

// The error's payload lives with the error type (vaider-base).
pub use crate::error::ModelGone;

/// The error for a model the provider does not serve, keeping the provider's answer.
pub fn not_found_error(
    provider: &ProviderConfig,
    model: &str,
    choices: Vec<String>,
    upstream: VaiderError,
) -> VaiderError {
    let shut_down = retirement(model).map(|r| r.shutdown.to_string());
    VaiderError::ModelNotFound(Box::new(ModelGone {
        sentence: not_found_message(&provider.name, model, shut_down.as_deref(), &choices),
        provider: provider.name.clone(),
        model: model.to_string(),
        shut_down,
        choices,
        response: upstream.upstream_response().cloned(),
    }))
}

/// The sentence of a [`VaiderError::ModelNotFound`].
pub fn not_found_message(
    provider: &str,
    model: &str,
    shut_down: Option<&str>,
    choices: &[String],
) -> String {
    let mut text = match (shut_down, lifecycle(model)) {
        (Some(day), Lifecycle::Deprecated { .. }) => format!(
            "{provider} no longer serves the model {model}: it is deprecated and shuts down on {day}."
        ),
        (Some(day), _) => format!(
            "{provider} no longer serves the model {model}: it was shut down on {day}."
        ),
        (None, _) => format!("{provider} does not serve the model {model}."),
    };
    if !choices.is_empty() {
        let shown: Vec<&str> = choices.iter().take(12).map(String::as_str).collect();
        text.push_str(&format!(" Current models: {}.", shown.join(", ")));
        if choices.len() > shown.len() {
            text.push_str(&format!(" ({} more)", choices.len() - shown.len()));
        }
    }
    text.push_str(" Pick one with `model` in config.toml (or the Settings page), the VAIDER_MODEL environment variable, or the `model` argument of the call; `vaider models` lists them.");
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn googles_404_for_a_model_is_recognised_but_a_missing_file_is_not() {
        let google = r#"{"error":{"code":404,"message":"models/gemini-2.5-flash is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.","status":"NOT_FOUND"}}"#;
        let error = VaiderError::Upstream {
            message: String::new(),
            response: Some(crate::error::UpstreamResponse {
                status: 404,
                body: google.into(),
            }),
        };
        assert!(is_model_not_found(&error, "gemini-2.5-flash"));
        let file = VaiderError::Upstream {
            message: String::new(),
            response: Some(crate::error::UpstreamResponse {
                status: 404,
                body: r#"{"error":{"code":404,"message":"File files/abc not found.","status":"NOT_FOUND"}}"#.into(),
            }),
        };
        assert!(!is_model_not_found(&file, "gemini-2.5-flash"));
    }

    #[test]
    fn the_message_names_the_model_the_shutdown_the_choices_and_the_fix() {
        let text = not_found_message(
            "gemini",
            "gemini-2.5-flash",
            Some("2026-12-01"),
            &["gemini-3.5-flash-lite".into(), "gemini-3.8-flash".into()],
        );
        for needle in [
            "gemini-2.5-flash",
            "2026-12-01",
            "gemini-3.5-flash-lite, gemini-3.8-flash",
            "VAIDER_MODEL",
            "vaider models",
        ] {
            assert!(text.contains(needle), "{needle} missing from {text}");
        }
    }
}
