//! `GET /api/interactions/{id}`: one entry's detail, typed by its kind so the page switches on
//! `kind` and reads each field as it is (lists empty, never missing): a model call
//! (`analysis`), a visual comparison (`comparison`, with its pictures and findings), or a job,
//! whose kind its capability names (`test_plan_run`, `test_validation`; `job` for one no
//! capability registered). `runAgain` is what the core lets a person run again.

use axum::extract::{Path as UrlPath, State};
use axum::Json;
use serde::Serialize;
use serde_json::Value;
use vaider_core::again::{self, Offer};
use vaider_core::analysis::ExpectationVerdict;
use vaider_core::history::Interaction;
use vaider_core::sampling::{SamplingReport, Used, VideoSampling};
use vaider_core::AnalysisResult;

use super::comparison::ComparisonView;
use super::history::Summary;
use super::job::JobView;
use super::{find, read_log_file};
use crate::api_error::ApiError;
use crate::AppState;

/// The summary, what every entry recorded, its kind's own answer, and what may be run again.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Detail {
    #[serde(flatten)]
    summary: Summary,
    /// `analysis`, `comparison`, or a job's kind.
    kind: &'static str,
    #[serde(flatten)]
    recorded: Recorded,
    #[serde(flatten)]
    answer: Answer,
    run_again: Option<Offer>,
}

/// What the history and the interaction files keep of every entry.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Recorded {
    prompt: String,
    expectations: Vec<String>,
    description: Option<String>,
    usage: Usage,
    log_dir: Option<String>,
    media_path: Option<String>,
    media_url: Option<String>,
    expected_media_url: Option<String>,
    request_json: Option<Value>,
    response_json: Option<Value>,
    size_bytes: Option<u64>,
    media_sha256: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct Usage {
    input_tokens: u64,
    output_tokens: u64,
    /// Vaider's estimate before the call, shown beside what the provider counted.
    #[serde(skip_serializing_if = "Option::is_none")]
    estimated_input_tokens: Option<u64>,
}

/// Each kind's own fields; the kind's name is [`Answer::kind`].
#[derive(Debug, Serialize)]
#[serde(untagged)]
enum Answer {
    Analysis(CallAnswer),
    /// Boxed: the comparison's result is large, the other kinds small.
    Comparison(Box<ComparedAnswer>),
    Job(JobAnswer),
}

impl Answer {
    fn kind(&self) -> &'static str {
        match self {
            Answer::Analysis(_) => "analysis",
            Answer::Comparison(_) => "comparison",
            Answer::Job(job) => job.kind,
        }
    }
}

/// A model call's answer: empty lists and nulls until it has one.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct CallAnswer {
    verdicts: Vec<ExpectationVerdict>,
    all_expectations_met: Option<bool>,
    /// The task's own fields, as the model gave them (free-form); null when it gave none.
    details: Option<Value>,
    adaptations: Vec<String>,
    /// How a video went to a model that takes video, with the default sampling's tokens.
    sampling: Option<SamplingView>,
    /// 0 until the call has an answer.
    frames_analysed: u64,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct ComparedAnswer {
    #[serde(flatten)]
    call: CallAnswer,
    /// The comparison's other pictures, regions and findings.
    comparison: ComparisonView,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct JobAnswer {
    #[serde(skip)]
    kind: &'static str,
    /// The job's answer (a validation's rubric, report, screenshots; a run's steps) and its
    /// model calls.
    job: JobView,
}

/// The sampling report as the page reads it: `moments` always a list.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
struct SamplingView {
    requested: VideoSampling,
    used: Used,
    moments: Vec<f64>,
    media_resolution: String,
    default_sampling_input_tokens: u64,
    reason: String,
}

impl From<SamplingReport> for SamplingView {
    fn from(report: SamplingReport) -> Self {
        SamplingView {
            requested: report.requested,
            used: report.used,
            moments: report.moments,
            media_resolution: report.media_resolution,
            default_sampling_input_tokens: report.default_sampling_input_tokens,
            reason: report.reason,
        }
    }
}

impl CallAnswer {
    fn of(result: Option<AnalysisResult>) -> CallAnswer {
        let Some(result) = result else {
            return CallAnswer {
                verdicts: Vec::new(),
                all_expectations_met: None,
                details: None,
                adaptations: Vec::new(),
                sampling: None,
                frames_analysed: 0,
            };
        };
        CallAnswer {
            verdicts: result.expectations,
            all_expectations_met: result.all_expectations_met,
            // An empty object says nothing; the page shows no Details card for it.
            details: result
                .details
                .filter(|d| d.as_object().is_none_or(|o| !o.is_empty())),
            adaptations: result.adaptations,
            sampling: result.sampling.map(SamplingView::from),
            frames_analysed: result.frames_analysed,
        }
    }
}

pub(super) async fn detail(
    State(state): State<AppState>,
    UrlPath(id): UrlPath<String>,
) -> Result<Json<Detail>, ApiError> {
    let row = find(&state, &id).await?;
    let engine = state.engine.clone();
    let read = row.clone();
    let (answer, request_json, response_json, estimated) = tokio::task::spawn_blocking(move || {
        let history = engine.history();
        let result = history.result::<AnalysisResult>(&read.id).ok().flatten();
        let estimated = result.as_ref().and_then(|r| r.usage.estimated_input_tokens);
        let log_dir = read.log_dir.as_deref();
        (
            answer_of(history, &read, result),
            read_log_file(log_dir, "request.json"),
            read_log_file(log_dir, "response.json"),
            estimated,
        )
    })
    .await
    .map_err(|e| ApiError::internal(e.to_string()))?;
    Ok(Json(Detail {
        summary: Summary::of(&row),
        kind: answer.kind(),
        run_again: again::offer(&row),
        recorded: recorded(row, estimated, request_json, response_json),
        answer,
    }))
}

/// The entry's own answer by its kind: a job as its capability registered it, a comparison
/// with its pictures, else a model call. Reads the history and files: call off the async
/// threads.
fn answer_of(
    history: &vaider_core::history::History,
    row: &Interaction,
    result: Option<AnalysisResult>,
) -> Answer {
    let job = |kind| {
        Answer::Job(JobAnswer {
            kind,
            job: super::job::view(history, row),
        })
    };
    if let Some(registered) = again::job_of(&row.tool) {
        return job(registered.kind());
    }
    if let Some(comparison) = super::comparison::view(row) {
        return Answer::Comparison(Box::new(ComparedAnswer {
            call: CallAnswer::of(result),
            comparison,
        }));
    }
    // A job no capability registered (a plan's writing, a results analysis): its calls.
    match super::job::is_job(history, row) {
        true => job("job"),
        false => Answer::Analysis(CallAnswer::of(result)),
    }
}

fn recorded(
    row: Interaction,
    estimated_input_tokens: Option<u64>,
    request_json: Option<Value>,
    response_json: Option<Value>,
) -> Recorded {
    let id = &row.id;
    Recorded {
        media_url: row.media_path.as_ref().map(|_| super::media::url(id, None)),
        expected_media_url: row
            .expected_path
            .as_ref()
            .map(|_| super::media::url(id, Some("which=expected"))),
        usage: Usage {
            input_tokens: row.input_tokens,
            output_tokens: row.output_tokens,
            estimated_input_tokens,
        },
        prompt: row.prompt,
        expectations: row.expectations,
        description: row.description,
        log_dir: row.log_dir,
        media_path: row.media_path,
        request_json,
        response_json,
        size_bytes: row.size_bytes,
        media_sha256: row.media_sha256,
    }
}
