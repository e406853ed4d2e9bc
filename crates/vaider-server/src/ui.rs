//! The history UI: its pages (`ui/`, built into the binary) and the JSON API they call
//! (docs/ui-api.md). Handlers read the history, settings and keys through the engine; "Run
//! again" goes through the same pipeline as every other door.

use std::path::{Path, PathBuf};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Path as UrlPath, Query, Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post, put};
use axum::{Json, Router};
use futures_util::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::sync::broadcast;
use vaider_core::config::{Config, DEFAULT_GEMINI_MODEL};
use vaider_core::history::{self, Interaction, Status};
use vaider_core::pipeline::EngineChange;
use vaider_core::progress::NoProgress;
use vaider_core::secrets::{self, ApiKey, KeySource, KeychainStatus};
use vaider_core::{AnalysisRequest, Door, Tool};

use crate::rest::ApiError;
use crate::AppState;

/// The name of the cookie that lets `<video>` and `EventSource` in (they cannot send headers).
pub const SESSION_COOKIE: &str = "vaider_session";

pub fn routes() -> Router<AppState> {
    Router::new()
        .route("/", get(index))
        .route("/ui/{file}", get(asset))
        .route("/api/session", post(session))
        .route("/api/history", get(history_page))
        .route("/api/history/facets", get(facets))
        .route("/api/interactions/{id}", get(detail))
        .route("/api/interactions/{id}/media", get(media))
        .route("/api/interactions/{id}/run-again", post(run_again))
        .route("/api/interactions/{id}/open-folder", post(open_folder))
        .route("/api/events", get(events))
        .route("/api/settings", get(settings).put(save_settings))
        .route("/api/keys/{provider}", put(set_key).delete(clear_key))
        .route("/api/server/pause", post(pause))
        .route("/api/server/resume", post(resume))
        .route("/api/desktop", get(desktop).put(set_desktop))
}

// ---- pages -------------------------------------------------------------------------------

const INDEX_HTML: &str = include_str!("../../../ui/index.html");
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../ui/app.js"),
    ),
    (
        "api.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../ui/api.js"),
    ),
    (
        "detail.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../ui/detail.js"),
    ),
    (
        "dom.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../ui/dom.js"),
    ),
    (
        "format.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../ui/format.js"),
    ),
    (
        "history.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../ui/history.js"),
    ),
    (
        "richtext.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../ui/richtext.js"),
    ),
    (
        "router.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../ui/router.js"),
    ),
    (
        "server.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../ui/server.js"),
    ),
    (
        "settings.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../ui/settings.js"),
    ),
    (
        "shell.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../ui/shell.js"),
    ),
    (
        "state.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../ui/state.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../../../ui/style.css"),
    ),
    (
        "icon.svg",
        "image/svg+xml",
        include_str!("../../../ui/icon.svg"),
    ),
];

/// Scripts only from this server, no inline script, no framing: a page that holds the token
/// must not run anyone else's code.
const CONTENT_SECURITY_POLICY: &str = "default-src 'self'; script-src 'self'; \
    style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; media-src 'self' blob:; \
    connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'";

fn page(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (header::CONTENT_SECURITY_POLICY, CONTENT_SECURITY_POLICY),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            (header::REFERRER_POLICY, "no-referrer"),
            (header::X_FRAME_OPTIONS, "DENY"),
        ],
        body,
    )
        .into_response()
}

async fn index() -> Response {
    page("text/html; charset=utf-8", INDEX_HTML)
}

async fn asset(UrlPath(file): UrlPath<String>) -> Response {
    match ASSETS.iter().find(|(name, _, _)| *name == file) {
        Some((_, content_type, body)) => page(content_type, body),
        None => ApiError::new(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            "No such file in the UI.",
        )
        .into_response(),
    }
}

/// Gives the page a cookie for the requests that cannot carry the bearer header. The guard
/// has already checked the header, so the cookie holds nothing the page did not have.
async fn session(State(state): State<AppState>) -> Response {
    let cookie = format!(
        "{SESSION_COOKIE}={}; HttpOnly; SameSite=Strict; Path=/",
        state.token
    );
    let mut response = StatusCode::NO_CONTENT.into_response();
    if let Ok(value) = HeaderValue::from_str(&cookie) {
        response.headers_mut().insert(header::SET_COOKIE, value);
    }
    response
}

