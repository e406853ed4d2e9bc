//! What a provider serves today, as its API lists them (`GET /v1beta/models` for Gemini,
//! `GET /models` for OpenAI-compatible servers, `GET /v1/models` for Anthropic), within
//! bounds: a provider that pages forever, answers huge pages or hangs holds no one for long.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use crate::config::{Adapter, ProviderConfig};
use crate::error::VaiderError;
use crate::secrets::ApiKey;

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
    let response = request.send().await.map_err(|e| {
        upstream(
            format!(
                "Could not reach {service} to list its models ({}).",
                e.without_url()
            ),
            None,
        )
    })?;
    let status = response.status().as_u16();
    let body = crate::body::read_capped(response, max_bytes)
        .await
        .map_err(|e| upstream(e.describe(service, "model list"), None))?;
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
