//! The MCP door, served over Streamable HTTP at `/mcp` and over stdio, in both protocol
//! revisions clients speak: 2025-06-18/2025-11-25 (sessions, `initialize`) and the stateless
//! 2026-07-28 (`server/discover`, per-request `_meta`), chosen per request from the version
//! the client sends (the MCP library does the wire; see `docs/mcp.md`). One registry of tools
//! serves both: one module of tools per capability (`analysis`, `status`, `visual`, `review`,
//! `validate`, `qa`), each an `impl VaiderMcp` with its own router, joined once here. Each
//! tool call is a request for the one pipeline.
//!
//! Live 2025 sessions are capped in [`sessions`]. Long calls may run as MCP tasks, on either
//! revision ([`tasks`]).
//!
//! Adding a tool to a capability touches only that capability's file; a new capability is a
//! new module whose router is added in [`registry`].

pub mod analysis;
mod answer;
pub mod apps;
mod ask;
mod call;
mod progress;
mod qa;
mod resources;
mod review;
mod schema;
pub mod sessions;
pub mod sse;
mod status;
pub mod tasks;
pub mod tool_set;
pub mod validate;
pub mod visual;
mod workspace;

use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams,
    GetTaskResult, Implementation, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, PaginatedRequestParams, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ResultType, ServerCapabilities, ServerConfig, Tool, UpdateTaskParams,
};
#[allow(deprecated)]
use rmcp::model::{LoggingLevel, SetLevelRequestParams};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use vaider_core::Vaider;

pub use call::CommonArgs;
pub use tool_set::ToolSet;

/// How long a 2026-07-28 client may keep the tool list: it changes only with Vaider's version.
const TOOLS_TTL_MS: u64 = 5 * 60 * 1000;

#[derive(Clone)]
pub struct VaiderMcp {
    engine: Arc<Vaider>,
    tool_router: ToolRouter<Self>,
    /// The tools offered when a request names no set of its own (`vaider stdio --tools`).
    tools: ToolSet,
    /// Served to the one client that started this process (stdio): the process's working
    /// folder is that client's project.
    stdio: bool,
    /// The log level a 2025 session set (`logging/setLevel`); one server per session.
    #[allow(deprecated)]
    log_level: Arc<Mutex<Option<LoggingLevel>>>,
    /// The calls running as tasks, shared by every session of the server.
    tasks: tasks::Tasks,
}

/// Every tool, built once: schemas made standard, the same for every session and revision.
fn registry() -> &'static ToolRouter<VaiderMcp> {
    static REGISTRY: OnceLock<ToolRouter<VaiderMcp>> = OnceLock::new();
    REGISTRY.get_or_init(|| {
        let tools = VaiderMcp::analysis_tools()
            + VaiderMcp::status_tools()
            + VaiderMcp::visual_tools()
            + VaiderMcp::validate_tools()
            + VaiderMcp::qa_tools()
            + VaiderMcp::review_tools();
        schema::standard_schemas(tools)
    })
}

/// The names of every tool, in the order they are listed.
pub fn tool_names() -> Vec<&'static str> {
    static NAMES: OnceLock<Vec<String>> = OnceLock::new();
    NAMES
        .get_or_init(|| {
            registry()
                .list_all()
                .into_iter()
                .map(|tool| tool.name.into_owned())
                .collect()
        })
        .iter()
        .map(String::as_str)
        .collect()
}