// ---- history -----------------------------------------------------------------------------

#[derive(Debug, Deserialize)]
struct HistoryParams {
    q: Option<String>,
    status: Option<String>,
    tool: Option<String>,
    project: Option<String>,
    before: Option<String>,
    /// Text, so a wrong value gets this API's JSON error rather than the framework's.
    limit: Option<String>,
}

/// Runs a history call on a blocking thread: SQLite calls block.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> vaider_core::error::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| internal(e.to_string()))?
        .map_err(|e| internal(e.to_string()))
}

fn internal(message: String) -> ApiError {
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", message)
}

fn bad_request(message: impl Into<String>) -> ApiError {
    ApiError::new(StatusCode::BAD_REQUEST, "INVALID_REQUEST", message)
}

fn not_found(id: &str) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "NOT_FOUND",
        format!("No interaction {id:?} in the history."),
    )
}

/// One row as the list shows it.
fn summary(row: &Interaction) -> Value {
    let shown = row.media_path.as_deref().unwrap_or(&row.source);
    let file_name = Path::new(shown)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| shown.to_string());
    json!({
        "id": row.id,
        "createdAt": row.created_at,
        "finishedAt": row.finished_at,
        "tool": row.tool,
        "door": row.door,
        "source": row.source,
        "fileName": file_name,
        "project": row.project,
        "provider": row.provider,
        "model": row.model,
        "status": row.status,
        "cached": row.cached,
        "durationMs": row.duration_ms,
        "costUsd": row.cost_usd,
        "errorCode": row.error_code,
        "errorMessage": row.error_message,
        "mediaType": row.media_type,
    })
}

async fn history_page(
    State(state): State<AppState>,
    Query(params): Query<HistoryParams>,
) -> Result<Json<Value>, ApiError> {
    let status = match params.status.as_deref().filter(|s| !s.is_empty()) {
        None => None,
        Some(name) => Some(Status::from_name(name).ok_or_else(|| {
            bad_request(format!(
                "Unknown status {name:?}: use running, ok, error, timeout or rejected."
            ))
        })?),
    };
    let limit = match params.limit.as_deref().filter(|l| !l.is_empty()) {
        None => 100,
        Some(text) => text
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=500).contains(n))
            .ok_or_else(|| {
                bad_request(format!(
                    "limit must be a number from 1 to 500, not {text:?}."
                ))
            })?,
    };
    let before = params.before.filter(|b| !b.is_empty());
    if before.as_deref().is_some_and(|b| !b.contains('|')) {
        return Err(bad_request(
            "before must be the `next` value of an earlier page; start again without it.",
        ));
    }
    let query = history::Query {
        text: params.q,
        status,
        tool: params.tool,
        project: params.project,
        before,
        limit,
    };
    let history = state.engine.history().clone();
    let page = blocking(move || history.search(&query)).await?;
    Ok(Json(json!({
        "items": page.items.iter().map(summary).collect::<Vec<_>>(),
        "next": page.next,
        "total": page.total,
    })))
}

async fn facets(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let history = state.engine.history().clone();
    let facets = blocking(move || history.facets()).await?;
    Ok(Json(json!(facets)))
}

async fn find(state: &AppState, id: &str) -> Result<Interaction, ApiError> {
    let history = state.engine.history().clone();
    let key = id.to_string();
    blocking(move || history.get(&key))
        .await?
        .ok_or_else(|| not_found(id))
}

/// An interaction file as written, when it is still there and not huge.
fn read_log_file(log_dir: Option<&str>, name: &str) -> Option<Value> {
    let path = Path::new(log_dir?).join(name);
    let meta = std::fs::metadata(&path).ok()?;
    if meta.len() > 8 * 1024 * 1024 {
        return Some(
            json!({"note": format!("{} is too large to show here; open the log folder.", path.display())}),
        );
    }
    serde_json::from_slice(&std::fs::read(&path).ok()?).ok()
}

