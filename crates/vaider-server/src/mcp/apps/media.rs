//! How pictures and video reach a view without the token. A result's view data names each
//! medium by a short-lived signed path (`signed_url`, the same links the web UI loads); the view
//! loads it from Vaider's loopback origin where it can, and where it cannot (Vaider over stdio,
//! a host page served from the web that browsers keep from loopback) it asks for the same
//! signed path through `vaider_view_media`, a tool only views are offered, which answers the
//! bytes as data up to [`DATA_LIMIT_BYTES`]. Either way the signature decides: an expired or
//! altered path opens nothing, and the pictures never pass through the model's context.

use std::path::PathBuf;

use base64::Engine as _;
use rmcp::model::CallToolResult;
use serde_json::{json, Map, Value};
use vaider_core::Vaider;

use crate::api_error::ApiError;
use crate::signed_url;
use crate::ui;

/// The view's media tool.
pub const TOOL: &str = "vaider_view_media";

/// The largest file sent as data: 16 MiB (about 21 MiB of base64 in one message), enough for
/// a test's screenshots and a minute or two of a screencast; a larger one is shown only from
/// the loopback origin, and the view says to open it in Vaider's own page otherwise.
pub const DATA_LIMIT_BYTES: u64 = 16 * 1024 * 1024;

/// How long a view's media links last: longer than the web UI's five minutes, since a chat
/// view is read at the user's pace and cannot reload itself, yet short enough that a link
/// copied out of a conversation soon opens nothing.
pub const LINK_TTL: std::time::Duration = std::time::Duration::from_secs(15 * 60);

/// The tool's definition, offered to views only.
pub fn tool() -> Value {
    json!({
        "name": TOOL,
        "title": "Media for a Vaider view",
        "description": "For Vaider's chat views only: the bytes of a picture or video the view \
                        was given a signed link to, when the view cannot load the link itself.",
        "inputSchema": {
            "type": "object",
            "properties": {
                "path": {
                    "type": "string",
                    "description": "The signed path the view's data named (it ends in exp=…&sig=…)."
                }
            },
            "required": ["path"]
        },
        "_meta": { "ui": { "visibility": ["app"] } }
    })
}

/// The media a tool's view shows, as signed paths, from the tool's structured result; None for
/// a tool whose view needs nothing beyond the result.
pub fn for_result(tool: &str, structured: &Value) -> Option<Map<String, Value>> {
    match tool {
        "analyze_video" => {
            let id = structured["interactionId"].as_str()?;
            let mut media = Map::new();
            media.insert("video".into(), json!(interaction(id, None)));
            Some(wrap(media))
        }
        _ => None,
    }
}

fn wrap(media: Map<String, Value>) -> Map<String, Value> {
    let mut data = Map::new();
    data.insert("media".into(), Value::Object(media));
    data
}

/// The signed path of an interaction's medium (`which` as the page's media route takes it).
pub fn interaction(id: &str, which: Option<&str>) -> String {
    signed_url::sign(&ui::media::path(id, which), LINK_TTL)
}

/// The signed path of one of a pending change's pictures.
pub fn review_picture(project: &std::path::Path, id: &str, which: &str) -> String {
    signed_url::sign(&ui::review::picture_path(project, id, which), LINK_TTL)
}

#[derive(serde::Deserialize)]
struct Args {
    path: String,
}

/// `vaider_view_media`: the file behind a signed path, as base64 data with its type.
pub async fn call(engine: &Vaider, arguments: Value) -> CallToolResult {
    let path = match serde_json::from_value::<Args>(arguments) {
        Ok(args) => args.path,
        Err(_) => return super::refusal("Give `path`, the signed path the view was given.".into()),
    };
    match data(engine, &path).await {
        Ok((bytes, mime)) => {
            let size = bytes.len();
            let encoded = base64::engine::general_purpose::STANDARD.encode(&bytes);
            let mut result = CallToolResult::success(vec![rmcp::model::ContentBlock::text(
                format!("{mime}, {size} bytes, for the view."),
            )]);
            result.structured_content =
                Some(json!({ "mimeType": mime, "bytes": size, "data": encoded }));
            result
        }
        Err(message) => super::refusal(message),
    }
}

/// The bytes and type behind `signed` if its signature holds and its file is small enough.
async fn data(engine: &Vaider, signed: &str) -> Result<(Vec<u8>, String), String> {
    let (file, mime) = file_of(engine, signed).await?;
    let size = std::fs::metadata(&file).map_err(|e| e.to_string())?.len();
    if size > DATA_LIMIT_BYTES {
        return Err(format!(
            "This file is {} MB, past the {} MB a view is sent as data: open it in Vaider's own page (`vaider ui`).",
            size / (1024 * 1024),
            DATA_LIMIT_BYTES / (1024 * 1024)
        ));
    }
    let bytes = tokio::fs::read(&file).await.map_err(|e| e.to_string())?;
    Ok((bytes, mime))
}

/// The file a signed path opens, checked as the guard checks a link: the same signature, the
/// same expiry, the same routes' rules for which files exist.
async fn file_of(engine: &Vaider, signed: &str) -> Result<(PathBuf, String), String> {
    let (path, query) = signed.split_once('?').unwrap_or((signed, ""));
    signed_url::verify(path, Some(query)).map_err(|refusal| refusal.to_string())?;
    let params = query_params(query);
    let get = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    let found = if let Some(id) = interaction_id(path) {
        let which = ui::media::MediaParams {
            which: get("which"),
            n: get("n"),
        };
        ui::media::file(engine, id, &which)
            .await
            .map(|(file, mime)| {
                let mime = mime.unwrap_or_else(|| guess(&file).to_string());
                (file, mime)
            })
    } else if path == "/api/review/picture" {
        let (project, id, which) = (get("project"), get("id"), get("which"));
        ui::review::picture_of(
            &project.unwrap_or_default(),
            &id.unwrap_or_default(),
            &which.unwrap_or_default(),
        )
        .map(|file| (file, "image/png".to_string()))
    } else {
        return Err("This signed link is not one of a view's media.".into());
    };
    found.map_err(|e: ApiError| e.message().to_string())
}

/// `ID` of `/api/interactions/ID/media`.
fn interaction_id(path: &str) -> Option<&str> {
    path.strip_prefix("/api/interactions/")?
        .strip_suffix("/media")
        .filter(|id| !id.is_empty() && !id.contains('/'))
}

/// The query's parameters, percent-decoded (the signature itself left out).
fn query_params(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .filter(|(name, _)| *name != "exp" && *name != "sig")
        .map(|(name, value)| (name.to_string(), vaider_core::source::percent_decode(value)))
        .collect()
}

/// A type from the file's name, for media whose type the history did not record.
fn guess(file: &std::path::Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()) {
        Some("webm") => "video/webm",
        Some("mp4") => "video/mp4",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("webp") => "image/webp",
        Some("gif") => "image/gif",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_interaction_is_read_from_its_media_path_only() {
        assert_eq!(interaction_id("/api/interactions/abc/media"), Some("abc"));
        assert_eq!(interaction_id("/api/interactions//media"), None);
        assert_eq!(interaction_id("/api/interactions/a/b/media"), None);
        assert_eq!(interaction_id("/api/history"), None);
    }

    #[test]
    fn parameters_are_decoded_and_the_signature_left_out() {
        let params = query_params("project=%2Ftmp%2Fp&id=x&exp=1&sig=ab");
        assert_eq!(
            params,
            vec![
                ("project".to_string(), "/tmp/p".to_string()),
                ("id".to_string(), "x".to_string())
            ]
        );
    }
}
