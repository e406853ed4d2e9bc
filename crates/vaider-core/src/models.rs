//! Which models a provider offers today, and which are going away. Providers shut models down
//! on a published schedule, so Vaider does not hard-code one model as the only choice: it
//! ships a current default (config/mod.rs), keeps the known shutdowns in one table here, lists
//! what the provider serves (`GET /v1beta/models` for Gemini, `GET /models` for
//! OpenAI-compatible servers, `GET /v1/models` for Anthropic), and turns a provider's "no
//! such model" answer into an error that names the model and the current choices.

use std::time::Duration;

use chrono::NaiveDate;
use serde::Serialize;
use serde_json::Value;

use crate::config::{Adapter, ProviderConfig};
use crate::error::VaiderError;
use crate::secrets::ApiKey;

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

/// One model a provider serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// The name to configure ("gemini-3.5-flash-lite", "gpt-4.1").
    pub id: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub display_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_token_limit: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_token_limit: Option<u64>,
}

/// Bounds on one listing: a provider that pages forever, answers huge pages or hangs must not
/// hold a call (or the error path of one) for long.
#[derive(Debug, Clone, Copy)]
pub struct ListLimits {
    pub max_pages: u32,
    /// Largest answer read for one page.
    pub max_page_bytes: usize,
    /// The whole listing, every page.
    pub timeout: Duration,
}

impl Default for ListLimits {
    fn default() -> Self {
        ListLimits {
            max_pages: 20,
            max_page_bytes: 2 * 1024 * 1024,
            timeout: Duration::from_secs(15),
        }
    }
}

impl ListLimits {
    /// The tighter bounds used on an error path: the user is waiting for the error.
    pub fn on_error_path() -> Self {
        ListLimits {
            max_pages: 5,
            max_page_bytes: 1024 * 1024,
            timeout: Duration::from_secs(5),
        }
    }
}

/// The models `provider` serves that can describe media, as its API lists them.
pub async fn list_models(
    http: &reqwest::Client,
    provider: &ProviderConfig,
    key: Option<&ApiKey>,
    limits: ListLimits,
) -> Result<Vec<ModelInfo>, VaiderError> {
    let listing = async {
        match provider.adapter {
            Adapter::Gemini => list_gemini(http, provider, key, limits).await,
            Adapter::Openai => list_openai(http, provider, key, limits).await,
            Adapter::Anthropic => list_anthropic(http, provider, key, limits).await,
            Adapter::Bedrock => Err(VaiderError::InvalidRequest(format!(
                "Vaider cannot list {}'s models: Bedrock lists them in the AWS console (Model access).",
                provider.name
            ))),
        }
    };
    match tokio::time::timeout(limits.timeout, listing).await {
        Ok(result) => result,
        Err(_) => Err(VaiderError::Upstream {
            message: format!(
                "{} did not list its models within {} s.",
                provider.name,
                limits.timeout.as_secs()
            ),
            response: None,
        }),
    }
}

/// Gemini: `GET /v1beta/models`, page after page; only models that take generateContent.
async fn list_gemini(
    http: &reqwest::Client,
    provider: &ProviderConfig,
    key: Option<&ApiKey>,
    limits: ListLimits,
) -> Result<Vec<ModelInfo>, VaiderError> {
    let url = format!("{}/v1beta/models", provider.base_url);
    let mut models = Vec::new();
    let mut token: Option<String> = None;
    for _ in 0..limits.max_pages.max(1) {
        let mut request = http.get(&url).query(&[("pageSize", "100")]);
        if let Some(t) = &token {
            request = request.query(&[("pageToken", t)]);
        }
        if let Some(key) = key {
            request = request.header("x-goog-api-key", key.expose());
        }
        let page = fetch_json(request, &provider.name, limits.max_page_bytes).await?;
        models.extend(gemini_page(&page));
        token = page["nextPageToken"]
            .as_str()
            .filter(|t| !t.is_empty())
            .map(str::to_string);
        if token.is_none() {
            break;
        }
    }
    Ok(models)
}

/// The models of one Gemini page that can generate content.
fn gemini_page(page: &Value) -> Vec<ModelInfo> {
    let Some(list) = page["models"].as_array() else {
        return Vec::new();
    };
    list.iter()
        .filter(|m| {
            m["supportedGenerationMethods"]
                .as_array()
                .is_some_and(|ms| ms.iter().any(|x| x == "generateContent"))
        })
        .filter_map(|m| {
            let name = m["name"].as_str()?;
            Some(ModelInfo {
                id: name.strip_prefix("models/").unwrap_or(name).to_string(),
                display_name: m["displayName"].as_str().map(str::to_string),
                input_token_limit: m["inputTokenLimit"].as_u64(),
                output_token_limit: m["outputTokenLimit"].as_u64(),
            })
        })
        .collect()
}