/// The expected image of a `ui_diff_check`: the first media file of its request.
fn expected_media(request: Option<&Value>, tool: &str) -> Option<PathBuf> {
    if tool != Tool::UiDiffCheck.as_str() {
        return None;
    }
    let media = request?.get("media")?.as_array()?;
    (media.len() == 2)
        .then(|| media[0].get("path")?.as_str().map(PathBuf::from))
        .flatten()
}

async fn detail(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Value>, ApiError> {
    let row = find(&state, &id).await?;
    let history = state.engine.history().clone();
    let key = id.clone();
    let result = blocking(move || history.result(&key)).await?;
    let log_dir = row.log_dir.clone();
    let (request_json, response_json) = tokio::task::spawn_blocking(move || {
        (
            read_log_file(log_dir.as_deref(), "request.json"),
            read_log_file(log_dir.as_deref(), "response.json"),
        )
    })
    .await
    .map_err(|e| internal(e.to_string()))?;
    let expected = expected_media(request_json.as_ref(), &row.tool);
    let mut body = summary(&row);
    let extra = json!({
        "prompt": row.prompt,
        "expectations": row.expectations,
        "description": row.description,
        "verdicts": result.as_ref().map(|r| json!(r.expectations)).unwrap_or(json!([])),
        "allExpectationsMet": result.as_ref().and_then(|r| r.all_expectations_met),
        "usage": {"inputTokens": row.input_tokens, "outputTokens": row.output_tokens},
        "details": result.as_ref().and_then(|r| r.details.clone()),
        "adaptations": result.as_ref().map(|r| r.adaptations.clone()).unwrap_or_default(),
        "framesAnalysed": result.as_ref().map(|r| r.frames_analysed),
        "logDir": row.log_dir,
        "mediaPath": row.media_path,
        "mediaUrl": row.media_path.as_ref().map(|_| format!("/api/interactions/{id}/media")),
        "expectedMediaUrl": expected.map(|_| format!("/api/interactions/{id}/media?which=expected")),
        "requestJson": request_json,
        "responseJson": response_json,
        "sizeBytes": row.size_bytes,
        "mediaSha256": row.media_sha256,
    });
    if let (Some(body), Some(extra)) = (body.as_object_mut(), extra.as_object()) {
        body.extend(extra.clone());
    }
    Ok(Json(body))
}

#[derive(Debug, Deserialize)]
struct MediaParams {
    which: Option<String>,
}

/// Serves only the files the history recorded for this interaction, with Range support so
/// the video seeks.
async fn media(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    Query(params): Query<MediaParams>,
    request: Request,
) -> Result<Response, ApiError> {
    use tower::ServiceExt;

    let row = find(&state, &id).await?;
    let (path, media_type) = match params.which.as_deref() {
        None | Some("actual") | Some("") => (row.media_path.map(PathBuf::from), row.media_type),
        Some("expected") => {
            let request_json = read_log_file(row.log_dir.as_deref(), "request.json");
            let path = expected_media(request_json.as_ref(), &row.tool);
            (path, None)
        }
        Some(other) => {
            return Err(bad_request(format!(
                "which={other:?} is not known: use `actual` or `expected`."
            )))
        }
    };
    let Some(path) = path else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
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
    let mut response = tower_http::services::ServeFile::new(&path)
        .oneshot(request)
        .await
        .map_err(|e| internal(e.to_string()))?
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
    Ok(response)
}

// ---- run again, open folder ---------------------------------------------------------------

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct RunAgainBody {
    prompt: Option<String>,
    expectations: Option<Vec<String>>,
}

async fn run_again(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
    body: Option<Json<RunAgainBody>>,
) -> Result<Response, ApiError> {
    let body = body.map(|Json(b)| b).unwrap_or_default();
    let row = find(&state, &id).await?;
    let request_json = read_log_file(row.log_dir.as_deref(), "request.json");
    let tool: Tool = serde_json::from_value(json!(row.tool))
        .map_err(|_| bad_request(format!("{} cannot be run again.", row.tool)))?;
    // The file that was checked, so a relative path or a URL is not resolved a second time.
    let source = row.media_path.clone().ok_or_else(|| {
        bad_request(
            "This request was refused before any file was read, so there is nothing to run again. Fix the path in the agent's call instead.",
        )
    })?;
    let mut request = AnalysisRequest::new(tool, Door::Ui, source);
    request.compare_with =
        expected_media(request_json.as_ref(), &row.tool).map(|p| p.display().to_string());
    request.prompt = Some(body.prompt.unwrap_or(row.prompt));
    request.expectations = body.expectations.unwrap_or(row.expectations);
    request.provider = Some(row.provider);
    request.model = Some(row.model);
    request.no_cache = true;
    if let Some(request_json) = &request_json {
        if let Some(options) = request_json.get("options") {
            request.options = serde_json::from_value(options.clone()).unwrap_or_default();
        }
        request.timeout = request_json
            .get("timeoutSec")
            .and_then(Value::as_f64)
            .and_then(|t| Duration::try_from_secs_f64(t).ok());
    }
    let new_id = uuid::Uuid::now_v7().simple().to_string();
    request.id = Some(new_id.clone());
    let engine = state.engine.clone();
    tokio::spawn(async move {
        // The outcome lands in the history, which the page follows through /api/events.
        let _ = engine.analyse(request, &NoProgress).await;
    });
    Ok((StatusCode::ACCEPTED, Json(json!({"id": new_id}))).into_response())
}

async fn open_folder(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
) -> Result<StatusCode, ApiError> {
    let row = find(&state, &id).await?;
    let dir = row
        .log_dir
        .map(PathBuf::from)
        .filter(|d| d.is_dir())
        .ok_or_else(|| {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "NOT_FOUND",
                "This interaction's log folder is not there any more.",
            )
        })?;
    open_with_default_app(dir.as_os_str()).map_err(|why| {
        internal(format!(
            "Could not open {} in the file manager: {why}. Open it yourself.",
            dir.display()
        ))
    })?;
    Ok(StatusCode::NO_CONTENT)
}

