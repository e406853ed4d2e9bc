//! The five QA tools of contracts.md §3 as one service every door calls (MCP, CLI, UI):
//! `generate_test_plan`, `run_test_plan`, `list_test_plans`, `list_test_runs` and
//! `get_test_run`, with their inputs checked, their results in the contract's shapes and their
//! failures as its error codes. Generating and running are history jobs whose model calls are
//! their children, so a run's cost is one number; runs at once are bounded by `qa.parallel_runs`.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde::Serialize;
use serde_json::{json, Value};
use tokio::sync::Semaphore;
use vaider_browser::{Browser, UrlPolicy, Viewport};
use vaider_core::analysis::Door;
use vaider_core::job::{Job, JobStart, Verdict};
use vaider_core::pipeline::now_rfc3339;
use vaider_core::workspace::Workspace;
use vaider_core::Vaider;

use crate::check::plan_problems;
use crate::context::{self, PlanContext, DEFAULT_BUDGET_TOKENS};
use crate::error::{ErrorCode, QaError};
use crate::generate::{plan_id, write_plan, Brief};
use crate::plan::{Project, RunStatus, StepStatus, TestPlan, TestRun};
use crate::run::{run_plan, RunOptions};
use crate::store::{write_atomic, QaStore};
// The person's approval of a plan, which the doors ask for before a run.
pub use crate::trust::{approve_plan, needs_approval, Unapproved};

/// GitHub's API, where `repoUrl`s on github.com are read.
pub const GITHUB_API: &str = "https://api.github.com";

/// The folder whose `.qa-agent/` holds the plans and runs: the workspace's project folder
/// (the one rule of `vaider_core::workspace`), which must be a folder.
pub fn workspace(workspace: &Workspace) -> Result<PathBuf, QaError> {
    let chosen = workspace
        .project()
        .map_err(|e| QaError::invalid(format!("{e}, whose .qa-agent/ keeps the plans")))?;
    match chosen.is_dir() {
        true => Ok(chosen),
        false => Err(QaError::invalid(format!(
            "the workspace {} is not a folder; pass `cwd` as the project folder",
            chosen.display()
        ))),
    }
}

/// `generate_test_plan`'s input.
pub struct GenerateRequest {
    pub requirements: String,
    pub repo_url: Option<String>,
    pub base_url: String,
    pub name: Option<String>,
    pub workspace: PathBuf,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub door: Door,
    pub budget_tokens: Option<usize>,
    /// Where github.com URLs are read ([`GITHUB_API`]).
    pub github_api: String,
}

/// `generate_test_plan`'s output: `{planId, name, steps, path}`.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Generated {
    pub plan_id: String,
    pub name: String,
    pub steps: usize,
    pub path: String,
}

/// Writes a plan for the requirements, looking at the app at `baseUrl`, and keeps it.
pub async fn generate_test_plan(
    engine: &Vaider,
    request: GenerateRequest,
) -> Result<Generated, QaError> {
    if request.requirements.trim().is_empty() {
        return Err(QaError::invalid(
            "requirements is empty: say in plain English what the app must do, e.g. \"a user can log in and sees their name\"",
        ));
    }
    check_url(&request.base_url, "baseUrl")?;
    let budget = request.budget_tokens.unwrap_or(DEFAULT_BUDGET_TOKENS);
    let (context, project) = code_context(&request, budget).await?;
    let store = QaStore::in_project(&request.workspace);
    let job_id = vaider_core::job::new_id();
    let folder = store.generation_folder(&job_id);
    let job = start_job(engine, &job_id, "generate_test_plan", &request, &folder).await?;
    // Every way this ends closes the job's row with what happened, an error included.
    let written = write_and_keep(
        engine,
        &request,
        &store,
        (context, project),
        (&job_id, &folder),
    )
    .await;
    match written {
        Ok(generated) => {
            let sentence = format!(
                "Wrote the plan {:?} with {} steps.",
                generated.name, generated.steps
            );
            finish(job, sentence, json!(generated), Verdict::Passed).await;
            Ok(generated)
        }
        Err(error) => {
            finish(job, error.message.clone(), error.to_json(), errored(&error)).await;
            Err(error)
        }
    }
}

