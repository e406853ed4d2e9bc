//! HTTP plumbing shared by both fakes: binding, recording every request, reading bodies up to
//! the 64 MB cap, and taking the next queued fault; the provider modules do the rest.

use std::sync::Arc;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;
use futures_util::StreamExt;

use crate::state::{Provider, Shared};
use crate::{anthropic, bedrock, openai, Fault, RecordedRequest};

/// Largest body kept in memory; larger ones are drained and refused with 413.
pub(crate) const MAX_BODY_BYTES: u64 = 64 * 1024 * 1024;

/// Stops the server task when dropped.
pub(crate) struct ServerGuard(tokio::task::AbortHandle);

impl Drop for ServerGuard {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Bind 127.0.0.1:0 and serve; `base_path` is appended to the origin in `base_url`.
pub(crate) async fn start(
    provider: Provider,
    base_path: &str,
) -> std::io::Result<(Arc<Shared>, ServerGuard)> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0)).await?;
    let port = listener.local_addr()?.port();
    let shared = Arc::new(Shared::new(
        format!("http://127.0.0.1:{port}{base_path}"),
        provider,
    ));
    let app = Router::new().fallback(dispatch).with_state(shared.clone());
    let task = tokio::spawn(async move {
        // Errors here only happen when the listener dies; nothing useful to do with them.
        let _ = axum::serve(listener, app).await;
    });
    Ok((shared, ServerGuard(task.abort_handle())))
}

/// A request as the provider handlers see it.
pub(crate) struct Incoming {
    pub method: Method,
    pub path: String,
    pub headers: HeaderMap,
    pub body: ReadBody,
}

/// The body, or how many bytes arrived when that was over [`MAX_BODY_BYTES`].
pub(crate) enum ReadBody {
    Complete(Bytes),
    TooLarge(u64),
}

impl ReadBody {
    pub fn len(&self) -> u64 {
        match self {
            ReadBody::Complete(b) => b.len() as u64,
            ReadBody::TooLarge(n) => *n,
        }
    }
}

async fn dispatch(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let path = parts.uri.path().to_string();
    let index = {
        let mut inner = shared.lock();
        inner.recorded.push(RecordedRequest {
            method: parts.method.to_string(),
            path: path.clone(),
            headers: parts
                .headers
                .iter()
                .map(|(k, v)| {
                    (
                        k.as_str().to_ascii_lowercase(),
                        String::from_utf8_lossy(v.as_bytes()).into_owned(),
                    )
                })
                .collect(),
            body_len: 0,
        });
        inner.recorded.len() - 1
    };
    // Read everything (draining what is over the cap) so the client always gets the answer
    // instead of a connection reset in the middle of its upload.
    let body = read_body(body).await;
    if let Some(r) = shared.lock().recorded.get_mut(index) {
        r.body_len = body.len();
    }
    let incoming = Incoming {
        method: parts.method,
        path,
        headers: parts.headers,
        body,
    };
    match &shared.provider {
        Provider::OpenAi(options) => openai::handle(&shared, options, incoming).await,
        Provider::Anthropic => anthropic::handle(&shared, incoming).await,
        Provider::Bedrock { region } => bedrock::handle(&shared, region, incoming).await,
    }
}

async fn read_body(body: Body) -> ReadBody {
    let mut stream = body.into_data_stream();
    let mut buf = Vec::new();
    let mut seen = 0u64;
    while let Some(frame) = stream.next().await {
        let Ok(bytes) = frame else { break };
        seen += bytes.len() as u64;
        if seen <= MAX_BODY_BYTES {
            buf.extend_from_slice(&bytes);
        }
    }
    if seen > MAX_BODY_BYTES {
        ReadBody::TooLarge(seen)
    } else {
        ReadBody::Complete(Bytes::from(buf))
    }
}

/// A queued fault that answers the request in place of the handler.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Injected {
    Status(u16),
    RateLimited { retry_after_secs: u64 },
}

/// Take the next queued fault: a delay is slept here and the request then goes on (it uses up
/// its place in the queue like any other fault); the others end the request.
pub(crate) async fn take_fault(shared: &Shared) -> Option<Injected> {
    let fault = shared.lock().faults.pop_front();
    match fault? {
        Fault::Delay(d) => {
            tokio::time::sleep(d).await;
            None
        }
        Fault::Status(code) => Some(Injected::Status(code)),
        Fault::RateLimited { retry_after_secs } => Some(Injected::RateLimited { retry_after_secs }),
    }
}

pub(crate) fn header_str<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// A JSON answer with extra headers.
pub(crate) fn json_response(
    status: u16,
    body: &serde_json::Value,
    headers: &[(&'static str, String)],
) -> Response {
    let status = StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = (status, body.to_string()).into_response();
    let h = resp.headers_mut();
    h.insert(
        axum::http::header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    for (name, value) in headers {
        if let Ok(v) = HeaderValue::from_str(value) {
            h.insert(HeaderName::from_static(name), v);
        }
    }
    resp
}

/// Seconds since the Unix epoch.
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}
