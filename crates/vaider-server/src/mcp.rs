//! The MCP door: `analyze_video`, `analyze_image` and `vaider_status`, served over Streamable
//! HTTP at `/mcp` and over stdio. Each tool call becomes an [`AnalysisRequest`] for the one
//! pipeline; progress goes back as MCP progress notifications when the client asks for them.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{
    CallToolResult, ContentBlock, Implementation, ProgressNotificationParam, ServerCapabilities,
    ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_handler, tool_router, ErrorData, RoleServer, ServerHandler};
use schemars::JsonSchema;
use serde::Deserialize;
use vaider_core::analysis::{AnalysisResult, TaskOptions, Verdict};
use vaider_core::pipeline::StatusReport;
use vaider_core::progress::{Progress, ProgressSink};
use vaider_core::{AnalysisRequest, Door, Tool, Vaider};

/// Arguments every analysis tool shares.
#[derive(Debug, Default, Deserialize, JsonSchema)]
pub struct CommonArgs {
    /// Statements the media should show, e.g. "after login the dashboard says 'Welcome'". Each
    /// gets a verdict (met, not_met, unclear) with the evidence.
    #[serde(default)]
    pub expectations: Vec<String>,
    /// The provider to ask instead of the configured one: gemini, openai, zai, anthropic,
    /// ollama, lmstudio, vllm, or one added in the config.
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

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AnalyzeVideoArgs {
    /// The video to look at: a path (absolute, or relative to the workspace root), an http(s)
    /// URL or a data: URL. Playwright writes test-results/<test>/video.webm. WebM, MP4, MOV,
    /// AVI, up to 2 GB.
    #[serde(alias = "videoSource")]
    pub video_source: String,
    /// What to look for. Default: a step-by-step description of what happens on screen, with
    /// timestamps.
    #[serde(default)]
    pub prompt: String,
    #[serde(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AnalyzeImageArgs {
    /// The screenshot or image: a path (absolute, or relative to the workspace root), an
    /// http(s) URL or a data: URL. PNG, JPEG, WebP or GIF.
    #[serde(alias = "imageSource")]
    pub image_source: String,
    /// What to look for, e.g. "Is the error message red and below the password field?".
    #[serde(default)]
    pub prompt: String,
    #[serde(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct UiToArtifactArgs {
    /// The UI screenshot: a path, an http(s) URL or a data: URL.
    #[serde(alias = "imageSource")]
    pub image_source: String,
    /// What to produce: "code" (default), "prompt", "spec" or "description".
    #[serde(default, alias = "outputType")]
    pub output_type: String,
    /// Extra instructions, e.g. "React with Tailwind".
    #[serde(default)]
    pub prompt: String,
    #[serde(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ExtractTextArgs {
    /// The screenshot: a path, an http(s) URL or a data: URL.
    #[serde(alias = "imageSource")]
    pub image_source: String,
    /// The language of code in the image, if any, e.g. "python".
    #[serde(default, alias = "programmingLanguage")]
    pub programming_language: String,
    #[serde(default)]
    pub prompt: String,
    #[serde(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct DiagnoseErrorArgs {
    /// The screenshot of the error: a path, an http(s) URL or a data: URL.
    #[serde(alias = "imageSource")]
    pub image_source: String,
    /// What was being done when the error appeared, e.g. "running npm test".
    #[serde(default)]
    pub context: String,
    #[serde(default)]
    pub prompt: String,
    #[serde(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct UnderstandDiagramArgs {
    /// The diagram: a path, an http(s) URL or a data: URL.
    #[serde(alias = "imageSource")]
    pub image_source: String,
    /// The kind of diagram if known: architecture, flowchart, UML, ER, sequence...
    #[serde(default, alias = "diagramType")]
    pub diagram_type: String,
    #[serde(default)]
    pub prompt: String,
    #[serde(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AnalyzeDataVisualizationArgs {
    /// The chart or dashboard: a path, an http(s) URL or a data: URL.
    #[serde(alias = "imageSource")]
    pub image_source: String,
    /// What to focus on: trends, anomalies, comparisons, specific series...
    #[serde(default, alias = "analysisFocus")]
    pub analysis_focus: String,
    #[serde(default)]
    pub prompt: String,
    #[serde(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct UiDiffCheckArgs {
    /// The expected UI (design, reference screenshot): a path, an http(s) URL or a data: URL.
    #[serde(alias = "expectedImageSource")]
    pub expected_image_source: String,
    /// The actual UI (a fresh screenshot): a path, an http(s) URL or a data: URL.
    #[serde(alias = "actualImageSource")]
    pub actual_image_source: String,
    /// What to compare or ignore, e.g. "ignore the clock in the corner".
    #[serde(default)]
    pub prompt: String,
    #[serde(flatten)]
    pub common: CommonArgs,
}

#[derive(Clone)]
pub struct VaiderMcp {
    engine: Arc<Vaider>,
    tool_router: ToolRouter<Self>,
}

impl VaiderMcp {
    pub fn new(engine: Arc<Vaider>) -> Self {
        VaiderMcp {
            engine,
            tool_router: Self::tool_router(),
        }
    }