/// Shows the app's first page and the context to the model, and keeps the plan it writes.
async fn write_and_keep(
    engine: &Vaider,
    request: &GenerateRequest,
    store: &QaStore,
    (context, project): (PlanContext, Project),
    (job_id, folder): (&str, &Path),
) -> Result<Generated, QaError> {
    let policy = navigation_policy(engine, &request.base_url)?;
    let (shot, page_text) = first_page(&request.base_url, policy, folder).await?;
    let brief = Brief {
        requirements: &request.requirements,
        base_url: &request.base_url,
        context: &context,
        page_text: &page_text,
        provider: request.provider.clone(),
        model: request.model.clone(),
        door: request.door,
        parent_id: Some(job_id.to_string()),
    };
    let written = write_plan(engine, &brief, &shot, &request.workspace).await?;
    let name = plan_name(request.name.as_deref(), &written.name);
    let at = now_rfc3339();
    let plan = TestPlan {
        id: plan_id(&name),
        name: name.clone(),
        description: written.summary,
        project,
        prompt: request.requirements.trim().to_string(),
        base_url: request.base_url.trim().to_string(),
        allowed_hosts: Vec::new(),
        steps: written.steps,
        created_at: at.clone(),
        updated_at: at,
        context: Some(context),
        secrets: Default::default(),
    };
    let path = store.save_plan(&plan)?;
    // Vaider wrote it for this user: it runs without asking (until its reach is edited).
    crate::trust::PlanApprovals::in_data_dir(engine.data_dir())
        .record_written(&plan, &path)
        .map_err(|e| QaError::new(ErrorCode::StorageError, e))?;
    Ok(Generated {
        plan_id: plan.id.clone(),
        name,
        steps: plan.steps.len(),
        path: path.display().to_string(),
    })
}

/// Where the plan's writer may look: the app's address, within the configured hosts.
fn navigation_policy(engine: &Vaider, base_url: &str) -> Result<UrlPolicy, QaError> {
    let qa = engine.config().qa.clone();
    UrlPolicy::new(base_url, &qa.allowed_hosts, qa.allow_private_network).map_err(|refusal| {
        QaError::new(
            ErrorCode::InvalidInput,
            format!("NAVIGATION_REFUSED: {refusal}"),
        )
    })
}

/// The name asked for, else the model's, else "Test plan".
fn plan_name(asked: Option<&str>, written: &str) -> String {
    [asked, Some(written)]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|n| !n.is_empty())
        .unwrap_or("Test plan")
        .to_string()
}

/// The context from `repoUrl` (a GitHub URL or a local folder) or the workspace, and the
/// project it names.
async fn code_context(
    request: &GenerateRequest,
    budget: usize,
) -> Result<(PlanContext, Project), QaError> {
    let repo_url = request
        .repo_url
        .as_deref()
        .map(str::trim)
        .filter(|u| !u.is_empty());
    let Some(url) = repo_url else {
        let context = context::from_folder_async(&request.workspace, budget).await?;
        return Ok((context, project_named(&request.workspace, None)));
    };
    if let Some(target) = context::github_target(url) {
        let context = context::from_github(&target, url, &request.github_api, budget).await?;
        let project = Project {
            name: target.repo.clone(),
            repo_url: Some(url.to_string()),
            description: None,
        };
        return Ok((context, project));
    }
    if url.starts_with("http://") || url.starts_with("https://") {
        return Err(QaError::invalid(format!(
            "{url} is neither a GitHub repository nor a pull request URL; give https://github.com/owner/repo, …/pull/N, or a local folder"
        )));
    }
    let folder = request.workspace.join(url);
    let context = context::from_folder_async(&folder, budget).await?;
    Ok((context, project_named(&folder, Some(url))))
}

/// A project named after its folder.
fn project_named(folder: &Path, repo_url: Option<&str>) -> Project {
    let name = folder
        .canonicalize()
        .ok()
        .and_then(|f| f.file_name().map(|n| n.to_string_lossy().to_string()))
        .unwrap_or_else(|| "default".into());
    Project {
        name,
        repo_url: repo_url.map(str::to_string),
        description: None,
    }
}

/// The app's first page: its screenshot (kept in `folder`) and its visible text.
async fn first_page(
    base_url: &str,
    policy: UrlPolicy,
    folder: &Path,
) -> Result<(PathBuf, String), QaError> {
    let browser_error = |e: String| QaError::new(ErrorCode::BrowserError, e);
    let browser = Browser::launch()
        .await
        .map_err(|e| browser_error(e.to_string()))?;
    let tab = browser
        .open_tab(Viewport::default(), policy)
        .await
        .map_err(|e| browser_error(e.to_string()))?;
    let opened = tab.open(base_url, std::time::Duration::from_secs(30)).await;
    let page = match opened {
        Ok(()) => match tab.screenshot().await {
            Ok(png) => Ok((png, tab.visible_text().await.unwrap_or_default())),
            Err(e) => Err(browser_error(e.to_string())),
        },
        Err(e) => Err(browser_error(format!(
            "cannot open {base_url}: {e}. Is the app running there? Start it (Vaider looks at its first page to write the plan), or pass the right baseUrl"
        ))),
    };
    tab.close().await;
    browser.close().await;
    let (png, text) = page?;
    let shot = folder.join("first-page.png");
    write_atomic(&shot, &png).map_err(|e| QaError::new(ErrorCode::StorageError, e.to_string()))?;
    Ok((shot, text))
}

