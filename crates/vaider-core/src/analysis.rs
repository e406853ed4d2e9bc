//! What an analysis is asked and what it answers: the types every door shares. The MCP
//! `structuredContent`, the REST body, the CLI's `--json` and the history all carry these.

use std::path::PathBuf;
use std::time::Duration;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

pub mod tools;

/// Which task a request asks (a tool of analysis's, or another capability's task); stored in
/// history so the UI can filter by it.
pub use crate::task::Tool;

/// The tool-specific arguments (the z.ai Vision MCP's names), each optional.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub struct TaskOptions {
    /// ui_to_artifact: code, prompt, spec or description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output_type: Option<String>,
    /// extract_text_from_screenshot: the language of code in the image.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub programming_language: Option<String>,
    /// diagnose_error_screenshot: what the user was doing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context: Option<String>,
    /// understand_technical_diagram: architecture, flowchart, UML, ER, sequence...
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagram_type: Option<String>,
    /// analyze_data_visualization: what to focus on (trends, anomalies, comparisons...).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub analysis_focus: Option<String>,
}

/// Which door a request came in by, for the history (a re-export of the history's own).
pub use vaider_history::Door;

/// One request to the pipeline, whichever door it came by.
#[derive(Debug, Clone)]
pub struct AnalysisRequest {
    pub tool: Tool,
    pub door: Door,
    /// A path (absolute, relative or `~/`) or an http(s) URL.
    pub source: String,
    /// None: the tool's default prompt.
    pub prompt: Option<String>,
    /// Statements the media should show; each gets a verdict with evidence.
    pub expectations: Vec<String>,
    pub model: Option<String>,
    /// The provider to ask instead of the configured one ("openai", "anthropic", ...).
    pub provider: Option<String>,
    /// ui_diff_check: the expected image; `source` is then the actual one.
    pub compare_with: Option<String>,
    /// Magnified crops of the parts that matter, sent after the main images: visual_compare's
    /// "zoom" pass, so a small change on a large page is seen at its own pixels.
    pub close_ups: Vec<String>,
    pub options: TaskOptions,
    pub timeout: Option<Duration>,
    /// How a video goes to a model that takes video; None: the config's `video_sampling`.
    pub sampling: Option<crate::sampling::VideoSampling>,
    /// A video's stretch watched closely in place of the whole (a failed test's last steps);
    /// it overrides `sampling`.
    pub stretch: Option<crate::sampling::Stretch>,
    pub no_cache: bool,
    /// Folders a relative path may be relative to, in order: the client's MCP roots, then its
    /// explicit `cwd`. The server's own working directory is tried last.
    pub base_dirs: Vec<PathBuf>,
    /// The interaction id to use, when the caller must know it before the answer (the UI's
    /// "Run again" opens the new entry at once). None: a fresh one.
    pub id: Option<String>,
    /// The job this call is part of (e.g. a test validation), so the history shows the call
    /// under it. None: a call of its own.
    pub parent_id: Option<String>,
    /// Names the secrets in the answer (a value typed into a password field), which are
    /// recorded redacted; the caller still gets the whole answer.
    pub redact: crate::redact::Redactor,
}

impl AnalysisRequest {
    pub fn new(tool: Tool, door: Door, source: impl Into<String>) -> Self {
        AnalysisRequest {
            tool,
            door,
            source: source.into(),
            prompt: None,
            expectations: Vec::new(),
            model: None,
            provider: None,
            compare_with: None,
            close_ups: Vec::new(),
            options: TaskOptions::default(),
            timeout: None,
            sampling: None,
            stretch: None,
            no_cache: false,
            base_dirs: Vec::new(),
            id: None,
            parent_id: None,
            redact: Default::default(),
        }
    }
}

/// Tokens a call used (a re-export of the crate that owns it, vaider-providers).
pub use vaider_providers::provider::Usage;

/// The model's verdict on one expectation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Met,
    NotMet,
    Unclear,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExpectationVerdict {
    pub expectation: String,
    pub verdict: Verdict,
    /// What on screen supports the verdict, with timestamps where the model gave them.
    pub evidence: String,
}

/// The answer of one analysis, as every door returns it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AnalysisResult {
    pub description: String,
    /// One entry per expectation given, in the same order; empty when none were given.
    pub expectations: Vec<ExpectationVerdict>,
    /// True when every expectation was met; absent when none were given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub all_expectations_met: Option<bool>,
    pub provider: String,
    pub model: String,
    pub duration_ms: u64,
    pub usage: Usage,
    pub cost_usd: f64,
    /// True when the answer came from history (same bytes, prompt and model), at no cost.
    pub cached: bool,
    pub interaction_id: String,
    /// The folder holding request.json and response.json of this call.
    pub log_dir: String,
    pub media_path: String,
    pub media_type: String,
    /// Frames the model looked at: the video's seconds at 1 fps, the keyframes sent, or 1 per image.
    pub frames_analysed: u64,
    /// The tool's structured answer (e.g. ui_diff_check's differences), when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
    /// What was done to fit the media to the provider (keyframes, downscaling, conversion).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub adaptations: Vec<String>,
    /// How a video went to a model that takes video: the moments sent, and the input tokens
    /// Gemini's default sampling would have used.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<crate::sampling::SamplingReport>,
}
