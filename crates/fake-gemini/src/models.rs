//! The models the fake serves: today's Gemini models only (checked 2026-11-24), listed by
//! `GET /{v}/models` page by page as Google does. A shut-down model (gemini-2.5-flash,
//! gemini-2.5-pro, gemini-2.0-flash) or any unknown name answers 404 NOT_FOUND, which is
//! what a client configured with a retired model meets after the shutdown day.

use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::errors::{json_ok, ApiError};

/// One served model: name, display name, input and output token limits.
struct Served {
    id: &'static str,
    display: &'static str,
    input: u64,
    output: u64,
}

const SERVED: &[Served] = &[
    Served {
        id: "gemini-3.5-flash",
        display: "Gemini 3.5 Flash",
        input: 1_048_576,
        output: 65_536,
    },
    Served {
        id: "gemini-3.5-flash-lite",
        display: "Gemini 3.5 Flash-Lite",
        input: 1_048_576,
        output: 65_536,
    },
    Served {
        id: "gemini-3.8-flash",
        display: "Gemini 3.8 Flash",
        input: 1_048_576,
        output: 65_536,
    },
    Served {
        id: "gemini-3.1-pro-preview",
        display: "Gemini 3.1 Pro Preview",
        input: 1_048_576,
        output: 65_536,
    },
    Served {
        id: "gemini-2.5-flash-lite",
        display: "Gemini 2.5 Flash-Lite",
        input: 1_048_576,
        output: 65_536,
    },
];

/// The names of the models served, in the order they are listed.
pub fn served_models() -> Vec<&'static str> {
    SERVED.iter().map(|m| m.id).collect()
}

/// Google's default page size for `models.list`, and its largest.
const DEFAULT_PAGE_SIZE: usize = 50;
const MAX_PAGE_SIZE: usize = 1000;

fn served(model: &str) -> Option<&'static Served> {
    let model = model.strip_prefix("models/").unwrap_or(model);
    SERVED.iter().find(|m| m.id == model)
}

/// Whether generateContent and countTokens answer for `model`.
pub(crate) fn known(model: &str) -> bool {
    served(model).is_some()
}

/// `GET /{v}/models/{model}`.
pub(crate) fn model_json(model: &str) -> Option<Value> {
    let m = served(model)?;
    Some(json!({
        "name": format!("models/{}", m.id),
        "baseModelId": m.id,
        "version": "001",
        "displayName": m.display,
        "description": format!("{} (served by fake-gemini)", m.display),
        "inputTokenLimit": m.input,
        "outputTokenLimit": m.output,
        "supportedGenerationMethods": ["generateContent", "countTokens", "createCachedContent", "batchGenerateContent"],
        "temperature": 1.0,
        "topP": 0.95,
        "topK": 64,
        "maxTemperature": 2.0,
        "thinking": true,
    }))
}

/// `GET /{v}/models?pageSize=&pageToken=`; the fake answers at most `page_cap` models a page
/// (as Google may answer fewer than asked), so clients must follow `nextPageToken`.
pub(crate) fn list(page_size: Option<&str>, page_token: Option<&str>, page_cap: usize) -> Response {
    let size = match page_size.map(str::parse::<usize>) {
        None | Some(Ok(0)) => DEFAULT_PAGE_SIZE,
        Some(Ok(n)) => n.min(MAX_PAGE_SIZE),
        Some(Err(_)) => return ApiError::invalid("Invalid value for page_size.").into_response(),
    }
    .min(page_cap.max(1));
    let start = match page_token.filter(|t| !t.is_empty()).map(decode_token) {
        None => 0,
        Some(Some(n)) => n,
        Some(None) => return ApiError::invalid("Invalid page token.").into_response(),
    };
    let page: Vec<Value> = SERVED
        .iter()
        .skip(start)
        .take(size)
        .filter_map(|m| model_json(m.id))
        .collect();
    let mut out = json!({ "models": page });
    if start + size < SERVED.len() {
        out["nextPageToken"] = json!(encode_token(start + size));
    }
    json_ok(&out)
}

/// Page tokens are opaque to clients; this one carries the offset.
fn encode_token(offset: usize) -> String {
    hex::encode(format!("models:{offset}"))
}

fn decode_token(token: &str) -> Option<usize> {
    let text = String::from_utf8(hex::decode(token).ok()?).ok()?;
    text.strip_prefix("models:")?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_todays_models_are_served() {
        assert!(known("gemini-3.5-flash-lite"));
        assert!(known("models/gemini-2.5-flash-lite"));
        for gone in [
            "gemini-2.5-flash",
            "gemini-2.5-pro",
            "gemini-2.0-flash",
            "gpt-4o",
        ] {
            assert!(!known(gone), "{gone}");
        }
    }

    #[test]
    fn page_tokens_round_trip() {
        assert_eq!(decode_token(&encode_token(3)), Some(3));
        assert_eq!(decode_token("nonsense"), None);
    }
}