async fn start_job(
    engine: &Vaider,
    id: &str,
    tool: &'static str,
    request: &GenerateRequest,
    folder: &Path,
) -> Result<Job, QaError> {
    engine
        .start_job(JobStart {
            id: id.to_string(),
            tool,
            door: request.door,
            source: &request.base_url,
            expectations: std::slice::from_ref(&request.requirements),
            log_dir: Some(folder),
            project: Some(&request.workspace),
        })
        .await
        .map_err(|e| QaError::new(ErrorCode::StorageError, e.to_string()))
}

/// Closes a job's history row; a history that cannot be written is logged, not fatal.
async fn finish(job: Job, description: String, result: Value, verdict: Verdict) {
    finish_with(job, description, result, verdict, None).await
}

/// Vaider could not do the job: the history's `error`.
fn errored(error: &QaError) -> Verdict {
    Verdict::Error(error.to_string())
}

/// [`finish`], with the media the history shows beside the entry.
async fn finish_with(
    job: Job,
    description: String,
    result: Value,
    verdict: Verdict,
    media: Option<(String, &'static str)>,
) {
    if let Err(e) = job.finish(description, result, verdict, media).await {
        tracing::error!("{e}");
    }
}

/// An http(s) URL, or INVALID_INPUT naming the field.
fn check_url(url: &str, field: &str) -> Result<(), QaError> {
    let url = url.trim();
    let fine = (url.starts_with("http://") || url.starts_with("https://"))
        && url.split("://").nth(1).is_some_and(|rest| !rest.is_empty());
    match fine {
        true => Ok(()),
        false => Err(QaError::invalid(format!(
            "{field} {url:?} is not an http(s) URL: give where the app runs, e.g. http://localhost:3000"
        ))
        .with_details(json!({ "field": field }))),
    }
}

/// `run_test_plan`'s input.
pub struct RunRequest {
    pub plan_id: String,
    pub base_url: Option<String>,
    pub workspace: PathBuf,
    pub door: Door,
    pub headless: bool,
    /// The run's id, when the caller names it before it starts (the UI opens its page at
    /// once); None: a fresh one.
    pub run_id: Option<String>,
    /// A person's approval of the plan's reach, made at the door for this run (a prompt at
    /// the terminal, a question the MCP client put to its user, a click in the signed-in UI).
    /// Needed only for a plan Vaider did not write and nobody approved yet.
    pub approval: Option<vaider_core::person::Decision>,
}

/// `run_test_plan`'s output.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunSummary {
    pub run_id: String,
    pub status: RunStatus,
    pub duration: u64,
    pub steps_executed: usize,
    pub steps_passed: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failed_step: Option<String>,
    /// Why the run failed or could not run (Vaider's addition: the contract's fields stay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The run's file.
    pub path: String,
}

/// A run checked and ready to start: what [`run_prepared`] needs.
pub struct ReadyRun {
    plan: TestPlan,
    plan_path: PathBuf,
    base_url: Option<String>,
    /// The run's id, its history entry's too.
    pub run_id: String,
    request: RunRequest,
}

/// Runs a kept plan in the local browser, step by step, and keeps the run.
pub async fn run_test_plan(engine: &Vaider, request: RunRequest) -> Result<RunSummary, QaError> {
    run_prepared(engine, prepare_run(engine, request)?).await
}

