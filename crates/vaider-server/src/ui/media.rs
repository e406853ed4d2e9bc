//! `GET /api/interactions/{id}/media`: the files an interaction looked at, with Range
//! support so the video seeks. Only files the history recorded are served. The page loads
//! them through the signed URLs of [`url`] (a `<video>` cannot send the session header), and
//! every answer is marked so that a served file can never run as a page.

use std::path::PathBuf;

use axum::body::Body;
use axum::extract::{Path as UrlPath, Query, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::Response;
use serde::Deserialize;

use super::comparison::{picture_path, Picture};
use crate::api_error::ApiError;
use crate::signed_url::MEDIA_TTL;
use crate::AppState;
use vaider_core::history::Interaction;
use vaider_core::Vaider;

/// The address the page loads `id`'s media from (`which` is the query, if any), signed for
/// [`MEDIA_TTL`]. Interaction ids are UUIDs, so the path needs no escaping and reaches the
/// guard as signed.
pub(super) fn url(id: &str, which: Option<&str>) -> String {
    crate::signed_url::sign(&path(id, which), MEDIA_TTL)
}

/// The unsigned path of `id`'s media (`which` is the query, if any).
pub(crate) fn path(id: &str, which: Option<&str>) -> String {
    match which {
        Some(query) => format!("/api/interactions/{id}/media?{query}"),
        None => format!("/api/interactions/{id}/media"),
    }
}

/// A media file may be an HTML or SVG file someone analysed: the browser must not sniff it
/// into a page, and if it opens it as one (a new tab) it runs no script and loads nothing.
const MEDIA_CSP: &str =
    "sandbox; default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'";

#[derive(Debug, Default, Deserialize)]
pub(crate) struct MediaParams {
    pub which: Option<String>,
    /// Which screenshot or trace of a test validation (`which=screenshot|trace`), from 0.
    pub n: Option<String>,
}

/// Serves only the files the history recorded for this interaction, with Range support so
/// the video seeks.
pub(super) async fn media(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    Query(params): Query<MediaParams>,
    request: Request,
) -> Result<Response, ApiError> {
    use tower::ServiceExt;

    let (path, media_type) = file(&state.engine, &id, &params).await?;
    let mut response = tower_http::services::ServeFile::new(&path)
        .oneshot(request)
        .await
        .map_err(|e| ApiError::internal(e.to_string()))?
        .map(Body::new);
    if response.status().is_success() {
        // The type the content check found beats a guess from the file name.
        if let Some(value) = media_type.and_then(|t| HeaderValue::from_str(&t).ok()) {
            response.headers_mut().insert(header::CONTENT_TYPE, value);
        }
        response
            .headers_mut()
            .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    }
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(MEDIA_CSP),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    Ok(response)
}

/// The file of `id` that `params` name, with its type when known, for the page and for a chat
/// view's media tool alike: only a file the history recorded, and only while it is there.
pub(crate) async fn file(
    engine: &Vaider,
    id: &str,
    params: &MediaParams,
) -> Result<(PathBuf, Option<String>), ApiError> {
    let history = engine.history().clone();
    let key = id.to_string();
    let row = super::blocking(move || history.get(&key))
        .await?
        .ok_or_else(|| ApiError::not_found(format!("No interaction {id:?} in the history.")))?;
    let (path, media_type) = recorded_file(engine, row, params).await?;
    let Some(path) = path else {
        return Err(ApiError::not_found(
            "This interaction has no such media file (it was refused before a file was read).",
        ));
    };
    if !path.is_file() {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "MEDIA_GONE",
            format!(
                "{} is no longer there: it was moved or deleted after the analysis.",
                path.display()
            ),
        ));
    }
    Ok((path, media_type))
}

/// The file `which` names and its type, as the history recorded it: no path to serve is ever
/// read from a file in the project's folder, which anyone who can write there could change.
async fn recorded_file(
    engine: &Vaider,
    row: Interaction,
    params: &MediaParams,
) -> Result<(Option<PathBuf>, Option<String>), ApiError> {
    let png = || Some("image/png".to_string());
    Ok(match params.which.as_deref() {
        None | Some("actual") | Some("") => (row.media_path.map(PathBuf::from), row.media_type),
        Some("expected") => (row.expected_path.map(PathBuf::from), None),
        Some("screenshot") => {
            let n = number(params, "screenshot")?;
            let history = engine.history().clone();
            let path = super::blocking(move || Ok(super::job::screenshot(&history, &row, n))).await?;
            (path, png())
        }
        Some("trace") => {
            let n = number(params, "trace")?;
            let history = engine.history().clone();
            let path = super::blocking(move || Ok(super::job::trace(&history, &row, n))).await?;
            (path, Some("application/zip".to_string()))
        }
        // A comparison's other pictures: beside the recorded annotation, by the store's names.
        Some(name) => match Picture::from_name(name) {
            Some(picture) => (picture_path(&row, picture), png()),
            None => {
                return Err(ApiError::bad_request(format!(
                    "which={name:?} is not known: use `actual` or `expected` (for a visual comparison `diff`, `heatmap` or `zoom`; for a test validation `screenshot` or `trace` with `n`)."
                )))
            }
        },
    })
}

/// `n`, the number from 0 of a job's screenshot or trace.
fn number(params: &MediaParams, what: &str) -> Result<usize, ApiError> {
    params
        .n
        .as_deref()
        .and_then(|n| n.parse::<usize>().ok())
        .ok_or_else(|| {
            ApiError::bad_request(format!("which={what} needs n, the {what}'s number from 0."))
        })
}