/// Opens a folder or a link with the desktop's default program (file manager, browser), the
/// way a double click would. Returns at once; the program runs on its own.
pub fn open_with_default_app(target: &std::ffi::OsStr) -> Result<(), String> {
    let mut command = if cfg!(target_os = "macos") {
        std::process::Command::new("open")
    } else if cfg!(target_os = "windows") {
        // `start` takes a window title first: the empty string keeps a quoted path a path.
        let mut command = std::process::Command::new("cmd");
        command.args(["/C", "start", ""]);
        command
    } else {
        std::process::Command::new("xdg-open")
    };
    let program = command.get_program().to_string_lossy().into_owned();
    command
        .arg(target)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .map(|_| ())
        .map_err(|e| format!("{program} could not be started ({e})"))
}

// ---- live events --------------------------------------------------------------------------

/// A broadcast receiver as a stream; a listener that fell behind is told to reload.
fn changes<T: Clone + Send + 'static>(
    receiver: broadcast::Receiver<T>,
) -> impl Stream<Item = Option<T>> {
    futures_util::stream::unfold(receiver, |mut receiver| async move {
        match receiver.recv().await {
            Ok(change) => Some((Some(change), receiver)),
            Err(broadcast::error::RecvError::Lagged(_)) => Some((None, receiver)),
            Err(broadcast::error::RecvError::Closed) => None,
        }
    })
}