/// Everything that can be refused before a browser starts: the plan (found, approved and able
/// to run) and the base URL. A door that answers at once (the UI) calls this first, then
/// [`run_prepared`] in the background.
pub fn prepare_run(engine: &Vaider, request: RunRequest) -> Result<ReadyRun, QaError> {
    let store = QaStore::in_project(&request.workspace);
    let (plan, plan_path) = store.plan(request.plan_id.trim())?;
    let problems = plan_problems(&plan);
    if !problems.is_empty() {
        return Err(QaError::invalid(format!(
            "the plan {} cannot run: {}. Fix it and run it again",
            plan_path.display(),
            problems.join("; ")
        ))
        .with_details(json!({ "errors": problems })));
    }
    let base_url = request.base_url.clone().filter(|u| !u.trim().is_empty());
    if let Some(url) = &base_url {
        check_url(url, "baseUrl")?;
    }
    if let Some(unapproved) =
        crate::trust::unapproved(engine, &plan, &plan_path, &request.workspace)
    {
        match request.approval.clone() {
            Some(decision) => crate::trust::PlanApprovals::in_data_dir(engine.data_dir())
                .approve(&plan, &plan_path, decision)
                .map_err(|e| QaError::new(ErrorCode::StorageError, e))?,
            None => return Err(unapproved.refusal("nobody was asked")),
        }
    }
    let run_id = request
        .run_id
        .clone()
        .unwrap_or_else(vaider_core::job::new_id);
    Ok(ReadyRun {
        plan,
        plan_path,
        base_url,
        run_id,
        request,
    })
}

/// Runs a prepared plan: its history entry first (so a run waiting for its turn is listed),
/// then, within `qa.parallel_runs`, the browser and the steps.
pub async fn run_prepared(engine: &Vaider, ready: ReadyRun) -> Result<RunSummary, QaError> {
    let store = QaStore::in_project(&ready.request.workspace);
    let job = engine
        .start_job(JobStart {
            id: ready.run_id.clone(),
            tool: "run_test_plan",
            door: ready.request.door,
            source: &ready.plan_path.display().to_string(),
            expectations: &[],
            log_dir: Some(&store.run_folder(&ready.run_id)),
            project: Some(&ready.request.workspace),
        })
        .await
        .map_err(|e| QaError::new(ErrorCode::StorageError, e.to_string()))?;
    let _turn = run_slot(engine.config().qa.parallel_runs)
        .acquire_owned()
        .await;
    let options = run_options(engine, &ready);
    let run = match run_plan(&store, &ready.plan, &options, Some(engine)).await {
        Ok(run) => run,
        Err(e) => {
            let error = QaError::from(e);
            finish(job, error.message.clone(), error.to_json(), errored(&error)).await;
            return Err(error);
        }
    };
    let summary = summary_of(&run, &store);
    let verdict = run_verdict(&run);
    // The history keeps the whole run (its detail shows every step) and plays its video.
    let video = run
        .video
        .as_ref()
        .and_then(|v| v.path.clone())
        .map(|path| (path, "video/webm"));
    let kept = json!({ "summary": summary, "testRun": run });
    finish_with(job, sentence(&run), kept, verdict, video).await;
    if let Some(error) = browser_failure(&run) {
        return Err(error.with_details(json!({ "runId": run.id })));
    }
    Ok(summary)
}

/// A run that stopped at a failing step did its job (`failed`, naming the step); one that
/// could not drive the app (a step in error, no browser) is Vaider's `error`.
fn run_verdict(run: &TestRun) -> Verdict {
    match run.status {
        RunStatus::Passed => Verdict::Passed,
        RunStatus::Failed => Verdict::Failed(failing_step(run).unwrap_or_else(|| sentence(run))),
        _ => Verdict::Error(QaError::new(ErrorCode::ExecutionFailed, sentence(run)).to_string()),
    }
}

/// "Step 3 \"See the welcome\" failed: <why>", for the first step that failed.
pub fn failing_step(run: &TestRun) -> Option<String> {
    let (index, step) = run
        .step_results
        .iter()
        .enumerate()
        .find(|(_, s)| s.status == StepStatus::Failed)?;
    let why = step
        .error
        .clone()
        .or_else(|| match (&step.expected, &step.actual) {
            (Some(expected), Some(actual)) => {
                Some(format!("expected {expected:?}, actual {actual:?}"))
            }
            _ => None,
        })
        .unwrap_or_else(|| "no reason recorded".to_string());
    Some(format!(
        "Step {} {:?} failed: {why}",
        index + 1,
        step.step_name
    ))
}

/// How this run goes: the engine's `qa` settings and the request's choices.
fn run_options(engine: &Vaider, ready: &ReadyRun) -> RunOptions {
    let qa = engine.config().qa.clone();
    RunOptions {
        base_url: ready.base_url.clone(),
        step_timeout: std::time::Duration::from_millis(qa.step_timeout_ms),
        door: ready.request.door,
        run_id: Some(ready.run_id.clone()),
        parent_id: Some(ready.run_id.clone()),
        headless: ready.request.headless,
        record_video: qa.record_video,
        max_browse_actions: qa.browse_max_actions as usize,
        allowed_hosts: qa.allowed_hosts,
        allow_private_network: qa.allow_private_network,
        ..RunOptions::default()
    }
}

