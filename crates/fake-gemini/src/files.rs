//! The Files API resources: the `File` JSON object, `GET` (polling PROCESSING → ACTIVE/FAILED),
//! `DELETE` and list. Unknown or deleted files answer 403 PERMISSION_DENIED, as Google does.

use axum::response::{IntoResponse, Response};
use base64::Engine;
use chrono::SecondsFormat;
use serde_json::{json, Value};

use crate::errors::{json_ok, ApiError};
use crate::media;
use crate::state::{FileState, Shared, StoredFile};

/// The `File` object as Google writes it.
pub(crate) fn file_json(file: &StoredFile, base_url: &str) -> Value {
    let mut v = json!({ "name": format!("files/{}", file.id) });
    if let Some(d) = &file.display_name {
        v["displayName"] = json!(d);
    }
    v["mimeType"] = json!(file.mime_type);
    v["sizeBytes"] = json!(file.size_bytes.to_string());
    v["createTime"] = json!(file
        .create_time
        .to_rfc3339_opts(SecondsFormat::Micros, true));
    v["updateTime"] = json!(file
        .update_time
        .to_rfc3339_opts(SecondsFormat::Micros, true));
    v["expirationTime"] = json!(file
        .expiration_time
        .to_rfc3339_opts(SecondsFormat::Nanos, true));
    // Google's sha256Hash is the base64 of the lower-case *hex* digest (88 characters), not
    // the base64 of the raw 32 bytes.
    v["sha256Hash"] =
        json!(base64::engine::general_purpose::STANDARD.encode(file.sha256_hex().as_bytes()));
    v["uri"] = json!(format!("{base_url}/v1beta/files/{}", file.id));
    v["state"] = json!(file.state.as_str());
    v["source"] = json!("UPLOADED");
    if file.state == FileState::Failed {
        v["error"] = json!({
            "code": 3,
            "message": "The file could not be processed: the media could not be decoded."
        });
    }
    if file.state == FileState::Active && media::is_video(&file.mime_type) {
        let secs = file.duration_secs.unwrap_or(media::DEFAULT_VIDEO_SECS);
        v["videoMetadata"] = json!({ "videoDuration": media::format_duration(secs) });
    }
    v
}

pub(crate) fn not_found(id: &str) -> ApiError {
    ApiError::new(
        403,
        format!("You do not have permission to access the File {id} or it may not exist."),
    )
}

/// `GET /{v}/files/{id}`: one poll; PROCESSING files count down their polls.
pub(crate) fn get(shared: &Shared, id: &str) -> Response {
    let mut inner = shared.lock();
    let Some(file) = inner.live_file_mut(id) else {
        return not_found(id).into_response();
    };
    if file.state == FileState::Processing {
        if file.polls_left > 0 {
            file.polls_left -= 1;
        } else {
            file.finish_processing();
        }
    }
    json_ok(&file_json(file, &shared.base_url))
}

/// `DELETE /{v}/files/{id}`: answers `{}`.
pub(crate) fn delete(shared: &Shared, id: &str) -> Response {
    let mut inner = shared.lock();
    match inner.live_file_mut(id) {
        Some(file) => {
            file.deleted = true;
            json_ok(&json!({}))
        }
        None => not_found(id).into_response(),
    }
}

/// `GET /{v}/files?pageSize=&pageToken=`: live files, newest first.
pub(crate) fn list(shared: &Shared, page_size: Option<&str>, page_token: Option<&str>) -> Response {
    let size = match page_size.map(str::parse::<usize>) {
        None => 10,
        Some(Ok(n)) => n.clamp(1, 100),
        Some(Err(_)) => {
            return ApiError::invalid("Invalid value for page_size.").into_response();
        }
    };
    let start = match page_token
        .filter(|t| !t.is_empty())
        .map(str::parse::<usize>)
    {
        None => 0,
        Some(Ok(n)) => n,
        Some(Err(_)) => {
            return ApiError::invalid("Invalid page token.").into_response();
        }
    };
    let inner = shared.lock();
    let now = chrono::Utc::now();
    let live: Vec<&StoredFile> = inner
        .files
        .iter()
        .rev()
        .filter(|f| f.is_live(now))
        .collect();
    let page: Vec<Value> = live
        .iter()
        .skip(start)
        .take(size)
        .map(|f| file_json(f, &shared.base_url))
        .collect();
    let mut out = json!({});
    if !page.is_empty() {
        out["files"] = Value::Array(page);
    }
    if start + size < live.len() {
        out["nextPageToken"] = json!((start + size).to_string());
    }
    json_ok(&out)
}