async fn events(
    State(state): State<AppState>,
) -> Sse<impl Stream<Item = Result<Event, std::convert::Infallible>>> {
    let rows = changes(state.engine.history().subscribe()).map(|change| match change {
        Some(change) => Event::default()
            .event("interaction")
            .json_data(change)
            .unwrap_or_default(),
        None => Event::default().event("resync").data("{}"),
    });
    let engine = changes(state.engine.subscribe()).map(|change| match change {
        Some(EngineChange::Settings) => Event::default().event("settings").data("{}"),
        Some(EngineChange::Paused(paused)) => Event::default()
            .event("server")
            .data(json!({"paused": paused}).to_string()),
        None => Event::default().event("resync").data("{}"),
    });
    // Open streams would hold up a graceful shutdown: they end with the server.
    let shutdown = state.shutdown.clone();
    let stream = futures_util::stream::select(rows, engine)
        .map(Ok)
        .take_until(async move { shutdown.cancelled().await });
    Sse::new(stream).keep_alive(KeepAlive::new().interval(Duration::from_secs(15)))
}

// ---- settings and keys --------------------------------------------------------------------

/// Settings fields and the environment variables that override each.
const ENV_FIELDS: &[(&str, &[&str])] = &[
    ("provider", &["VAIDER_PROVIDER"]),
    ("model", &["VAIDER_MODEL", "VAIDER_GEMINI_MODEL"]),
    ("port", &["VAIDER_PORT"]),
    ("maxConcurrent", &["VAIDER_MAX_CONCURRENT"]),
    ("timeoutSec", &["VAIDER_TIMEOUT_SEC"]),
    ("maxAttempts", &["VAIDER_MAX_ATTEMPTS"]),
    ("cache", &["VAIDER_CACHE"]),
    ("dataDir", &["VAIDER_DATA_DIR"]),
    ("downloadLimitMb", &["VAIDER_DOWNLOAD_LIMIT_MB"]),
];

fn env_overrides() -> Vec<Value> {
    ENV_FIELDS
        .iter()
        .filter_map(|(field, vars)| {
            let var = vars
                .iter()
                .find(|v| std::env::var(v).is_ok_and(|value| !value.is_empty()))?;
            Some(json!({"field": field, "variable": var}))
        })
        .collect()
}

async fn settings_json(state: &AppState) -> Value {
    let config = state.engine.config();
    let status = state.engine.status().await;
    let keychain = tokio::task::spawn_blocking(secrets::keychain_status)
        .await
        .unwrap_or(KeychainStatus::Unavailable(
            "the keychain check failed".into(),
        ));
    let keychain = match keychain {
        KeychainStatus::Available => json!({
            "available": true,
            "message": "Keys are kept in the OS keychain.",
        }),
        KeychainStatus::Unavailable(why) => json!({
            "available": false,
            "message": format!(
                "No OS keychain is available here: {why}. Vaider reads keys from the environment instead: set GEMINI_API_KEY (or <PROVIDER>_API_KEY) where Vaider starts, or put it in a .env file in {}.",
                Config::dir().display()
            ),
        }),
    };
    let providers: Vec<Value> = status
        .providers
        .iter()
        .map(|p| {
            let needs_key = config
                .provider(&p.name)
                .map(|c| c.needs_key)
                .unwrap_or(true);
            json!({
                "name": p.name,
                "model": p.model,
                "adapter": p.adapter,
                "needsKey": needs_key,
                "keySet": p.key_source.is_some(),
                "keySource": p.key_source,
                "ready": p.ready,
                "envNames": secrets::env_names(&p.name),
            })
        })
        .collect();
    json!({
        "configPath": Config::file_path(),
        "values": {
            "provider": config.provider,
            "model": status.model,
            "port": config.port,
            "maxConcurrent": config.max_concurrent,
            "timeoutSec": config.timeout_sec,
            "maxAttempts": config.max_attempts,
            "cache": config.cache,
            "dataDir": config.data_dir.as_ref().map(|d| d.display().to_string()).unwrap_or_default(),
            "downloadLimitMb": config.download_limit_mb,
        },
        "dataDirInUse": state.engine.data_dir(),
        "envOverrides": env_overrides(),
        "keychain": keychain,
        "providers": providers,
        "paused": state.engine.is_paused(),
    })
}

