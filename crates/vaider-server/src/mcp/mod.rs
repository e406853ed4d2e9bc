//! The MCP door, served over Streamable HTTP at `/mcp` and over stdio: one module of tools per
//! capability (`analysis`, `status`, `visual`, `validate`, `qa`), each an `impl VaiderMcp` with its own router; this file
//! joins the routers and answers the protocol. Each tool call is a request for the one pipeline.
//!
//! Adding a tool to a capability touches only that capability's file; a new capability is a
//! new module whose router is added in [`VaiderMcp::new`].

pub mod analysis;
mod call;
mod progress;
mod qa;
mod schema;
mod status;
pub mod validate;
mod visual;

use std::sync::Arc;

use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::Response;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::model::{Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool_handler, ServerHandler};
use vaider_core::Vaider;

pub use call::CommonArgs;

#[derive(Clone)]
pub struct VaiderMcp {
    engine: Arc<Vaider>,
    tool_router: ToolRouter<Self>,
}

impl VaiderMcp {
    pub fn new(engine: Arc<Vaider>) -> Self {
        let tools = Self::analysis_tools()
            + Self::status_tools()
            + Self::visual_tools()
            + Self::validate_tools()
            + Self::qa_tools();
        VaiderMcp {
            engine,
            tool_router: schema::standard_schemas(tools),
        }
    }
}

#[tool_handler(router = self.tool_router)]
impl ServerHandler for VaiderMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(
                Implementation::new("vaider", vaider_core::VERSION).with_title("Vaider"),
            )
            .with_instructions(
                "Vaider is your eyes: analyze_video describes a GUI test recording step by step \
                 (give `expectations` to get verdicts), analyze_image describes a screenshot, \
                 validate_test runs a Playwright test and judges it (and its video), \
                 generate_test_plan and run_test_plan write and run QA test plans in a local browser. \
                 Limits: 5 mismatch retries, 3 Vaider-error retries, 30 s timeout per call \
                 (raise timeout_sec for long videos). See VaiderRules.txt.",
            )
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