/// OpenAI-compatible servers: `GET {base}/models` (one page).
async fn list_openai(
    http: &reqwest::Client,
    provider: &ProviderConfig,
    key: Option<&ApiKey>,
    limits: ListLimits,
) -> Result<Vec<ModelInfo>, VaiderError> {
    let mut request = http.get(format!("{}/models", provider.base_url));
    if let Some(key) = key.filter(|k| !k.expose().is_empty()) {
        request = request.bearer_auth(key.expose());
    }
    let page = fetch_json(request, &provider.name, limits.max_page_bytes).await?;
    Ok(id_list(&page["data"], "id", None))
}

/// Anthropic: `GET /v1/models`, paged with `after_id` while `has_more`.
async fn list_anthropic(
    http: &reqwest::Client,
    provider: &ProviderConfig,
    key: Option<&ApiKey>,
    limits: ListLimits,
) -> Result<Vec<ModelInfo>, VaiderError> {
    let url = format!("{}/v1/models", provider.base_url);
    let mut models = Vec::new();
    let mut after: Option<String> = None;
    for _ in 0..limits.max_pages.max(1) {
        let mut request = http
            .get(&url)
            .query(&[("limit", "100")])
            .header("anthropic-version", "2023-06-01");
        if let Some(a) = &after {
            request = request.query(&[("after_id", a)]);
        }
        if let Some(key) = key {
            request = request.header("x-api-key", key.expose());
        }
        let page = fetch_json(request, &provider.name, limits.max_page_bytes).await?;
        models.extend(id_list(&page["data"], "id", Some("display_name")));
        after = page["last_id"].as_str().map(str::to_string);
        if !page["has_more"].as_bool().unwrap_or(false) || after.is_none() {
            break;
        }
    }
    Ok(models)
}