impl VaiderMcp {
    /// Calls a tool and puts its chat view's data on the answer. A call that panics is
    /// answered all the same; one that is `cancelled` stops here.
    pub(crate) async fn answer_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
        cancelled: tokio_util::sync::CancellationToken,
    ) -> Result<CallToolResponse, ErrorData> {
        let (name, view_ctx) = (request.name.clone(), ctx.clone());
        let mut answer = self.call_tool_plain(request, ctx, cancelled).await;
        if let Ok(response) = answer.as_mut() {
            apps::decorate(&name, response, &view_ctx);
        }
        answer
    }

    /// Calls a tool: its answer without a chat view's data (a task's result, which gets it
    /// when it is read).
    pub(crate) async fn call_tool_plain(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
        cancelled: tokio_util::sync::CancellationToken,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = ToolCallContext::new(self, request, ctx);
        crate::panics::answered(self.tool_router.call(call), cancelled).await
    }

    /// The server of the HTTP endpoint: every tool unless a request's URL names a set.
    pub fn new(engine: Arc<Vaider>) -> Self {
        VaiderMcp {
            tool_router: registry().clone(),
            tools: ToolSet::All,
            stdio: false,
            log_level: Arc::default(),
            tasks: tasks::Tasks::new(engine.history().clone()),
            engine,
        }
    }

    /// Shares `tasks` with the other sessions (and the 2025-11-25 translation) of a server.
    pub fn with_tasks(self, tasks: tasks::Tasks) -> Self {
        VaiderMcp { tasks, ..self }
    }

    /// The server of `vaider stdio`, offering `tools`.
    pub fn for_stdio(engine: Arc<Vaider>, tools: ToolSet) -> Self {
        VaiderMcp {
            tools,
            stdio: true,
            ..VaiderMcp::new(engine)
        }
    }

    /// What the client hears while this call runs (progress, log messages).
    fn progress(&self, ctx: &RequestContext<RoleServer>) -> progress::McpProgress {
        let level = self.log_level.lock().ok().and_then(|level| *level);
        progress::McpProgress::start(ctx, level)
    }

    /// The tools this request may see: its URL's `?tools=` (HTTP), else the server's own.
    fn tool_set(&self, ctx: &RequestContext<RoleServer>) -> ToolSet {
        ctx.extensions
            .get::<axum::http::request::Parts>()
            .and_then(|parts| parts.extensions.get::<ToolSet>())
            .cloned()
            .unwrap_or_else(|| self.tools.clone())
    }
}

impl ServerHandler for VaiderMcp {
    fn get_info(&self) -> ServerConfig {
        #[allow(deprecated)] // logging: 2025 clients still set a level (`set_level`)
        let mut capabilities = ServerCapabilities::builder()
            .enable_tools()
            .enable_logging()
            .enable_tasks()
            .enable_resources()
            .build();
        // MCP Apps: views for the clients that show them (`apps`).
        capabilities
            .extensions
            .get_or_insert_default()
            .insert(apps::EXTENSION.into(), Default::default());
        ServerConfig::new(capabilities)
            .with_server_info(
                Implementation::new("vaider", vaider_core::VERSION).with_title("Vaider"),
            )
            .with_instructions(
                "Vaider is your eyes on GUIs: analyze_video (a test recording), analyze_image \
                 (a screenshot), validate_test (run and judge a Playwright test), visual_compare \
                 (what a change did). Relative paths are relative to the project. See \
                 VaiderRules.txt.",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let set = self.tool_set(&ctx);
        let cache_hints = ctx
            .protocol_version()
            .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
        let mut result = ListToolsResult::with_all_items(
            self.tool_router
                .list_all()
                .into_iter()
                .filter(|tool| set.contains(&tool.name))
                .collect(),
        );
        result.result_type = Some(ResultType::COMPLETE);
        apps::list(&mut result.tools, &ctx);
        if cache_hints {
            result.ttl_ms = Some(TOOLS_TTL_MS);
            result.cache_scope = Some(CacheScope::Public);
        }
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The views' own tools, for clients that show views.
        if let Some(answer) = apps::call(self, &request, &ctx).await {
            return answer;
        }
        if !self.tool_set(&ctx).contains(&request.name) {
            return Err(ErrorData::invalid_params(
                format!(
                    "tool {} is not offered on this connection (its tool set leaves it out); \
                     connect without ?tools= (or --tools) to have every tool",
                    request.name
                ),
                None,
            ));
        }
        if let Some(started) = self.as_task(&request, &ctx).await {
            return started;
        }
        let cancelled = ctx.ct.clone();
        self.answer_tool(request, ctx, cancelled).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(resources::list(&ctx))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(resources::templates(&ctx))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        resources::read(&request, &ctx).map(Into::into)
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tool_router.get(name).cloned()
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.task_get(request, ctx).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.task_update(request, ctx).await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.task_cancel(request, ctx).await
    }

    /// A 2025 session's log level; a 2026-07-28 request carries its own in `_meta`.
    #[allow(deprecated)]
    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        _ctx: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if let Ok(mut level) = self.log_level.lock() {
            *level = Some(request.level);
        }
        Ok(())
    }
}

/// Middleware for `/mcp`: a session ended by `DELETE` answers 200 rather than rmcp's 202,
/// which the official Python SDK logs as "Session termination failed: 202" on every close.
/// The spec gives no status for this; its reference servers answer 200.
pub async fn session_end_answers_200(request: Request, next: Next) -> Response {
    let deleting = request.method() == Method::DELETE;
    let mut response = next.run(request).await;
    if deleting && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}
