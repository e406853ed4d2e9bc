//! The path every analysis tool shares: its common arguments, the pipeline request built from
//! them, the client's roots for relative paths, and the result an agent reads (text and
//! `structuredContent`) or the error it can act on (`isError`).

use std::path::PathBuf;
use std::time::Duration;

use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;
use vaider_core::analysis::{AnalysisResult, TaskOptions, Verdict};
use vaider_core::{AnalysisRequest, Door, Tool};

use super::progress::McpProgress;
use super::VaiderMcp;

/// Arguments every analysis tool shares.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct CommonArgs {
    /// Statements the media should show, e.g. "after login the dashboard says 'Welcome'". Each
    /// gets a verdict (met, not_met, unclear) with the evidence.
    #[serde(default)]
    pub expectations: Vec<String>,
    /// The provider to ask instead of the configured one: gemini, openai, zai, anthropic,
    /// ollama, lmstudio, vllm, bedrock, or one added in the config.
    #[serde(default)]
    pub provider: String,
    /// The model to use instead of the provider's configured one, e.g. "gemini-2.5-pro".
    #[serde(default)]
    pub model: String,
    /// Time limit in seconds for the whole call, upload included (default 30). Long videos
    /// need about 1 s per second of video plus 30 s.
    #[serde(default)]
    pub timeout_sec: u64,
    /// Ask the model again even if the same bytes were asked the same thing before.
    #[serde(default)]
    pub no_cache: bool,
    /// The folder a relative path is relative to, when the client has no workspace roots.
    #[serde(default)]
    pub cwd: String,
}

impl VaiderMcp {
    /// Runs one analysis tool call through the pipeline and turns the outcome into a tool result.
    pub(super) async fn run(
        &self,
        tool: Tool,
        source: String,
        prompt: String,
        options: TaskOptions,
        common: CommonArgs,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let (request, cwd) = request_from(tool, source, prompt, options, common);
        self.run_request(request, cwd, ctx).await
    }

    /// [`VaiderMcp::run`] for a request a tool built itself (e.g. with a second image).
    pub(super) async fn run_request(
        &self,
        mut request: AnalysisRequest,
        cwd: String,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        request.base_dirs = client_roots(&ctx).await;
        if !cwd.trim().is_empty() {
            request.base_dirs.push(PathBuf::from(cwd.trim()));
        }
        let progress = McpProgress::start(&ctx);
        let outcome = self.engine.analyse(request, &progress).await;
        drop(progress);
        Ok(match outcome {
            Ok(result) => {
                let structured = serde_json::to_value(&result).unwrap_or_default();
                let mut answer = CallToolResult::success(vec![
                    ContentBlock::text(readable(&result)),
                    ContentBlock::text(structured.to_string()),
                ]);
                answer.structured_content = Some(structured);
                answer
            }
            // Failures are tool results with isError, so the agent reads them and can act.
            Err(failure) => {
                let mut text = format!("{}: {}", failure.error.code().as_str(), failure.error);
                if let Some(id) = &failure.interaction_id {
                    text.push_str(&format!("\n(interactionId {id})"));
                }
                CallToolResult::error(vec![ContentBlock::text(text)])
            }
        })
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

/// The text an agent reads: the description, the verdicts, then where the record is kept.
fn readable(result: &AnalysisResult) -> String {
    let mut text = result.description.trim().to_string();
    if !result.expectations.is_empty() {
        text.push_str("\n\nExpectations:\n");
        for e in &result.expectations {
            let mark = match e.verdict {
                Verdict::Met => "MET",
                Verdict::NotMet => "NOT MET",
                Verdict::Unclear => "UNCLEAR",
            };
            text.push_str(&format!("- [{mark}] {} — {}\n", e.expectation, e.evidence));
        }
    }
    if let Some(details) = &result.details {
        text.push_str(&format!("\n\nDetails: {details}"));
    }
    if !result.adaptations.is_empty() {
        text.push_str(&format!(
            "\n\n(Adapted for the provider: {}.)",
            result.adaptations.join("; ")
        ));
    }
    if let Some(sampling) = &result.sampling {
        text.push_str(&format!(
            "\n\n({}.)",
            sampling.summary(result.usage.input_tokens)
        ));
    }
    text.push_str(&format!(
        "\n\n({} {}, {} ms, {} in / {} out tokens, ${:.6}{}; interactionId {}; log {})",
        result.provider,
        result.model,
        result.duration_ms,
        result.usage.input_tokens,
        result.usage.output_tokens,
        result.cost_usd,
        if result.cached { ", cached" } else { "" },
        result.interaction_id,
        result.log_dir
    ));
    text
}

/// The client's workspace folders, when it offers them (`roots/list`). Roots are deprecated in
/// the 2026 spec, but the 2025 clients in the field (Cursor, Claude Code, VS Code) still send
/// them, and they are the only way to learn what a relative path is relative to.
#[allow(deprecated)]
pub(super) async fn client_roots(ctx: &RequestContext<RoleServer>) -> Vec<PathBuf> {
    let offers_roots = ctx
        .peer
        .peer_info()
        .is_some_and(|info| info.capabilities.roots.is_some());
    if !offers_roots {
        return Vec::new();
    }
    match tokio::time::timeout(Duration::from_secs(3), ctx.peer.list_roots()).await {
        Ok(Ok(list)) => list
            .roots
            .iter()
            .filter_map(|root| root.uri.strip_prefix("file://"))
            .map(|path| PathBuf::from(vaider_core::source::percent_decode(path)))
            .collect(),
        _ => Vec::new(),
    }
}
