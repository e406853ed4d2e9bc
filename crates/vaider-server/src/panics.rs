//! The net under "no input may panic": a panic that still slips through becomes an answer (a
//! 500 in the REST contract's error shape, an `INTERNAL` error for an MCP request) and one log
//! line without a backtrace, instead of a dropped connection and a server grown tenfold.
//! `tests/no_panic.rs` looks for the panics themselves.

use std::any::Any;
use std::borrow::Cow;
use std::future::Future;
use std::panic::AssertUnwindSafe;

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use futures_util::FutureExt;
use rmcp::model::*;
use rmcp::service::{
    MaybeSendFuture, NotificationContext, RequestContext, RoleServer, SubscriptionContext,
};
use rmcp::{ErrorData as McpError, ServerHandler};

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

/// An MCP server whose tool calls are answered even when they panic. rmcp runs each request
/// in its own task and sends nothing when that task panics, so without this the client waits
/// for an answer that never comes. Every other method is the wrapped server's own (the list
/// is rmcp 3.11's `ServerHandler`, as its own `Arc` wrapper delegates it). It is listed by hand
/// because rmcp leaves no other way: the Streamable HTTP transport takes a `ServerHandler`
/// (`StreamableHttpService::new`), rmcp's delegating macro is private, and its `Arc`/`Box`
/// wrappers delegate without a hook. rmcp is pinned (`=3.11.0`), so a new method comes only
/// with a deliberate upgrade, which must add it here.
#[derive(Clone)]
pub struct AnswersPanics<S>(pub S);

#[allow(deprecated)]
impl<S: ServerHandler> ServerHandler for AnswersPanics<S> {
    fn ping(
        &self,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        self.0.ping(context)
    }

    fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<InitializeResult, McpError>> + MaybeSendFuture + '_ {
        self.0.initialize(request, context)
    }

    fn negotiate_initialize(
        &self,
        request: &InitializeRequestParams,
    ) -> Result<InitializeResult, McpError> {
        self.0.negotiate_initialize(request)
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        self.0.supported_protocol_versions()
    }

    fn discover(
        &self,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<DiscoverResult, McpError>> + MaybeSendFuture + '_ {
        self.0.discover(context)
    }

    fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CompleteResult, McpError>> + MaybeSendFuture + '_ {
        self.0.complete(request, context)
    }

    fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        self.0.set_level(request, context)
    }

    fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetPromptResponse, McpError>> + MaybeSendFuture + '_ {
        self.0.get_prompt(request, context)
    }

    fn list_prompts(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListPromptsResult, McpError>> + MaybeSendFuture + '_ {
        self.0.list_prompts(request, context)
    }

    fn list_resources(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourcesResult, McpError>> + MaybeSendFuture + '_ {
        self.0.list_resources(request, context)
    }

    fn list_resource_templates(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListResourceTemplatesResult, McpError>> + MaybeSendFuture + '_
    {
        self.0.list_resource_templates(request, context)
    }

    fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceResponse, McpError>> + MaybeSendFuture + '_ {
        self.0.read_resource(request, context)
    }

    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        self.0.accepted_subscription_filter(requested)
    }

    fn listen(
        &self,
        context: SubscriptionContext,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        self.0.listen(context)
    }

    fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        self.0.subscribe(request, context)
    }

    fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        self.0.unsubscribe(request, context)
    }

    /// The one method that differs: a panicking tool call is answered.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // A client that cancels a call (notifications/cancelled) gives up its place in any
        // queue and its upstream work, for every tool, as a REST client that closes its
        // request does: the call's future is dropped.
        let cancelled = context.ct.clone();
        let called = tokio::select! {
            called = AssertUnwindSafe(self.0.call_tool(request, context)).catch_unwind() => called,
            _ = cancelled.cancelled() => {
                return Err(McpError::internal_error("the client cancelled the call", None));
            }
        };
        called.unwrap_or_else(|payload| {
            tracing::error!(
                panic = text_of(payload.as_ref()),
                "an MCP tool call panicked; it was answered with an INTERNAL error"
            );
            // A failure is a result with isError, as every other tool failure is, so
            // the agent reads it like any other.
            Ok(CallToolResponse::Complete(CallToolResult::error(vec![
                ContentBlock::text(format!("INTERNAL: {ANSWER}")),
            ])))
        })
    }

    fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListToolsResult, McpError>> + MaybeSendFuture + '_ {
        self.0.list_tools(request, context)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.0.get_tool(name)
    }

    fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<CustomResult, McpError>> + MaybeSendFuture + '_ {
        self.0.on_custom_request(request, context)
    }

    fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.0.on_cancelled(notification, context)
    }

    fn on_progress(
        &self,
        notification: ProgressNotificationParam,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.0.on_progress(notification, context)
    }

    fn on_initialized(
        &self,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.0.on_initialized(context)
    }

    fn on_roots_list_changed(
        &self,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.0.on_roots_list_changed(context)
    }

    fn on_custom_notification(
        &self,
        notification: CustomNotification,
        context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + MaybeSendFuture + '_ {
        self.0.on_custom_notification(notification, context)
    }

    fn get_info(&self) -> ServerConfig {
        self.0.get_info()
    }

    fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetTaskResult, McpError>> + MaybeSendFuture + '_ {
        self.0.get_task(request, context)
    }

    fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        self.0.update_task(request, context)
    }

    fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<(), McpError>> + MaybeSendFuture + '_ {
        self.0.cancel_task(request, context)
    }

    fn list_skills(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ListSkillsResult, McpError>> + MaybeSendFuture + '_ {
        self.0.list_skills(request, context)
    }

    fn get_skill(
        &self,
        request: GetSkillRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<GetSkillResult, McpError>> + MaybeSendFuture + '_ {
        self.0.get_skill(request, context)
    }

    fn read_resource_directory(
        &self,
        request: ReadResourceDirectoryRequestParams,
        context: RequestContext<RoleServer>,
    ) -> impl Future<Output = Result<ReadResourceDirectoryResult, McpError>> + MaybeSendFuture + '_
    {
        self.0.read_resource_directory(request, context)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::routing::get;
    use rmcp::ServiceExt;
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
        let answer = call_boom(AnswersPanics(Boom)).await.unwrap();
        assert_eq!(answer.is_error, Some(true));
        let text = answer.content[0].as_text().unwrap().text.clone();
        assert_eq!(text, format!("INTERNAL: {ANSWER}"));
    }

    /// Every other method is the wrapped server's (here: its initialize answer).
    #[tokio::test]
    async fn what_did_not_panic_is_the_wrapped_servers_own() {
        let client = connect(AnswersPanics(Boom)).await;
        let info = client.peer_info().expect("the server's initialize answer");
        assert_eq!(info.instructions.as_deref(), Some("the boom server"));
        assert!(info.capabilities.tools.is_some());
    }
}
