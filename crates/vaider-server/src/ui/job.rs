//! A job's detail (a test validation, or a test plan's run): its stored answer (the
//! `AgentResult` with the rubric, the report and the screenshots; or the `TestRun` with its
//! steps), the model calls it made, and its screenshots served by number. Their paths come from the answer Vaider stored in the history, never from a file in
//! the project, which anyone who can write there could change.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::Value;
use vaider_core::history::{History, Interaction};

/// What the detail view shows of a job.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct JobView {
    /// The job's whole answer, as the agent got it (its capability's contract shape); null
    /// while it runs.
    pub result: Option<Value>,
    /// The model calls it made, oldest first: id, tool, status, cost.
    pub calls: Vec<Call>,
    /// `/api/interactions/{id}/media?which=screenshot&n=K`, one per screenshot.
    pub screenshot_urls: Vec<String>,
    /// A validation's traces: the `trace.zip` to download
    /// (`/api/interactions/{id}/media?which=trace&n=K`) and the command that opens it.
    pub traces: Vec<TraceLink>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct TraceLink {
    path: String,
    /// `npx playwright show-trace …`.
    open: String,
    url: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Call {
    id: String,
    tool: String,
    status: &'static str,
    cost_usd: f64,
    description: Option<String>,
}

/// Whether a row no capability registered as a job is one all the same: it has a stored
/// answer of its own or model calls under it.
pub(super) fn is_job(history: &History, row: &Interaction) -> bool {
    let result = history.job_result(&row.id).ok().flatten();
    let has_calls = history.children(&row.id).is_ok_and(|c| !c.is_empty());
    row.parent_id.is_none() && (has_calls || is_job_answer(result.as_ref()))
}

/// The job view of a job's row: empty lists and no result until it has them.
pub(super) fn view(history: &History, row: &Interaction) -> JobView {
    let result = history.job_result(&row.id).ok().flatten();
    let calls = history.children(&row.id).unwrap_or_default();
    let screenshot_urls = (0..screenshots(result.as_ref()).len())
        .map(|n| super::media::url(&row.id, Some(&format!("which=screenshot&n={n}"))))
        .collect();
    let traces = trace_entries(result.as_ref())
        .into_iter()
        .enumerate()
        .map(|(n, (path, open))| TraceLink {
            path,
            open,
            url: super::media::url(&row.id, Some(&format!("which=trace&n={n}"))),
        })
        .collect();
    JobView {
        traces,
        calls: calls
            .into_iter()
            .map(|c| Call {
                id: c.id,
                tool: c.tool,
                status: c.status.as_str(),
                cost_usd: c.cost_usd,
                description: c.description,
            })
            .collect(),
        result,
        screenshot_urls,
    }
}

/// A job's answer is not an analysis result: it has `success` and `data` (an `AgentResult`),
/// or `testRun` (a test plan's run).
fn is_job_answer(result: Option<&Value>) -> bool {
    result.is_some_and(|r| {
        (r.get("success").is_some() && r.get("data").is_some()) || r.get("testRun").is_some()
    })
}

/// A validation's screenshots, or a run's steps' in step order (steps without one skipped).
fn screenshots(result: Option<&Value>) -> Vec<String> {
    let Some(result) = result else {
        return Vec::new();
    };
    let paths: Vec<&Value> = match result["testRun"]["stepResults"].as_array() {
        Some(steps) => steps.iter().map(|step| &step["screenshot"]).collect(),
        None => result["data"]["screenshots"]
            .as_array()
            .map(|shots| shots.iter().collect())
            .unwrap_or_default(),
    };
    paths
        .into_iter()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// The `n`th screenshot of a job, by the stored answer.
pub(super) fn screenshot(history: &History, row: &Interaction, n: usize) -> Option<PathBuf> {
    let result = history.job_result(&row.id).ok().flatten();
    screenshots(result.as_ref()).get(n).map(PathBuf::from)
}

/// A validation's traces as its stored answer lists them (`metadata.traces`): path, command.
fn trace_entries(result: Option<&Value>) -> Vec<(String, String)> {
    let Some(traces) = result.and_then(|r| r["metadata"]["traces"].as_array()) else {
        return Vec::new();
    };
    traces
        .iter()
        .filter_map(|t| {
            let path = t["path"].as_str()?;
            // Only a trace archive is served under this name, whatever the answer says.
            path.ends_with(".zip").then(|| {
                (
                    path.to_string(),
                    t["open"].as_str().unwrap_or_default().to_string(),
                )
            })
        })
        .collect()
}

/// The `n`th trace of a validation, by the stored answer.
pub(super) fn trace(history: &History, row: &Interaction, n: usize) -> Option<PathBuf> {
    let result = history.job_result(&row.id).ok().flatten();
    trace_entries(result.as_ref())
        .into_iter()
        .nth(n)
        .map(|(path, _)| PathBuf::from(path))
}