/// A run whose browser never started is the machine's problem, reported as BROWSER_ERROR.
fn browser_failure(run: &TestRun) -> Option<QaError> {
    let message = run.error.as_deref()?.strip_prefix("BROWSER_ERROR: ")?;
    run.step_results
        .iter()
        .all(|s| s.status == StepStatus::Skipped)
        .then(|| QaError::new(ErrorCode::BrowserError, message))
}

/// How many steps ran (not skipped) and how many of them passed.
pub fn tally(run: &TestRun) -> (usize, usize) {
    let steps = run.step_results.iter();
    let executed = steps.clone().filter(|s| s.status != StepStatus::Skipped);
    let passed = steps.filter(|s| s.status == StepStatus::Passed);
    (executed.count(), passed.count())
}

fn summary_of(run: &TestRun, store: &QaStore) -> RunSummary {
    let (executed, passed) = tally(run);
    RunSummary {
        run_id: run.id.clone(),
        status: run.status,
        duration: run.duration.unwrap_or(0),
        steps_executed: executed,
        steps_passed: passed,
        failed_step: run
            .step_results
            .iter()
            .find(|s| matches!(s.status, StepStatus::Failed | StepStatus::Error))
            .map(|s| s.step_id.clone()),
        error: run.error.clone(),
        path: store
            .root()
            .join("runs")
            .join(format!("{}.json", run.id))
            .display()
            .to_string(),
    }
}

/// One sentence on how the run went.
pub fn sentence(run: &TestRun) -> String {
    let total = run.step_results.len();
    let passed = run
        .step_results
        .iter()
        .filter(|s| s.status == StepStatus::Passed)
        .count();
    match (run.status, &run.error) {
        (RunStatus::Passed, _) => format!("{}: all {total} steps passed.", run.plan_name),
        (_, Some(error)) => format!(
            "{}: {passed} of {total} steps passed; {error}",
            run.plan_name
        ),
        (status, None) => format!(
            "{}: {status:?} after {passed} of {total} steps.",
            run.plan_name
        ),
    }
}

/// The semaphore that bounds runs at once, made again when the setting changes (runs holding
/// the old one finish on it).
fn run_slot(size: usize) -> Arc<Semaphore> {
    static SLOTS: Mutex<Option<(usize, Arc<Semaphore>)>> = Mutex::new(None);
    let mut slots = SLOTS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let size = size.max(1);
    match &*slots {
        Some((n, semaphore)) if *n == size => semaphore.clone(),
        _ => {
            let semaphore = Arc::new(Semaphore::new(size));
            *slots = Some((size, semaphore.clone()));
            semaphore
        }
    }
}

/// `list_test_plans`: `{plans: [{id, name, project, stepCount, createdAt}]}`, newest first.
pub fn list_test_plans(workspace: &Path, project: Option<&str>) -> Value {
    let project = project.map(str::trim).filter(|p| !p.is_empty());
    let plans: Vec<Value> = QaStore::in_project(workspace)
        .plans(project)
        .into_iter()
        .map(|(plan, path)| {
            json!({
                "id": plan.id, "name": plan.name, "project": plan.project.name,
                "stepCount": plan.steps.len(), "createdAt": plan.created_at,
                "baseUrl": plan.base_url, "path": path,
            })
        })
        .collect();
    json!({ "plans": plans })
}

/// `list_test_runs`: `{runs: [{id, planId, planName, status, duration?, startedAt}]}`.
pub fn list_test_runs(
    workspace: &Path,
    plan_id: Option<&str>,
    status: Option<&str>,
) -> Result<Value, QaError> {
    let status = match status.map(str::trim).filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => Some(serde_json::from_value::<RunStatus>(json!(s)).map_err(|_| {
            QaError::invalid(format!(
                "status {s:?} is not one: use passed, failed, running or error"
            ))
        })?),
    };
    let plan_id = plan_id.map(str::trim).filter(|p| !p.is_empty());
    let runs: Vec<Value> = QaStore::in_project(workspace)
        .runs(plan_id, status)
        .into_iter()
        .map(|run| {
            let mut row = json!({
                "id": run.id, "planId": run.plan_id, "planName": run.plan_name,
                "status": run.status, "startedAt": run.started_at,
            });
            if let Some(duration) = run.duration {
                row["duration"] = json!(duration);
            }
            row
        })
        .collect();
    Ok(json!({ "runs": runs }))
}

/// `get_test_run`: the whole run.
pub fn get_test_run(workspace: &Path, run_id: &str) -> Result<TestRun, QaError> {
    Ok(QaStore::in_project(workspace).run(run_id.trim())?)
}
