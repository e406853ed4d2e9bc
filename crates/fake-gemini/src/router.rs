//! Request dispatch: records every request, maps method + path to an endpoint (both `/v1beta/`
//! and `/v1/`), applies queued faults, checks the API key, and hands over to the handlers.
//! Also holds the small JSON helpers shared by handlers (camelCase/snake_case field access).

use std::sync::Arc;
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method};
use axum::response::{IntoResponse, Response};
use axum::Router;
use futures_util::StreamExt;
use serde_json::{Map, Value};

use crate::errors::{html_not_found, json_ok, ApiError};
use crate::state::Shared;
use crate::{files, generate, upload, Endpoint, Fault, RecordedRequest};

/// Largest request body Google accepts on the JSON endpoints (inline data included).
pub(crate) const MAX_REQUEST_BYTES: u64 = 20 * 1024 * 1024;

pub(crate) fn app(shared: Arc<Shared>) -> Router {
    Router::new().fallback(dispatch).with_state(shared)
}

/// What a request addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Route {
    UploadStart {
        version: String,
    },
    UploadSession {
        upload_id: String,
    },
    GetFile {
        id: String,
    },
    DeleteFile {
        id: String,
    },
    ListFiles,
    Generate {
        version: String,
        model: String,
        stream: bool,
    },
    CountTokens {
        version: String,
        model: String,
    },
    GetModel {
        version: String,
        model: String,
    },
    ListModels,
    Unknown,
}

impl Route {
    fn parse(method: &Method, path: &str, query: &[(String, String)]) -> Route {
        let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
        let is_version = |v: &str| matches!(v, "v1beta" | "v1" | "v1alpha");
        match segments.as_slice() {
            ["upload", v, "files"] if is_version(v) => match query_get(query, "upload_id") {
                Some(id) if *method == Method::POST || *method == Method::PUT => {
                    Route::UploadSession {
                        upload_id: id.to_string(),
                    }
                }
                None if *method == Method::POST => Route::UploadStart {
                    version: v.to_string(),
                },
                _ => Route::Unknown,
            },
            [v, "files"] if is_version(v) && *method == Method::GET => Route::ListFiles,
            [v, "files", id] if is_version(v) && !id.is_empty() => match *method {
                Method::GET => Route::GetFile { id: id.to_string() },
                Method::DELETE => Route::DeleteFile { id: id.to_string() },
                _ => Route::Unknown,
            },
            [v, "models"] if is_version(v) && *method == Method::GET => Route::ListModels,
            [v, "models", rest] if is_version(v) => {
                let rest = rest.replace("%3A", ":").replace("%3a", ":");
                match rest.rsplit_once(':') {
                    Some((model, action)) if *method == Method::POST => {
                        let (version, model) = (v.to_string(), model.to_string());
                        match action {
                            "generateContent" => Route::Generate {
                                version,
                                model,
                                stream: false,
                            },
                            "streamGenerateContent" => Route::Generate {
                                version,
                                model,
                                stream: true,
                            },
                            "countTokens" => Route::CountTokens { version, model },
                            _ => Route::Unknown,
                        }
                    }
                    None if *method == Method::GET => Route::GetModel {
                        version: v.to_string(),
                        model: rest,
                    },
                    _ => Route::Unknown,
                }
            }
            _ => Route::Unknown,
        }
    }

    fn endpoint(&self) -> Option<Endpoint> {
        match self {
            Route::UploadStart { .. } => Some(Endpoint::UploadStart),
            Route::UploadSession { .. } => Some(Endpoint::UploadChunk),
            Route::GetFile { .. } => Some(Endpoint::GetFile),
            Route::DeleteFile { .. } => Some(Endpoint::DeleteFile),
            Route::Generate { .. } => Some(Endpoint::Generate),
            _ => None,
        }
    }

    fn model(&self) -> Option<&str> {
        match self {
            Route::Generate { model, .. } | Route::CountTokens { model, .. } => Some(model),
            _ => None,
        }
    }
}

async fn dispatch(State(shared): State<Arc<Shared>>, req: Request) -> Response {
    let arrived = Instant::now();
    let (parts, body) = req.into_parts();
    let path = parts.uri.path().to_string();
    let raw_query = parts.uri.query().map(str::to_string);
    let query = parse_query(raw_query.as_deref().unwrap_or(""));
    let record = record_request(&shared, &parts, raw_query, arrived);
    let set_len = |n: u64| {
        if let Some(r) = shared.lock().requests.get_mut(record) {
            r.body_len = n;
        }
    };

    if std::env::var_os("FAKE_GEMINI_LOG").is_some() {
        // Path only: the query may hold the key or the upload session id (a credential).
        eprintln!("fake-gemini: {} {}", parts.method, path);
    }
    let route = Route::parse(&parts.method, &path, &query);
    if route == Route::Unknown {
        set_len(upload::drain(body).await);
        return html_not_found(&path);
    }

    // Faults come first.
    let injected = match injected_fault(&shared, &route).await {
        Ok(injected) => injected,
        Err(answer) => {
            set_len(upload::drain(body).await);
            return answer;
        }
    };

    // The session URL is its own credential; everything else needs the key.
    if let Route::UploadSession { upload_id } = route {
        return upload::session_request(shared.clone(), upload_id, parts.headers, body, record)
            .await;
    }
    if let Err(e) = check_key(&shared, &parts.headers, &query)
        .and_then(|()| take_quota(&shared, &route, &parts.headers, &query))
    {
        set_len(upload::drain(body).await);
        return e.into_response();
    }

    let body = match read_body(body).await {
        Ok(b) => {
            set_len(b.len() as u64);
            b
        }
        Err(n) => {
            set_len(n);
            return ApiError::invalid(format!(
                "Request payload size exceeds the limit: {MAX_REQUEST_BYTES} bytes."
            ))
            .into_response();
        }
    };
    answer(&shared, route, &parts, &query, &body, injected).await
}

