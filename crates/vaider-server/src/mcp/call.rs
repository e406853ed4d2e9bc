//! The path every analysis tool shares: its common arguments, the pipeline request built from
//! them with the call's workspace, and the result an agent reads (text and the same sentences
//! in `structuredContent`) or the error it can act on (`isError`).

use std::time::Duration;

use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, InputResponses};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;
use vaider_core::analysis::{AnalysisResult, TaskOptions};
use vaider_core::{AnalysisRequest, Door, Tool};

use super::answer::answer;
use super::workspace::Need;
use super::VaiderMcp;
use crate::api_error::Mapped;

/// Arguments every analysis tool shares.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct CommonArgs {
    /// Statements the media should show, e.g. "after login the dashboard says 'Welcome'"; each
    /// gets a verdict (met, not_met, unclear) with evidence.
    #[serde(default)]
    pub expectations: Vec<String>,
    /// Another provider than the configured one: gemini, openai, zai, anthropic, ollama,
    /// lmstudio, vllm, bedrock, or one from the config.
    #[serde(default)]
    pub provider: String,
    /// Another model, e.g. "gemini-3.5-flash".
    #[serde(default)]
    pub model: String,
    /// Time limit in seconds, upload included (default 30; long videos: 1 s per second + 30).
    #[serde(default)]
    pub timeout_sec: u64,
    /// Ask the model again even when the same bytes were asked the same thing before.
    #[serde(default)]
    pub no_cache: bool,
    /// The project folder a relative path is relative to (default: the client's workspace).
    #[serde(default)]
    pub cwd: String,
}

impl VaiderMcp {
    /// Runs one analysis tool call through the pipeline and turns the outcome into a tool
    /// result; first asks a 2026-07-28 client for its roots when a relative path needs them.
    pub(super) async fn run_request(
        &self,
        mut request: AnalysisRequest,
        cwd: String,
        ctx: RequestContext<RoleServer>,
        answers: Option<InputResponses>,
    ) -> Result<CallToolResponse, ErrorData> {
        let mut sources = vec![request.source.as_str()];
        sources.extend(request.compare_with.as_deref());
        let need = Need::for_sources(&cwd, &sources);
        let workspace = match self.workspace(&ctx, answers.as_ref(), need).await {
            Ok(workspace) => workspace,
            Err(ask) => return Ok(ask.into()),
        };
        request.base_dirs = workspace.folders().to_vec();
        let progress = self.progress(&ctx);
        let outcome = self.engine.analyse(request, &progress).await;
        drop(progress);
        Ok(match outcome {
            Ok(result) => analysis_answer(&result),
            // Failures are tool results with isError, so the agent reads them and can act.
            Err(failure) => {
                let mut text = Mapped::from(&failure.error).line();
                if let Some(id) = &failure.interaction_id {
                    text.push_str(&format!("\n(interactionId {id})"));
                }
                CallToolResult::error(vec![ContentBlock::text(text)])
            }
        }
        .into())
    }
}

/// A tool call's arguments as a pipeline request, and the `cwd` it named.
pub(super) fn request_from(
    tool: Tool,
    source: String,
    prompt: String,
    options: TaskOptions,
    common: CommonArgs,
) -> (AnalysisRequest, String) {
    let mut request = AnalysisRequest::new(tool, Door::Mcp, source);
    request.prompt = non_empty(prompt);
    request.options = options;
    request.expectations = common.expectations;
    request.provider = non_empty(common.provider);
    request.model = non_empty(common.model);
    request.timeout = timeout_of(common.timeout_sec);
    request.no_cache = common.no_cache;
    (request, common.cwd)
}

fn timeout_of(seconds: u64) -> Option<Duration> {
    (seconds > 0).then(|| Duration::from_secs(seconds))
}

pub(super) fn non_empty(text: String) -> Option<String> {
    (!text.trim().is_empty()).then_some(text)
}

/// An analysis as the agent reads it: the description and the verdicts, then the notes
/// (fitting, sampling, cost, where the record is), which are also `summary`.
fn analysis_answer(result: &AnalysisResult) -> CallToolResult {
    let told = crate::text::analysis(result);
    let structured = serde_json::to_value(result).unwrap_or_default();
    answer(told.whole(), told.notes, structured, false)
}