fn id_list(data: &Value, id: &str, display: Option<&str>) -> Vec<ModelInfo> {
    data.as_array()
        .map(|list| {
            list.iter()
                .filter_map(|m| {
                    Some(ModelInfo {
                        id: m[id].as_str()?.to_string(),
                        display_name: display.and_then(|d| m[d].as_str()).map(str::to_string),
                        input_token_limit: None,
                        output_token_limit: None,
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Sends a listing request and reads its JSON, at most `max_bytes` of it.
async fn fetch_json(
    request: reqwest::RequestBuilder,
    service: &str,
    max_bytes: usize,
) -> Result<Value, VaiderError> {
    let upstream = |message: String, response| VaiderError::Upstream { message, response };
    let mut response = request.send().await.map_err(|e| {
        upstream(
            format!(
                "Could not reach {service} to list its models ({}).",
                e.without_url()
            ),
            None,
        )
    })?;
    let status = response.status().as_u16();
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| {
        upstream(
            format!("{service}'s model list broke off: {}", e.without_url()),
            None,
        )
    })? {
        if body.len() + chunk.len() > max_bytes {
            return Err(upstream(
                format!("{service}'s model list is larger than {max_bytes} bytes; not read."),
                None,
            ));
        }
        body.extend_from_slice(&chunk);
    }
    let text = String::from_utf8_lossy(&body).into_owned();
    if !(200..300).contains(&status) {
        return Err(upstream(
            format!("{service} answered HTTP {status} when asked for its models."),
            Some(crate::error::UpstreamResponse { status, body: text }),
        ));
    }
    serde_json::from_str(&text).map_err(|_| {
        upstream(
            format!("{service}'s model list was not JSON."),
            Some(crate::error::UpstreamResponse { status, body: text }),
        )
    })
}

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

/// One model as `vaider models`, the settings page and `vaider doctor` show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelEntry {
    #[serde(flatten)]
    pub info: ModelInfo,
    /// Vaider's default model for this provider.
    pub default: bool,
    /// The model the config chooses.
    pub configured: bool,
    /// In the provider's own list (false for a configured model that it does not serve).
    pub listed: bool,
    pub lifecycle: Lifecycle,
    /// What the provider names instead, for a retiring model.
    pub replacements: Vec<&'static str>,
}

/// A provider's models, marked, with whether the listing itself worked.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Catalogue {
    pub provider: String,
    pub default_model: String,
    pub configured_model: String,
    pub models: Vec<ModelEntry>,
    /// Why the provider's list could not be read; the models are then the configured and
    /// default ones only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub list_error: Option<String>,
    /// The table of known shutdowns, so a page can warn about a name as it is typed.
    pub retirements: &'static [Retirement],
}

impl Catalogue {
    /// Marks `listed` (or the listing's error) for `provider` as configured.
    pub fn build(
        provider: &ProviderConfig,
        listed: Result<Vec<ModelInfo>, VaiderError>,
    ) -> Catalogue {
        let default_model = crate::config::Config::default()
            .provider(&provider.name)
            .map(|p| p.model)
            .unwrap_or_else(|_| provider.model.clone());
        let configured_model = provider.model.clone();
        let (mut infos, list_error) = match listed {
            Ok(models) => (models, None),
            Err(e) => (Vec::new(), Some(e.to_string())),
        };
        let listed_ids: Vec<String> = infos.iter().map(|m| m.id.clone()).collect();
        for extra in [&configured_model, &default_model] {
            if !infos.iter().any(|m| m.id == *extra) {
                infos.push(ModelInfo {
                    id: extra.clone(),
                    display_name: None,
                    input_token_limit: None,
                    output_token_limit: None,
                });
            }
        }
        let models = infos
            .into_iter()
            .map(|info| ModelEntry {
                default: info.id == default_model,
                configured: info.id == configured_model,
                listed: listed_ids.contains(&info.id),
                lifecycle: lifecycle(&info.id),
                replacements: retirement(&info.id)
                    .map(|r| r.replacements.to_vec())
                    .unwrap_or_default(),
                info,
            })
            .collect();
        Catalogue {
            provider: provider.name.clone(),
            default_model,
            configured_model,
            models,
            list_error,
            retirements: RETIREMENTS,
        }
    }

    /// What is wrong with the configured model, if anything: a sentence with the fix.
    pub fn configured_problem(&self) -> Option<String> {
        let entry = self.models.iter().find(|m| m.configured)?;
        let model = &entry.info.id;
        let instead = match entry.replacements.as_slice() {
            [] => format!(
                "pick a current one (`vaider models`), e.g. {}",
                self.default_model
            ),
            list => format!("use {} instead", list.join(" or ")),
        };
        let fix = "set `model` in config.toml, VAIDER_MODEL, or the Settings page";
        // Not in a list that was read: the provider does not serve it (any more).
        let served = entry.listed || self.list_error.is_some();
        let provider = &self.provider;
        let status = match (entry.lifecycle, served) {
            (Lifecycle::ShutDown { shutdown }, _) => format!("was shut down on {shutdown}"),
            (Lifecycle::Deprecated { shutdown }, false) => format!(
                "is deprecated (shuts down on {shutdown}) and no longer among {provider}'s models"
            ),
            (Lifecycle::Deprecated { shutdown }, true) => {
                format!("is deprecated and shuts down on {shutdown}")
            }
            (Lifecycle::Current, false) => format!("is not among {provider}'s models"),
            (Lifecycle::Current, true) => return None,
        };
        Some(format!("{model} {status}: {instead} ({fix})"))
    }
}

/// The models of `provider` (default: the configured one) for a program without an engine
/// (`vaider models`, `vaider doctor`): the key is looked up as analyses look it up.
pub async fn catalogue(
    config: &crate::config::Config,
    provider: Option<&str>,
    dotenv_dirs: &[std::path::PathBuf],
    limits: ListLimits,
) -> Result<Catalogue, VaiderError> {
    let provider = config.provider(provider.unwrap_or(&config.provider))?;
    let (name, dirs) = (provider.name.clone(), dotenv_dirs.to_vec());
    let key = tokio::task::spawn_blocking(move || crate::secrets::find_api_key(&name, &dirs))
        .await
        .ok()
        .flatten()
        .map(|(k, _)| k);
    let http = reqwest::Client::builder()
        .connect_timeout(limits.timeout)
        .build()
        .map_err(|e| VaiderError::internal("start an HTTP client", e))?;
    let listed = list_models(&http, &provider, key.as_ref(), limits).await;
    Ok(Catalogue::build(&provider, listed))
}

impl crate::engine::Vaider {
    /// The models of `provider` (default: the configured one), listed now within the
    /// default bounds, marked.
    pub async fn models(&self, provider: Option<&str>) -> Result<Catalogue, VaiderError> {
        let config = self.config();
        let provider = config.provider(provider.unwrap_or(&config.provider))?;
        let key = self.api_key(&provider.name).await.map(|(k, _)| k);
        let listed = list_models(&self.http, &provider, key.as_ref(), ListLimits::default()).await;
        Ok(Catalogue::build(&provider, listed))
    }
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

    #[test]
    fn the_problem_with_a_configured_model_names_the_replacement() {
        let config = crate::config::Config {
            model: "gemini-2.5-pro".into(),
            ..Default::default()
        };
        let provider = config.provider("gemini").unwrap();
        let listed = vec![ModelInfo {
            id: "gemini-3.5-flash-lite".into(),
            display_name: None,
            input_token_limit: None,
            output_token_limit: None,
        }];
        let catalogue = Catalogue::build(&provider, Ok(listed.clone()));
        let problem = catalogue.configured_problem().unwrap();
        assert!(problem.contains("gemini-2.5-pro") && problem.contains("2026-12-01"));
        assert!(problem.contains("gemini-3.5-flash-lite or gemini-3.8-flash"));
        // The default is current and listed: nothing to fix.
        let provider = crate::config::Config::default().provider("gemini").unwrap();
        assert_eq!(
            Catalogue::build(&provider, Ok(listed)).configured_problem(),
            None
        );
    }

    #[test]
    fn gemini_pages_keep_only_generating_models() {
        let page = serde_json::json!({"models": [
            {"name": "models/gemini-3.5-flash", "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
             "supportedGenerationMethods": ["generateContent", "countTokens"]},
            {"name": "models/text-embedding-004", "supportedGenerationMethods": ["embedContent"]}]});
        let models = gemini_page(&page);
        assert_eq!(models.len(), 1);
        assert_eq!(models[0].id, "gemini-3.5-flash");
        assert_eq!(models[0].input_token_limit, Some(1_048_576));
    }

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