/// Records the request as it arrived (its body's length is set once read); returns its index.
fn record_request(
    shared: &Shared,
    parts: &axum::http::request::Parts,
    raw_query: Option<String>,
    arrived: Instant,
) -> usize {
    let mut inner = shared.lock();
    inner.requests.push(RecordedRequest {
        method: parts.method.to_string(),
        path: parts.uri.path().to_string(),
        query: raw_query,
        headers: parts
            .headers
            .iter()
            .map(|(k, v)| {
                (
                    k.as_str().to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect(),
        body_len: 0,
        at: arrived,
        first_byte_at: None,
    });
    inner.requests.len() - 1
}

/// The fault injected for this endpoint, if any: an error to answer at once, a delay (waited
/// here), or a block or finish reason the answer carries (returned).
async fn injected_fault(shared: &Shared, route: &Route) -> Result<Option<Fault>, Response> {
    let Some(endpoint) = route.endpoint() else {
        return Ok(None);
    };
    let fault = shared.lock().pop_fault(endpoint);
    match fault {
        None => Ok(None),
        Some(Fault::Delay(d)) => {
            tokio::time::sleep(d).await;
            Ok(None)
        }
        Some(Fault::Status(code)) => Err(ApiError::for_status(code).into_response()),
        Some(Fault::RateLimited {
            retry_delay,
            per_day,
        }) => Err(ApiError::rate_limited(&retry_delay, per_day, route.model()).into_response()),
        Some(Fault::Huge { status, bytes }) => Err(huge_answer(status, bytes)),
        Some(f @ (Fault::Blocked(_) | Fault::FinishReason(_))) => Ok(Some(f)),
    }
}

/// `bytes` bytes of a JSON answer that never closes, made chunk by chunk as the client reads.
fn huge_answer(status: u16, bytes: u64) -> Response {
    const CHUNK: usize = 64 * 1024;
    static SPACES: [u8; CHUNK] = [b' '; CHUNK];
    let opening = Bytes::from_static(b"{\"candidates\": [");
    let rest = bytes.saturating_sub(opening.len() as u64);
    let chunks = futures_util::stream::iter((0..rest.div_ceil(CHUNK as u64)).map(move |i| {
        let left = rest - i * CHUNK as u64;
        Ok::<_, std::convert::Infallible>(Bytes::from_static(
            &SPACES[..left.min(CHUNK as u64) as usize],
        ))
    }));
    let body = futures_util::stream::once(async move { Ok(opening) }).chain(chunks);
    let status = axum::http::StatusCode::from_u16(status).unwrap_or(axum::http::StatusCode::OK);
    (
        status,
        [("content-type", "application/json; charset=UTF-8")],
        Body::from_stream(body),
    )
        .into_response()
}

/// The endpoint's answer to a request that passed the key, the quota and the size limit.
async fn answer(
    shared: &Shared,
    route: Route,
    parts: &axum::http::request::Parts,
    query: &[(String, String)],
    body: &[u8],
    injected: Option<Fault>,
) -> Response {
    let headers = &parts.headers;
    match route {
        Route::UploadStart { version } => upload::start(shared, &version, headers, body),
        Route::GetFile { id } => files::get(shared, &id),
        Route::DeleteFile { id } => files::delete(shared, &id),
        Route::ListFiles => files::list(
            shared,
            query_get(query, "pageSize").or(query_get(query, "page_size")),
            query_get(query, "pageToken").or(query_get(query, "page_token")),
        ),
        Route::Generate {
            version,
            model,
            stream,
        } => {
            let mode = if !stream {
                generate::Mode::Unary
            } else if query_get(query, "alt") == Some("sse") {
                generate::Mode::Sse
            } else {
                generate::Mode::JsonArray
            };
            let response = generate::handle(shared, &version, &model, mode, body, injected).await;
            // Benchmarks measure the client's overhead from this instant to its own answer.
            shared.lock().generate_answered.push(Instant::now());
            response
        }
        Route::CountTokens { version, model } => {
            generate::count_tokens(shared, &version, &model, body)
        }
        Route::GetModel { version, model } => match crate::models::model_json(&model) {
            Some(v) => json_ok(&v),
            None => ApiError::new(
                404,
                format!("models/{model} is not found for API version {version}."),
            )
            .into_response(),
        },
        Route::ListModels => crate::models::list(
            query_get(query, "pageSize").or(query_get(query, "page_size")),
            query_get(query, "pageToken").or(query_get(query, "page_token")),
            shared.lock().models_page_cap,
        ),
        Route::UploadSession { .. } | Route::Unknown => html_not_found(parts.uri.path()),
    }
}

/// `x-goog-api-key` header or `?key=`: a wrong key is 400 API_KEY_INVALID, none at all is 403.
fn check_key(
    shared: &Shared,
    headers: &HeaderMap,
    query: &[(String, String)],
) -> Result<(), ApiError> {
    let expected = shared.lock().api_key.clone();
    let given: Vec<&str> = header_str(headers, "x-goog-api-key")
        .into_iter()
        .chain(query_get(query, "key"))
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .collect();
    if given.is_empty() {
        Err(ApiError::missing_key())
    } else if given.iter().all(|k| *k == expected) {
        Ok(())
    } else {
        Err(ApiError::bad_key())
    }
}

/// A generateContent call counts against its key's and model's quotas, or is refused.
fn take_quota(
    shared: &Shared,
    route: &Route,
    headers: &HeaderMap,
    query: &[(String, String)],
) -> Result<(), ApiError> {
    let Route::Generate { model, .. } = route else {
        return Ok(());
    };
    let key = header_str(headers, "x-goog-api-key")
        .or(query_get(query, "key"))
        .unwrap_or_default()
        .trim();
    shared.lock().quotas.take(key, model, Instant::now())
}

/// The whole body, or Err(bytes seen) when it is over [`MAX_REQUEST_BYTES`] (then drained).
async fn read_body(body: Body) -> Result<Bytes, u64> {
    let mut stream = body.into_data_stream();
    let mut buf = Vec::new();
    let mut seen = 0u64;
    while let Some(frame) = stream.next().await {
        let Ok(bytes) = frame else { break };
        seen += bytes.len() as u64;
        if seen <= MAX_REQUEST_BYTES {
            buf.extend_from_slice(&bytes);
        }
    }
    if seen > MAX_REQUEST_BYTES {
        Err(seen)
    } else {
        Ok(Bytes::from(buf))
    }
}

pub(crate) fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

fn parse_query(q: &str) -> Vec<(String, String)> {
    q.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            (percent_decode(k), percent_decode(v))
        })
        .collect()
}

fn query_get<'a>(query: &'a [(String, String)], name: &str) -> Option<&'a str> {
    query
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                    Some(b) => {
                        out.push(b);
                        i += 2;
                    }
                    None => out.push(b'%'),
                }
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// snake_case → camelCase ("file_uri" → "fileUri"); camelCase stays as it is.
pub(crate) fn camel(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut upper = false;
    for c in name.chars() {
        if c == '_' && !out.is_empty() {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// camelCase → snake_case, for error paths the way Google prints them.
pub(crate) fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    for c in name.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// A field by its camelCase name, written in camelCase or snake_case.
pub(crate) fn field<'a>(obj: &'a Map<String, Value>, camel_name: &str) -> Option<&'a Value> {
    obj.get(camel_name)
        .or_else(|| obj.get(&snake(camel_name)))
        .filter(|v| !v.is_null())
}

/// Google's JSON parser refuses unknown fields.
pub(crate) fn check_fields(
    obj: &Map<String, Value>,
    allowed: &[&str],
    at: &str,
) -> Result<(), ApiError> {
    for key in obj.keys() {
        if !allowed.contains(&camel(key).as_str()) {
            let place = if at.is_empty() {
                String::new()
            } else {
                format!(" at '{at}'")
            };
            return Err(ApiError::invalid(format!(
                "Invalid JSON payload received. Unknown name \"{key}\"{place}: Cannot find field."
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_convert() {
        assert_eq!(camel("file_uri"), "fileUri");
        assert_eq!(camel("fileUri"), "fileUri");
        assert_eq!(camel("_responseJsonSchema"), "_responseJsonSchema");
        assert_eq!(snake("responseJsonSchema"), "response_json_schema");
        assert_eq!(percent_decode("a%3Ab+c%2"), "a:b c%2");
    }

    #[test]
    fn routes_parse() {
        let q = parse_query("alt=sse&key=k");
        assert_eq!(
            Route::parse(
                &Method::POST,
                "/v1beta/models/gemini-3.5-flash-lite:streamGenerateContent",
                &q
            ),
            Route::Generate {
                version: "v1beta".into(),
                model: "gemini-3.5-flash-lite".into(),
                stream: true
            }
        );
        assert_eq!(
            Route::parse(&Method::DELETE, "/v1/files/abc", &q),
            Route::DeleteFile { id: "abc".into() }
        );
        let up = parse_query("upload_id=xyz&upload_protocol=resumable");
        assert_eq!(
            Route::parse(&Method::POST, "/upload/v1beta/files", &up),
            Route::UploadSession {
                upload_id: "xyz".into()
            }
        );
        assert_eq!(
            Route::parse(&Method::GET, "/v2/files/abc", &q),
            Route::Unknown
        );
    }
}
