//! A run's recording watched by the vision model through Vaider's one pipeline (so it is in
//! the history under the validation, cached and costed like any analysis).

use std::path::{Path, PathBuf};
use std::time::Duration;
use vaider_core::analysis::tools;

use serde::{Deserialize, Serialize};
use vaider_core::analysis::{AnalysisRequest, AnalysisResult, Door, ExpectationVerdict, Verdict};
use vaider_core::progress::ProgressSink;
use vaider_core::task::Tool;
use vaider_core::Vaider;

/// `data.video_analysis`: what the model saw and its verdict on each expectation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VideoAnalysis {
    pub video: String,
    pub description: String,
    pub expectations: Vec<ExpectationVerdict>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub all_expectations_met: Option<bool>,
    /// The model call's history entry (under the validation's).
    pub interaction_id: String,
    pub provider: String,
    pub model: String,
    pub cost_usd: f64,
    pub cached: bool,
}

impl VideoAnalysis {
    pub fn not_shown(&self) -> Vec<String> {
        self.with_verdict(Verdict::NotMet)
    }

    pub fn unclear(&self) -> Vec<String> {
        self.with_verdict(Verdict::Unclear)
    }

    fn with_verdict(&self, verdict: Verdict) -> Vec<String> {
        self.expectations
            .iter()
            .filter(|e| e.verdict == verdict)
            .map(|e| e.expectation.clone())
            .collect()
    }
}

/// Who asks, and how.
#[derive(Debug, Clone)]
pub struct Asker {
    pub door: Door,
    /// The job (validation) the call belongs to; none for a call of its own (the eval's).
    pub parent_id: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub timeout: Option<Duration>,
    pub base_dirs: Vec<PathBuf>,
}

impl Asker {
    /// A request for `tool` on `video` with `prompt`, asked as this asker asks.
    pub fn request(&self, tool: Tool, video: &Path, prompt: Option<String>) -> AnalysisRequest {
        let mut request = AnalysisRequest::new(tool, self.door, video.display().to_string());
        request.prompt = prompt;
        request.provider = self.provider.clone();
        request.model = self.model.clone();
        request.timeout = self.timeout;
        request.base_dirs = self.base_dirs.clone();
        request.parent_id = self.parent_id.clone();
        request
    }

    /// Asks the pipeline; the error says why the model could not answer.
    pub async fn ask(
        &self,
        engine: &Vaider,
        request: AnalysisRequest,
        progress: &dyn ProgressSink,
    ) -> Result<AnalysisResult, String> {
        engine
            .analyse(request, progress)
            .await
            .map_err(|failure| format!("{}: {}", failure.error.code().as_str(), failure.error))
    }
}

/// Asks the model about one recording; the error says why it could not.
pub async fn analyse(
    engine: &Vaider,
    asker: &Asker,
    video: &Path,
    prompt: Option<String>,
    expectations: &[String],
    progress: &dyn ProgressSink,
) -> Result<VideoAnalysis, String> {
    let mut request = asker.request(tools::ANALYZE_VIDEO, video, prompt);
    request.expectations = expectations.to_vec();
    let result = asker.ask(engine, request, progress).await?;
    Ok(VideoAnalysis {
        video: video.display().to_string(),
        description: result.description,
        expectations: result.expectations,
        all_expectations_met: result.all_expectations_met,
        interaction_id: result.interaction_id,
        provider: result.provider,
        model: result.model,
        cost_usd: result.cost_usd,
        cached: result.cached,
    })
}
