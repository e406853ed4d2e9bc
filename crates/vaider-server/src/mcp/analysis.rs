//! The vision tools: `analyze_video`, `analyze_image` and the six z.ai-compatible image tools
//! (`ui_to_artifact` … `ui_diff_check`), with their arguments. Each call is one pipeline
//! request through [`VaiderMcp::run_request`]. A tool's description is one short sentence (every client
//! sends it to its model on every turn); the detail is in the arguments' doc comments.

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::tool::InputResponses as Answers;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResponse;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;
use vaider_core::analysis::tools;
use vaider_core::analysis::{AnalysisResult, TaskOptions};
use vaider_core::Tool;

use super::call::{non_empty, request_from, CommonArgs};
use super::VaiderMcp;
use vaider_core::sampling::VideoSampling;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AnalyzeVideoArgs {
    /// The video: a path (absolute, or relative to the project), an http(s) or data: URL.
    /// Playwright writes test-results/<test>/video.webm. WebM, MP4, MOV, AVI, or an animated
    /// GIF, APNG or WebP (watched frame by frame at its own delays), up to 2 GB.
    #[serde(alias = "videoSource")]
    pub video_source: String,
    /// What to look for (default: a step-by-step description with timestamps).
    #[serde(default)]
    pub prompt: String,
    /// "auto" (default: only the moments where the screen changes, when cheaper), "full" (the
    /// whole video at 1 fps: animations, video players) or "keyframes" (still frames).
    #[serde(default)]
    pub sampling: String,
    #[serde(flatten)]
    pub common: CommonArgs,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AnalyzeImageArgs {
    /// The image: a path (absolute, or relative to the project), an http(s) or data: URL. PNG,
    /// JPEG, WebP or GIF (of an animation, its first frame: analyze_video watches it play).
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
    /// What to produce: "code" (default), "prompt", "spec" or "description"; the result's
    /// details.artifact holds it.
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

#[tool_router(router = analysis_tools, vis = "pub(super)")]
impl VaiderMcp {
    /// Describe a GUI test recording step by step with timestamps, and judge `expectations`.
    #[tool(name = "analyze_video", output_schema = schema_for_output::<AnalysisResult>())]
    async fn analyze_video(
        &self,
        Parameters(args): Parameters<AnalyzeVideoArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (mut request, cwd) = request_from(
            tools::ANALYZE_VIDEO,
            args.video_source,
            args.prompt,
            TaskOptions::default(),
            args.common,
        );
        request.sampling = match args.sampling.trim() {
            "" => None,
            text => Some(VideoSampling::parse(text).ok_or_else(|| {
                ErrorData::invalid_params(
                    format!(
                        "sampling {text:?} is not known: use {}, or leave it out.",
                        VideoSampling::NAMES
                    ),
                    None,
                )
            })?),
        };
        self.run_request(request, cwd, ctx, answers).await
    }

    /// Describe a screenshot of a GUI, or answer the prompt about it.
    #[tool(name = "analyze_image", output_schema = schema_for_output::<AnalysisResult>())]
    async fn analyze_image(
        &self,
        Parameters(args): Parameters<AnalyzeImageArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let call = Call::new(tools::ANALYZE_IMAGE, args.image_source, args.prompt);
        self.run(call, TaskOptions::default(), args.common, ctx, answers)
            .await
    }

    /// Turn a UI screenshot into code, a generation prompt, a spec or a description.
    #[tool(name = "ui_to_artifact", output_schema = schema_for_output::<AnalysisResult>())]
    async fn ui_to_artifact(
        &self,
        Parameters(args): Parameters<UiToArtifactArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let options = TaskOptions {
            output_type: non_empty(args.output_type),
            ..Default::default()
        };
        let call = Call::new(tools::UI_TO_ARTIFACT, args.image_source, args.prompt);
        self.run(call, options, args.common, ctx, answers).await
    }

    /// Transcribe the text and code in a screenshot exactly (details.text).
    #[tool(name = "extract_text_from_screenshot", output_schema = schema_for_output::<AnalysisResult>())]
    async fn extract_text_from_screenshot(
        &self,
        Parameters(args): Parameters<ExtractTextArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let options = TaskOptions {
            programming_language: non_empty(args.programming_language),
            ..Default::default()
        };
        let call = Call::new(
            tools::EXTRACT_TEXT_FROM_SCREENSHOT,
            args.image_source,
            args.prompt,
        );
        self.run(call, options, args.common, ctx, answers).await
    }

    /// Read an error in a screenshot: likely causes and fixes, most likely first.
    #[tool(name = "diagnose_error_screenshot", output_schema = schema_for_output::<AnalysisResult>())]
    async fn diagnose_error_screenshot(
        &self,
        Parameters(args): Parameters<DiagnoseErrorArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let options = TaskOptions {
            context: non_empty(args.context),
            ..Default::default()
        };
        let call = Call::new(
            tools::DIAGNOSE_ERROR_SCREENSHOT,
            args.image_source,
            args.prompt,
        );
        self.run(call, options, args.common, ctx, answers).await
    }

    /// Explain a technical diagram: its components, roles and connections.
    #[tool(name = "understand_technical_diagram", output_schema = schema_for_output::<AnalysisResult>())]
    async fn understand_technical_diagram(
        &self,
        Parameters(args): Parameters<UnderstandDiagramArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let options = TaskOptions {
            diagram_type: non_empty(args.diagram_type),
            ..Default::default()
        };
        let call = Call::new(
            tools::UNDERSTAND_TECHNICAL_DIAGRAM,
            args.image_source,
            args.prompt,
        );
        self.run(call, options, args.common, ctx, answers).await
    }

    /// Read a chart or dashboard: values, trends and outliers.
    #[tool(name = "analyze_data_visualization", output_schema = schema_for_output::<AnalysisResult>())]
    async fn analyze_data_visualization(
        &self,
        Parameters(args): Parameters<AnalyzeDataVisualizationArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let options = TaskOptions {
            analysis_focus: non_empty(args.analysis_focus),
            ..Default::default()
        };
        let call = Call::new(
            tools::ANALYZE_DATA_VISUALIZATION,
            args.image_source,
            args.prompt,
        );
        self.run(call, options, args.common, ctx, answers).await
    }

    /// List every visible difference between an expected and an actual UI screenshot.
    #[tool(name = "ui_diff_check", output_schema = schema_for_output::<AnalysisResult>())]
    async fn ui_diff_check(
        &self,
        Parameters(args): Parameters<UiDiffCheckArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (mut request, cwd) = request_from(
            tools::UI_DIFF_CHECK,
            args.actual_image_source,
            args.prompt,
            TaskOptions::default(),
            args.common,
        );
        request.compare_with = Some(args.expected_image_source);
        self.run_request(request, cwd, ctx, answers).await
    }
}

/// The tool, source and prompt of one call.
struct Call {
    tool: Tool,
    source: String,
    prompt: String,
}

impl Call {
    fn new(tool: Tool, source: String, prompt: String) -> Call {
        Call {
            tool,
            source,
            prompt,
        }
    }
}

impl VaiderMcp {
    /// An image tool's call through [`VaiderMcp::run_request`].
    async fn run(
        &self,
        call: Call,
        options: TaskOptions,
        common: CommonArgs,
        ctx: RequestContext<RoleServer>,
        answers: Option<rmcp::model::InputResponses>,
    ) -> Result<CallToolResponse, ErrorData> {
        let (request, cwd) = request_from(call.tool, call.source, call.prompt, options, common);
        self.run_request(request, cwd, ctx, answers).await
    }
}
