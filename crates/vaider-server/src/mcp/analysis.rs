//! The vision tools: `analyze_video`, `analyze_image` and the six z.ai-compatible image tools
//! (`ui_to_artifact` … `ui_diff_check`), with their arguments. Each call is one pipeline
//! request through [`VaiderMcp::run`]; the schemas agents read come from the doc comments.

use rmcp::handler::server::common::schema_for_output;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;
use vaider_core::analysis::{AnalysisResult, TaskOptions};
use vaider_core::Tool;

use super::call::{non_empty, request_from, CommonArgs};
use super::VaiderMcp;
use vaider_core::sampling::VideoSampling;

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
    /// How the video goes to a model that takes video: "auto" sends the moments where the
    /// screen changes when that is cheaper (about 5x fewer tokens for a mostly still
    /// recording), "full" the whole video at one frame a second (for animations, video
    /// players), "keyframes" still frames. Default: the server's video_sampling (auto).
    #[serde(default)]
    pub sampling: String,
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

#[tool_router(router = analysis_tools, vis = "pub(super)")]
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
        let (mut request, cwd) = request_from(
            Tool::AnalyzeVideo,
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
        self.run_request(request, cwd, ctx).await
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
}