    /// Runs one tool call through the pipeline and turns the outcome into a tool result.
    async fn run(
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

    async fn run_request(
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
fn request_from(
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

fn non_empty(text: String) -> Option<String> {
    (!text.trim().is_empty()).then_some(text)
}

#[tool_router]
impl VaiderMcp {
    /// Look at a recording of a GUI test and say, step by step with timestamps, what happened
    /// on screen; with `expectations`, also say for each whether the video shows it. Use it
    /// after a GUI test run before claiming the UI works, and when a GUI test fails.
    #[tool(name = "analyze_video", output_schema = schema_for_output::<AnalysisResult>())]
    async fn analyze_video(
        &self,
        Parameters(args): Parameters<AnalyzeVideoArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(
            Tool::AnalyzeVideo,
            args.video_source,
            args.prompt,
            TaskOptions::default(),
            args.common,
            ctx,
        )
        .await
    }

    /// Look at a screenshot or image of a GUI and describe it, or answer the prompt about it:
    /// layout, visible text, controls, errors, visual defects.
    #[tool(name = "analyze_image", output_schema = schema_for_output::<AnalysisResult>())]
    async fn analyze_image(
        &self,
        Parameters(args): Parameters<AnalyzeImageArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        self.run(
            Tool::AnalyzeImage,
            args.image_source,
            args.prompt,
            TaskOptions::default(),
            args.common,
            ctx,
        )
        .await
    }

    /// Turn a UI screenshot into code that reproduces it, a prompt that would generate it, a
    /// specification, or a description (output_type). `details.artifact` holds the result.
    #[tool(name = "ui_to_artifact", output_schema = schema_for_output::<AnalysisResult>())]
    async fn ui_to_artifact(
        &self,
        Parameters(args): Parameters<UiToArtifactArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let options = TaskOptions {
            output_type: non_empty(args.output_type),
            ..Default::default()
        };
        self.run(
            Tool::UiToArtifact,
            args.image_source,
            args.prompt,
            options,
            args.common,
            ctx,
        )
        .await
    }

    /// Transcribe all the text in a screenshot exactly (code, logs, terminal output, UI text),
    /// keeping line breaks and indentation. `details.text` holds the text.
    #[tool(name = "extract_text_from_screenshot", output_schema = schema_for_output::<AnalysisResult>())]
    async fn extract_text_from_screenshot(
        &self,
        Parameters(args): Parameters<ExtractTextArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let options = TaskOptions {
            programming_language: non_empty(args.programming_language),
            ..Default::default()
        };
        self.run(
            Tool::ExtractTextFromScreenshot,
            args.image_source,
            args.prompt,
            options,
            args.common,
            ctx,
        )
        .await
    }

    /// Read an error in a screenshot (dialog, stack trace, console, build output), explain the
    /// likely causes and suggest fixes, most likely first.
    #[tool(name = "diagnose_error_screenshot", output_schema = schema_for_output::<AnalysisResult>())]
    async fn diagnose_error_screenshot(
        &self,
        Parameters(args): Parameters<DiagnoseErrorArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let options = TaskOptions {
            context: non_empty(args.context),
            ..Default::default()
        };
        self.run(
            Tool::DiagnoseErrorScreenshot,
            args.image_source,
            args.prompt,
            options,
            args.common,
            ctx,
        )
        .await
    }

    /// Explain a technical diagram (architecture, flowchart, UML, ER, sequence): its
    /// components, their roles and the connections between them.
    #[tool(name = "understand_technical_diagram", output_schema = schema_for_output::<AnalysisResult>())]
    async fn understand_technical_diagram(
        &self,
        Parameters(args): Parameters<UnderstandDiagramArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let options = TaskOptions {
            diagram_type: non_empty(args.diagram_type),
            ..Default::default()
        };
        self.run(
            Tool::UnderstandTechnicalDiagram,
            args.image_source,
            args.prompt,
            options,
            args.common,
            ctx,
        )
        .await
    }

    /// Read a chart or dashboard: its type, axes and values, and the trends, outliers and
    /// comparisons that matter.
    #[tool(name = "analyze_data_visualization", output_schema = schema_for_output::<AnalysisResult>())]
    async fn analyze_data_visualization(
        &self,
        Parameters(args): Parameters<AnalyzeDataVisualizationArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let options = TaskOptions {
            analysis_focus: non_empty(args.analysis_focus),
            ..Default::default()
        };
        self.run(
            Tool::AnalyzeDataVisualization,
            args.image_source,
            args.prompt,
            options,
            args.common,
            ctx,
        )
        .await
    }

    /// Compare an expected UI (design or reference screenshot) with the actual one and list
    /// every visible difference with its region, severity and a suggested fix
    /// (`details.differences`). Use it after changing anything visual.
    #[tool(name = "ui_diff_check", output_schema = schema_for_output::<AnalysisResult>())]
    async fn ui_diff_check(
        &self,
        Parameters(args): Parameters<UiDiffCheckArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let (mut request, cwd) = request_from(
            Tool::UiDiffCheck,
            args.actual_image_source,
            args.prompt,
            TaskOptions::default(),
            args.common,
        );
        request.compare_with = Some(args.expected_image_source);
        self.run_request(request, cwd, ctx).await
    }

    /// Check that Vaider is running and ready: version, provider, model, whether an API key is
    /// configured, server time. Call it once before the first analysis.
    #[tool(name = "vaider_status", output_schema = schema_for_output::<StatusReport>())]
    async fn vaider_status(&self) -> Result<CallToolResult, ErrorData> {
        let status = self.engine.status().await;
        let structured = serde_json::to_value(&status).unwrap_or_default();
        let text = format!(
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
        let mut answer = CallToolResult::success(vec![
            ContentBlock::text(text),
            ContentBlock::text(structured.to_string()),
        ]);
        answer.structured_content = Some(structured);
        Ok(answer)
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
                 (give `expectations` to get verdicts), analyze_image describes a screenshot. \
                 Limits: 5 mismatch retries, 3 Vaider-error retries, 30 s timeout per call \
                 (raise timeout_sec for long videos). See VaiderRules.txt.",
            )
    }
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
async fn client_roots(ctx: &RequestContext<RoleServer>) -> Vec<PathBuf> {
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

/// Turns pipeline progress into MCP progress notifications. The pipeline reports from sync
/// code, so reports go through a channel to a task that sends them; the progress value only
/// grows, as the spec requires: bytes during the upload, then one step per later stage.
struct McpProgress {
    sender: Option<tokio::sync::mpsc::UnboundedSender<Progress>>,
}

impl McpProgress {
    fn start(ctx: &RequestContext<RoleServer>) -> McpProgress {
        let Some(token) = ctx.meta.get_progress_token() else {
            return McpProgress { sender: None };
        };
        let (sender, mut receiver) = tokio::sync::mpsc::unbounded_channel::<Progress>();
        let peer = ctx.peer.clone();
        tokio::spawn(async move {
            let mut last: Option<f64> = None;
            let mut upload_total = 0.0_f64;
            while let Some(step) = receiver.recv().await {
                let floor = last.unwrap_or(0.0);
                let (value, total) = match &step {
                    Progress::Queued => (floor, None),
                    Progress::Uploading { sent, total } => {
                        upload_total = *total as f64;
                        (*sent as f64, Some(*total as f64))
                    }
                    Progress::Processing { .. } | Progress::Generating => {
                        (floor.max(upload_total) + 1.0, None)
                    }
                };
                if last.is_some_and(|l| value <= l) {
                    continue;
                }
                last = Some(value);
                let mut param = ProgressNotificationParam::new(token.clone(), value)
                    .with_message(step.message());
                if let Some(total) = total {
                    param = param.with_total(total);
                }
                if peer.notify_progress(param).await.is_err() {
                    break;
                }
            }
        });
        McpProgress {
            sender: Some(sender),
        }
    }
}

impl ProgressSink for McpProgress {
    fn report(&self, progress: Progress) {
        if let Some(sender) = &self.sender {
            let _ = sender.send(progress);
        }
    }
}
