//! One run of a plan in a real local browser: the base URL is opened first (an app that is not
//! running ends the run as `error` at once, saying so), then each step in order, each with its
//! evidence (a screenshot of the page after it, what it did, what the page logged, its time).
//! The run stops at the first step that fails or cannot be done; the later ones are `skipped`.
//! The run's file is written when it starts (`running`) and when it ends.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use vaider_browser::{Browser, Tab, Viewport};

use crate::plan::{RunStatus, StepKind, StepResult, StepStatus, TestPlan, TestRun, TestStep};
use crate::steps::{self, Outcome, Performed, StepContext};
use crate::store::{write_atomic, QaStore, StoreError};

/// How long each command waits for its element unless the config says otherwise.
pub const DEFAULT_STEP_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the base URL may take to open.
const OPEN_TIMEOUT: Duration = Duration::from_secs(30);

/// How a plan is run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// Instead of the plan's `baseUrl`.
    pub base_url: Option<String>,
    pub step_timeout: Duration,
    /// The browser program; None: the one found on the machine.
    pub chrome: Option<PathBuf>,
    pub viewport: Viewport,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            base_url: None,
            step_timeout: DEFAULT_STEP_TIMEOUT,
            chrome: None,
            viewport: Viewport::default(),
        }
    }
}

/// Runs the plan and keeps the run in the store; the run is returned whatever its status.
pub async fn run_plan(
    store: &QaStore,
    plan: &TestPlan,
    options: &RunOptions,
) -> Result<TestRun, StoreError> {
    let started = Instant::now();
    let base_url = options
        .base_url
        .clone()
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| plan.base_url.clone());
    let mut run = TestRun {
        id: uuid::Uuid::now_v7().to_string(),
        plan_id: plan.id.clone(),
        plan_name: plan.name.clone(),
        status: RunStatus::Running,
        started_at: now(),
        completed_at: None,
        duration: None,
        base_url: base_url.clone(),
        step_results: Vec::new(),
        error: None,
    };
    store.save_run(&run)?;
    match start_browser(options, &base_url).await {
        Ok((browser, tab)) => {
            perform_steps(store, plan, options, &mut run, &tab).await;
            tab.close().await;
            browser.close().await;
        }
        Err(message) => {
            run.status = RunStatus::Error;
            run.error = Some(message);
        }
    }
    let skipped_from = run.step_results.len();
    for step in &plan.steps[skipped_from..] {
        run.step_results.push(skipped(step));
    }
    run.completed_at = Some(now());
    run.duration = Some(started.elapsed().as_millis() as u64);
    store.save_run(&run)?;
    Ok(run)
}

/// The browser with a tab on the base URL, or why there is none.
async fn start_browser(options: &RunOptions, base_url: &str) -> Result<(Browser, Tab), String> {
    let launched = match &options.chrome {
        Some(program) => Browser::launch_with(program.clone()).await,
        None => Browser::launch().await,
    };
    let browser = launched.map_err(|e| format!("BROWSER_ERROR: {e}"))?;
    let tab = browser
        .open_tab(options.viewport)
        .await
        .map_err(|e| format!("BROWSER_ERROR: {e}"))?;
    if let Err(error) = tab.open(base_url, OPEN_TIMEOUT).await {
        tab.close().await;
        browser.close().await;
        return Err(format!(
            "cannot open the base URL {base_url}: {error}. Is the app running there? Start it, or pass the right baseUrl"
        ));
    }
    // What the page logged while loading belongs to the first step.
    Ok((browser, tab))
}

async fn perform_steps(
    store: &QaStore,
    plan: &TestPlan,
    options: &RunOptions,
    run: &mut TestRun,
    tab: &Tab,
) {
    let ctx = StepContext {
        tab,
        base_url: &run.base_url.clone(),
        timeout: options.step_timeout,
    };
    for (index, step) in plan.steps.iter().enumerate() {
        let result = perform_step(store, &run.id, index, step, &ctx).await;
        let status = result.status;
        run.step_results.push(result);
        if status != StepStatus::Passed {
            run.status = match status {
                StepStatus::Failed => RunStatus::Failed,
                _ => RunStatus::Error,
            };
            run.error = run.step_results.last().and_then(|r| r.error.clone());
            return;
        }
    }
    run.status = RunStatus::Passed;
}

async fn perform_step(
    store: &QaStore,
    run_id: &str,
    index: usize,
    step: &TestStep,
    ctx: &StepContext<'_>,
) -> StepResult {
    let (started_at, started) = (now(), Instant::now());
    let performed = match &step.kind {
        StepKind::Selenese { commands } => steps::selenese(ctx, commands).await,
        StepKind::UnitAssertion { assertions } => steps::unit_assertions(ctx, assertions).await,
        StepKind::AgenticAssertion { .. } | StepKind::AgenticBrowsing { .. } => Performed {
            outcome: Outcome::Error(format!(
                "{} steps need the vision model, which this run was not given",
                step.kind.name()
            )),
            ..Performed::default()
        },
    };
    let mut logs = performed.logs;
    logs.extend(
        ctx.tab
            .take_console()
            .into_iter()
            .map(|m| format!("console {m}")),
    );
    let screenshot = keep_screenshot(store, run_id, index, step, ctx.tab, &mut logs).await;
    let (status, error) = match performed.outcome {
        Outcome::Passed => (StepStatus::Passed, None),
        Outcome::Failed(message) => (StepStatus::Failed, Some(message)),
        Outcome::Error(message) => (StepStatus::Error, Some(message)),
    };
    StepResult {
        step_id: step.id.clone(),
        step_name: step.name.clone(),
        step_type: step.kind.name().to_string(),
        status,
        started_at,
        completed_at: now(),
        duration: started.elapsed().as_millis() as u64,
        screenshot,
        logs: Some(logs),
        llm_reasoning: None,
        llm_confidence: None,
        expected: performed.expected,
        actual: performed.actual,
        error,
    }
}

/// The page after the step, as `runs/<runId>/NN-<stepId>.png`; a shot that fails is noted in
/// the logs, not fatal to the step.
async fn keep_screenshot(
    store: &QaStore,
    run_id: &str,
    index: usize,
    step: &TestStep,
    tab: &Tab,
    logs: &mut Vec<String>,
) -> Option<String> {
    let safe_id: String = step
        .id
        .chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                true => c,
                false => '-',
            },
        )
        .collect();
    let path = store
        .run_folder(run_id)
        .join(format!("{:02}-{safe_id}.png", index + 1));
    let kept = match tab.screenshot().await {
        Ok(png) => write_atomic(&path, &png).map_err(|e| e.to_string()),
        Err(error) => Err(error.to_string()),
    };
    match kept {
        Ok(()) => Some(path.display().to_string()),
        Err(error) => {
            logs.push(format!("no screenshot: {error}"));
            None
        }
    }
}

fn skipped(step: &TestStep) -> StepResult {
    let at = now();
    StepResult {
        step_id: step.id.clone(),
        step_name: step.name.clone(),
        step_type: step.kind.name().to_string(),
        status: StepStatus::Skipped,
        started_at: at.clone(),
        completed_at: at,
        duration: 0,
        screenshot: None,
        logs: None,
        llm_reasoning: None,
        llm_confidence: None,
        expected: None,
        actual: None,
        error: None,
    }
}

fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}