async fn settings(State(state): State<AppState>) -> Json<Value> {
    Json(settings_json(&state).await)
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase", deny_unknown_fields)]
struct SettingsBody {
    provider: Option<String>,
    model: Option<String>,
    port: Option<u16>,
    max_concurrent: Option<usize>,
    timeout_sec: Option<u64>,
    max_attempts: Option<u32>,
    cache: Option<bool>,
    data_dir: Option<String>,
    download_limit_mb: Option<u64>,
}

/// Puts the edited values into the config file's settings, refusing any that is out of range.
fn edit(config: &mut Config, body: SettingsBody) -> Result<(), ApiError> {
    fn within<T: PartialOrd + std::fmt::Display + Copy>(
        field: &str,
        value: T,
        low: T,
        high: T,
    ) -> Result<T, ApiError> {
        if value < low || value > high {
            return Err(bad_request(format!(
                "{field} must be between {low} and {high}, not {value}."
            )));
        }
        Ok(value)
    }
    if let Some(provider) = body.provider {
        let provider = provider.trim().to_ascii_lowercase();
        if !config.provider_names().contains(&provider) {
            return Err(bad_request(format!(
                "provider {provider:?} is not known: use one of {}.",
                config.provider_names().join(", ")
            )));
        }
        if provider != config.provider && body.model.is_none() {
            // A new provider starts on its own default model, not the old one's.
            config.model = DEFAULT_GEMINI_MODEL.to_string();
            config.provider = provider.clone();
            if let Ok(resolved) = config.provider(&provider) {
                config.model = resolved.model;
            }
        }
        config.provider = provider;
    }
    if let Some(model) = body.model {
        let model = model.trim().to_string();
        if model.is_empty() || model.contains(char::is_whitespace) {
            return Err(bad_request(format!(
                "model must be a model name like {DEFAULT_GEMINI_MODEL}, not {model:?}."
            )));
        }
        config.model = model;
    }
    if let Some(port) = body.port {
        config.port = within("port", port, 1, u16::MAX)?;
    }
    if let Some(n) = body.max_concurrent {
        config.max_concurrent = within("maxConcurrent", n, 1, 64)?;
    }
    if let Some(t) = body.timeout_sec {
        let max = vaider_core::pipeline::MAX_TIMEOUT.as_secs();
        config.timeout_sec = within("timeoutSec", t, 1, max)?;
    }
    if let Some(n) = body.max_attempts {
        config.max_attempts = within("maxAttempts", n, 1, 10)?;
    }
    if let Some(cache) = body.cache {
        config.cache = cache;
    }
    if let Some(mb) = body.download_limit_mb {
        config.download_limit_mb = within("downloadLimitMb", mb, 1, 2048)?;
    }
    if let Some(dir) = body.data_dir {
        let dir = dir.trim();
        config.data_dir = if dir.is_empty() {
            None
        } else if Path::new(dir).is_absolute() {
            Some(PathBuf::from(dir))
        } else {
            return Err(bad_request(format!(
                "dataDir must be an absolute folder path (or empty for the default), not {dir:?}."
            )));
        };
    }
    Ok(())
}

async fn save_settings(
    State(state): State<AppState>,
    body: axum::body::Bytes,
) -> Result<Json<Value>, ApiError> {
    let body: SettingsBody = serde_json::from_slice(&body)
        .map_err(|e| bad_request(format!("The settings are not valid: {e}.")))?;
    let path = Config::file_path();
    // Only the file's own values are edited and saved: environment overrides stay out of it.
    let mut file = Config::load_file(&path).map_err(|e| bad_request(e.to_string()))?;
    edit(&mut file, body)?;
    file.save(&path).map_err(|e| internal(e.to_string()))?;
    let mut effective = file;
    effective
        .apply_env(|name| std::env::var(name).ok())
        .map_err(|e| bad_request(e.to_string()))?;
    let restart_needed = state.engine.apply_config(effective);
    let mut answer = settings_json(&state).await;
    answer["restartNeeded"] = json!(restart_needed);
    Ok(Json(answer))
}

fn known_provider(state: &AppState, provider: &str) -> Result<String, ApiError> {
    let name = provider.trim().to_ascii_lowercase();
    let config = state.engine.config();
    if config.provider_names().contains(&name) {
        Ok(name)
    } else {
        Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "NOT_FOUND",
            format!(
                "No provider {name:?}: use one of {}.",
                config.provider_names().join(", ")
            ),
        ))
    }
}

