//! MCP Apps (the `io.modelcontextprotocol/ui` extension; docs/chat-views.md): Vaider's results
//! as views inside the agent's chat. A client that declares the extension with the
//! `text/html;profile=mcp-app` type is told which view shows each tool's result
//! (`_meta.ui.resourceUri`), is offered two tools only the views may call
//! (`_meta.ui.visibility: ["app"]`), and gets in a linked tool's result the view's own data
//! under `_meta` (signed media links, one-time approval grants), which hosts pass to the view
//! and keep out of the model's context. Any other client gets exactly what it got before.

mod decide;
pub(crate) mod grant;
pub(crate) mod media;
pub(crate) mod views;

use axum::http::header;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, JsonObject, MetaObject, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{json, Map, Value};

use super::VaiderMcp;

pub use decide::view_data as review_view_data;

/// The extension's id in `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";
/// The type of a view's HTML, which the client must list among its `mimeTypes`.
pub const MIME_TYPE: &str = "text/html;profile=mcp-app";
/// The key, in a result's `_meta`, of the data only the view reads.
pub const VIEW_META: &str = "vaider/view";

/// What a view needs from the request whose result it shows.
#[derive(Debug, Clone)]
pub struct ViewContext {
    /// `http://127.0.0.1:PORT` as the client reached Vaider, where the view may load media
    /// from; None over stdio, where there is no listener and media travel as data.
    pub origin: Option<String>,
    /// The client's name, for the record of a decision made in its view.
    pub client: String,
}

impl ViewContext {
    /// The view context of a request from a client that shows views; None for any other.
    pub fn of(ctx: &RequestContext<RoleServer>) -> Option<ViewContext> {
        shows_views(ctx).then(|| ViewContext {
            origin: ViewContext::origin_of(ctx),
            client: ctx.client_info().map(|info| info.name).unwrap_or_default(),
        })
    }
}

/// Whether the client declared the extension with the HTML view type, on this request
/// (2026-07-28) or at its session's start (2025).
pub fn shows_views(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities()
        .and_then(|capabilities| capabilities.extensions)
        .and_then(|extensions| extensions.get(EXTENSION).cloned())
        .and_then(|settings| settings.get("mimeTypes").cloned())
        .and_then(|types| types.as_array().cloned())
        .is_some_and(|types| types.iter().any(|t| t.as_str() == Some(MIME_TYPE)))
}

impl ViewContext {
    /// `http://` and the Host the client sent (the guard lets only loopback names in); None
    /// when the request did not come over HTTP (stdio).
    pub fn origin_of(ctx: &RequestContext<RoleServer>) -> Option<String> {
        let parts = ctx.extensions.get::<axum::http::request::Parts>()?;
        let host = parts.headers.get(header::HOST)?.to_str().ok()?;
        let loopback = ["127.0.0.1:", "localhost:", "[::1]:"];
        loopback
            .iter()
            .any(|prefix| host.starts_with(prefix))
            .then(|| format!("http://{host}"))
    }
}

/// The tool list a client with views sees: each tool with a view names it, and the views'
/// own tools are added, marked for the view only. Other clients' lists are left as they are.
pub fn list(tools: &mut Vec<Tool>, ctx: &RequestContext<RoleServer>) {
    if !shows_views(ctx) {
        return;
    }
    for tool in tools.iter_mut() {
        if let Some(view) = views::of_tool(&tool.name) {
            set_ui(tool, json!({ "resourceUri": view.uri() }));
        }
    }
    tools.extend(app_tools());
}

/// The tools only views are offered; hosts keep them out of the model's list.
fn app_tools() -> Vec<Tool> {
    [media::tool(), decide::tool()]
        .into_iter()
        .filter_map(|definition| serde_json::from_value(definition).ok())
        .collect()
}

fn set_ui(tool: &mut Tool, ui: Value) {
    tool.meta
        .get_or_insert_with(MetaObject::new)
        .0
        .insert("ui".into(), ui);
}

/// A call of a view's own tool, answered here; None for any other tool, and for a client
/// without views, for which these tools do not exist (the call then fails as unknown).
pub async fn call(
    mcp: &VaiderMcp,
    request: &CallToolRequestParams,
    ctx: &RequestContext<RoleServer>,
) -> Option<Result<CallToolResponse, ErrorData>> {
    let view = ViewContext::of(ctx)?;
    let arguments = Value::Object(request.arguments.clone().unwrap_or_default());
    let result = match request.name.as_ref() {
        media::TOOL => media::call(&mcp.engine, arguments).await,
        decide::TOOL => decide::call(&mcp.engine, arguments, &view).await,
        _ => return None,
    };
    Some(Ok(result.into()))
}

/// Adds the view's data to the result of a tool whose view needs more than the result holds
/// (media links); results for clients without views are left untouched.
pub fn decorate(tool: &str, response: &mut CallToolResponse, ctx: &RequestContext<RoleServer>) {
    let CallToolResponse::Complete(result) = response else {
        return;
    };
    if result.is_error == Some(true) {
        return;
    }
    let Some(view) = ViewContext::of(ctx) else {
        return;
    };
    let Some(structured) = result.structured_content.as_ref() else {
        return;
    };
    if let Some(data) = media::for_result(tool, structured) {
        attach(result, &view, data);
    }
}

/// [`decorate`] for a result kept as JSON (a task's): the view's data made for this reader.
pub fn decorate_stored(tool: &str, result: &mut JsonObject, ctx: &RequestContext<RoleServer>) {
    // A reader that shows no views gets the result as kept, without a round trip through it.
    if ViewContext::of(ctx).is_none() {
        return;
    }
    let Ok(stored) = serde_json::from_value::<CallToolResult>(Value::Object(result.clone())) else {
        return;
    };
    let mut response = CallToolResponse::Complete(stored);
    decorate(tool, &mut response, ctx);
    if let CallToolResponse::Complete(decorated) = response {
        if let Ok(Value::Object(object)) = serde_json::to_value(&decorated) {
            *result = object;
        }
    }
}

/// Puts `data` (an object of the view's fields) under the result's `_meta`, with the origin
/// media load from and the size past which they are not sent as data.
pub fn attach(result: &mut CallToolResult, view: &ViewContext, data: Map<String, Value>) {
    let mut data = data;
    data.insert("origin".into(), json!(view.origin));
    data.insert("dataLimitBytes".into(), json!(media::DATA_LIMIT_BYTES));
    result
        .meta
        .get_or_insert_with(MetaObject::new)
        .0
        .insert(VIEW_META.into(), Value::Object(data));
}

/// A tool result that says something went wrong, for the view to show.
fn refusal(message: String) -> CallToolResult {
    let mut result = CallToolResult::error(vec![rmcp::model::ContentBlock::text(message.clone())]);
    result.structured_content = Some(json!({ "success": false, "error": message }));
    result
}
