//! `vaider_status`: whether Vaider is running and ready (version, provider, model, key,
//! server time, every provider and the tools it serves), for an agent's first call.

use rmcp::handler::server::common::schema_for_output;
use rmcp::model::CallToolResult;
use rmcp::{tool, tool_router, ErrorData};
use vaider_core::pipeline::StatusReport;

use super::answer::said;
use super::VaiderMcp;

#[tool_router(router = status_tools, vis = "pub(super)")]
impl VaiderMcp {
    /// Check that Vaider is ready (version, provider, model, API key); call it once first.
    #[tool(name = "vaider_status", output_schema = schema_for_output::<StatusReport>())]
    async fn vaider_status(&self) -> Result<CallToolResult, ErrorData> {
        let status = self.engine.status().await;
        let structured = serde_json::to_value(&status).unwrap_or_default();
        let sentence = format!(
            "Vaider {} is running. Provider {}, model {}. API key: {}. Server time {}.",
            status.version,
            status.provider,
            status.model,
            match &status.key_source {
                Some(source) => format!("configured ({source})"),
                None => "NOT configured: ask the user to run `vaider key set`".to_string(),
            },
            status.server_time
        );
        Ok(said(sentence, structured, false))
    }
}
