//! The net under "no input may panic": a panic that still slips through becomes an answer (a
//! 500 in the REST contract's error shape, an `INTERNAL` error for an MCP request) and one log
//! line without a backtrace, instead of a dropped connection and a server grown tenfold.
//! `tests/no_panic.rs` looks for the panics themselves.

use std::any::Any;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock};
use rmcp::ErrorData as McpError;
use tokio_util::sync::CancellationToken;

use crate::api_error::ApiError;

/// What a client is told when its request panicked. Not the panic's own message: that may quote
/// whatever string was being sliced, and the file being read may be a secret.
pub const ANSWER: &str = "Vaider failed unexpectedly while handling this request (a bug; the server log has the details). Retry; if it happens again, report it with the log.";

/// The panic's message, when it has one.
fn text_of(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("a panic without a message")
}

/// The answer to an HTTP request that panicked (tower-http's `CatchPanicLayer` calls it).
pub fn http_answer(payload: Box<dyn Any + Send + 'static>) -> Response {
    tracing::error!(
        panic = text_of(payload.as_ref()),
        "a request panicked; it was answered 500 INTERNAL"
    );
    ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "INTERNAL", ANSWER).into_response()
}

/// Prints a panic as one log line with where it happened, and no backtrace even when
/// `RUST_BACKTRACE` is set: resolving a backtrace's symbols grew the server from 20 MB to over
/// 200 MB, and the request is answered anyway. For long-running servers (`vaider serve`,
/// `vaider stdio`); a panic hook is the whole process's, so libraries do not set it.
pub fn install_quiet_hook() {
    std::panic::set_hook(Box::new(|info| {
        let message = text_of(info.payload());
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_else(|| "an unknown place".into());
        if tracing::dispatcher::has_been_set() {
            tracing::error!(%location, "panic: {message}");
        } else {
            eprintln!("Vaider panicked at {location}: {message}");
        }
    }));
}

/// A tool call, answered even when it panics or its client cancels it. rmcp runs each request
/// in its own task and sends nothing when that task panics, so without this the client waits
/// for an answer that never comes. The MCP server's `call_tool` runs every call through it:
/// rmcp 3.11 has no way to wrap a handler generically (the Streamable HTTP transport takes a
/// `ServerHandler`, whose delegating macro is private), so the net is on the one method that
/// needs it rather than on a wrapper repeating the other thirty.
pub async fn answered<F>(
    call: F,
    cancelled: CancellationToken,
) -> Result<CallToolResponse, McpError>
where
    F: Future<Output = Result<CallToolResponse, McpError>>,
{
    // A client that cancels a call (notifications/cancelled) gives up its place in any queue
    // and its upstream work, for every tool, as a REST client that closes its request does:
    // the call's future is dropped.
    let called = tokio::select! {
        called = AssertUnwindSafe(call).catch_unwind() => called,
        _ = cancelled.cancelled() => {
            return Err(McpError::internal_error("the client cancelled the call", None));
        }
    };
    called.unwrap_or_else(|payload| {
        tracing::error!(
            panic = text_of(payload.as_ref()),
            "an MCP tool call panicked; it was answered with an INTERNAL error"
        );
        // A failure is a result with isError, as every other tool failure is, so the agent
        // reads it like any other.
        Ok(CallToolResponse::Complete(CallToolResult::error(vec![
            ContentBlock::text(format!("INTERNAL: {ANSWER}")),
        ])))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use rmcp::model::{CallToolRequestParams, ServerCapabilities, ServerConfig};
    use rmcp::service::{RequestContext, RoleServer};
    use rmcp::{ServerHandler, ServiceExt};
    use std::time::Duration;
    use tower::ServiceExt as _;

    async fn boom() -> &'static str {
        panic!("boom")
    }

    #[tokio::test]
    async fn a_panicking_request_is_answered_500_in_the_contracts_shape() {
        let app = axum::Router::new().route("/boom", get(boom)).layer(
            tower_http::catch_panic::CatchPanicLayer::custom(http_answer),
        );
        let request = axum::http::Request::get("/boom")
            .body(axum::body::Body::empty())
            .unwrap();
        let response = app.oneshot(request).await.unwrap();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let body = axum::body::to_bytes(response.into_body(), 1 << 16)
            .await
            .unwrap();
        let body: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["error"]["code"], "INTERNAL");
        assert_eq!(body["error"]["message"], ANSWER);
    }

    /// A server whose only tool panics.
    #[derive(Clone)]
    struct Boom;

    impl ServerHandler for Boom {
        async fn call_tool(
            &self,
            _request: CallToolRequestParams,
            _context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, McpError> {
            panic!("boom")
        }

        fn get_info(&self) -> ServerConfig {
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
                .with_instructions("the boom server")
        }
    }

    /// The same server with its tool calls run through [`answered`], as Vaider's are.
    #[derive(Clone)]
    struct Netted;

    impl ServerHandler for Netted {
        async fn call_tool(
            &self,
            request: CallToolRequestParams,
            context: RequestContext<RoleServer>,
        ) -> Result<CallToolResponse, McpError> {
            let cancelled = context.ct.clone();
            answered(Boom.call_tool(request, context), cancelled).await
        }

        fn get_info(&self) -> ServerConfig {
            Boom.get_info()
        }
    }

    /// Connects an MCP client to `server` over an in-memory connection.
    async fn connect<S: ServerHandler>(
        server: S,
    ) -> rmcp::service::RunningService<rmcp::RoleClient, ()> {
        let (server_side, client_side) = tokio::io::duplex(1 << 16);
        tokio::spawn(async move {
            if let Ok(running) = server.serve(server_side).await {
                let _ = running.waiting().await;
            }
        });
        ().serve(client_side).await.unwrap()
    }

    /// Calls the tool of `server`; none after two seconds.
    async fn call_boom<S: ServerHandler>(server: S) -> Option<CallToolResult> {
        let client = connect(server).await;
        let call = client.call_tool(CallToolRequestParams::new("boom"));
        let answer = tokio::time::timeout(Duration::from_secs(2), call)
            .await
            .ok();
        answer.map(|result| result.unwrap())
    }

    #[tokio::test]
    async fn a_panicking_tool_call_is_answered_with_an_internal_error() {
        // rmcp alone sends nothing: the client would wait for ever.
        assert!(call_boom(Boom).await.is_none());
        let answer = call_boom(Netted).await.unwrap();
        assert_eq!(answer.is_error, Some(true));
        let text = answer.content[0].as_text().unwrap().text.clone();
        assert_eq!(text, format!("INTERNAL: {ANSWER}"));
    }

    /// Every other method is the server's own (here: its initialize answer).
    #[tokio::test]
    async fn what_did_not_panic_is_the_servers_own() {
        let client = connect(Netted).await;
        let info = client.peer_info().expect("the server's initialize answer");
        assert_eq!(info.instructions.as_deref(), Some("the boom server"));
        assert!(info.capabilities.tools.is_some());
    }
}