fn keychain_unavailable(provider: &str, why: &str) -> ApiError {
    let vars = secrets::env_names(provider).join(" or ");
    ApiError::new(
        StatusCode::SERVICE_UNAVAILABLE,
        "KEYCHAIN_UNAVAILABLE",
        format!("The key was not stored: {why}. Set {vars} in the environment Vaider starts in, or in a .env file in {}, instead.", Config::dir().display()),
    )
}

#[derive(Deserialize)]
struct KeyBody {
    key: String,
}

async fn set_key(
    State(state): State<AppState>,
    UrlPath(provider): UrlPath<String>,
    body: axum::body::Bytes,
) -> Result<StatusCode, ApiError> {
    let provider = known_provider(&state, &provider)?;
    // The parse error must not echo the body: it holds the key.
    let body: KeyBody = serde_json::from_slice(&body)
        .map_err(|_| bad_request("Send {\"key\": \"...\"} as JSON."))?;
    let key = ApiKey::new(body.key.trim());
    if key.expose().is_empty() || key.expose().contains(char::is_whitespace) {
        return Err(bad_request(
            "The key is empty or has spaces inside: paste the whole key as the provider shows it.",
        ));
    }
    let name = provider.clone();
    let stored = key.clone();
    let outcome = tokio::task::spawn_blocking(move || {
        if let KeychainStatus::Unavailable(why) = secrets::keychain_status() {
            return Err(why);
        }
        secrets::keychain_set(&name, &stored).map_err(|e| e.to_string())
    })
    .await
    .map_err(|e| internal(e.to_string()))?;
    outcome.map_err(|why| keychain_unavailable(&provider, &why))?;
    state.engine.forget_keys();
    state
        .engine
        .set_provider_key(&provider, key, KeySource::Keychain);
    Ok(StatusCode::NO_CONTENT)
}

async fn clear_key(
    State(state): State<AppState>,
    UrlPath(provider): UrlPath<String>,
) -> Result<StatusCode, ApiError> {
    let provider = known_provider(&state, &provider)?;
    let name = provider.clone();
    tokio::task::spawn_blocking(move || secrets::keychain_delete(&name))
        .await
        .map_err(|e| internal(e.to_string()))?
        .map_err(|e| keychain_unavailable(&provider, &e.to_string()))?;
    state.engine.forget_keys();
    Ok(StatusCode::NO_CONTENT)
}

// ---- server and desktop -------------------------------------------------------------------

async fn pause(State(state): State<AppState>) -> Json<Value> {
    state.engine.pause();
    Json(json!({"paused": true}))
}

async fn resume(State(state): State<AppState>) -> Json<Value> {
    state.engine.resume();
    Json(json!({"paused": false}))
}

async fn desktop(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let Some(desktop) = state.desktop.clone() else {
        return Ok(Json(json!({"available": false})));
    };
    let autostart = tokio::task::spawn_blocking(move || desktop.autostart())
        .await
        .map_err(|e| internal(e.to_string()))?
        .map_err(|why| internal(format!("Could not read the start-at-login setting: {why}")))?;
    Ok(Json(json!({"available": true, "autostart": autostart})))
}

#[derive(Deserialize)]
struct DesktopBody {
    autostart: bool,
}

async fn set_desktop(
    State(state): State<AppState>,
    Json(body): Json<DesktopBody>,
) -> Result<Json<Value>, ApiError> {
    let Some(desktop) = state.desktop.clone() else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "NOT_IN_APP",
            "Start at login is a setting of the Vaider tray app; this server runs without it.",
        ));
    };
    let on = body.autostart;
    tokio::task::spawn_blocking(move || {
        desktop.set_autostart(on)?;
        desktop.autostart()
    })
    .await
    .map_err(|e| internal(e.to_string()))?
    .map(|autostart| Json(json!({"available": true, "autostart": autostart})))
    .map_err(|why| internal(format!("Could not change start at login: {why}")))
}
