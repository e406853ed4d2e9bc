//! The UI's pages and files (`ui/`, built into the binary, no build step), served with a
//! Content-Security-Policy that lets only this server's scripts run.

use axum::extract::Path as UrlPath;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use crate::api_error::ApiError;

const INDEX_HTML: &str = include_str!("../../../../ui/index.html");

/// Every file under `/ui/`: (path below `ui/`, content type, content). A new script or
/// stylesheet is one more entry.
const ASSETS: &[(&str, &str, &str)] = &[
    (
        "app.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/app.js"),
    ),
    (
        "api.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/api.js"),
    ),
    (
        "compare.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/compare.js"),
    ),
    (
        "evals.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/evals.js"),
    ),
    (
        "plans.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/plans.js"),
    ),
    (
        "review.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/review.js"),
    ),
    (
        "qarun.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/qarun.js"),
    ),
    (
        "validation.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/validation.js"),
    ),
    (
        "detail.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/detail.js"),
    ),
    (
        "dom.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/dom.js"),
    ),
    (
        "format.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/format.js"),
    ),
    (
        "history.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/history.js"),
    ),
    (
        "richtext.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/richtext.js"),
    ),
    (
        "router.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/router.js"),
    ),
    (
        "server.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/server.js"),
    ),
    (
        "settings.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/settings.js"),
    ),
    (
        "shell.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/shell.js"),
    ),
    (
        "state.js",
        "text/javascript; charset=utf-8",
        include_str!("../../../../ui/state.js"),
    ),
    (
        "style.css",
        "text/css; charset=utf-8",
        include_str!("../../../../ui/style.css"),
    ),
    (
        "icon.svg",
        "image/svg+xml",
        include_str!("../../../../ui/icon.svg"),
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

pub(super) async fn index() -> Response {
    page("text/html; charset=utf-8", INDEX_HTML)
}

pub(super) async fn asset(UrlPath(file): UrlPath<String>) -> Response {
    match ASSETS.iter().find(|(name, _, _)| *name == file) {
        Some((_, content_type, body)) => page(content_type, body),
        None => ApiError::not_found("No such file in the UI.").into_response(),
    }
}
