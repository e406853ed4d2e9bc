//! One run of a plan in a real local browser: the base URL is opened first (an app that is not
//! running ends the run as `error` at once, saying so), then each step in order, each with its
//! evidence (a screenshot of the page after it, what it did, what the page logged, its time).
//! The run stops at the first step that fails or cannot be done; the later ones are `skipped`.
//! The run's file is written when it starts (`running`) and when it ends.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use vaider_browser::{Browser, BrowserError, Recording, Tab, UrlPolicy, Viewport};
use vaider_core::analysis::Door;
use vaider_core::Vaider;

use crate::browse::{browse, Browse, Browsing, Ending, DEFAULT_MAX_ACTIONS};
use crate::judge::{judge_page, Judgement, Question};
use crate::plan::{
    RunStatus, RunVideo, StepKind, StepResult, StepStatus, TestPlan, TestRun, TestStep,
};
use crate::secret_values::{origin_of, Guard, PlanSecrets};
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
    /// Which door asked, for the history of the model calls.
    pub door: Door,
    /// The run's id (the history job's, so the two are one); None: a fresh one.
    pub run_id: Option<String>,
    /// The history job the model calls belong to.
    pub parent_id: Option<String>,
    /// False shows the browser window (it needs a display).
    pub headless: bool,
    /// Record the run as a WebM (with ffmpeg).
    pub record_video: bool,
    /// The most actions an `agentic_browsing` step may take, `done` included.
    pub max_browse_actions: usize,
    /// Hosts the browser may reach besides the base URL's origin and the plan's
    /// `allowedHosts` (the config's `qa.allowed_hosts`).
    pub allowed_hosts: Vec<String>,
    /// The config's `qa.allow_private_network`.
    pub allow_private_network: bool,
    /// More Chromium flags (the tests map test host names to loopback listeners).
    pub browser_flags: Vec<String>,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            base_url: None,
            step_timeout: DEFAULT_STEP_TIMEOUT,
            chrome: None,
            viewport: Viewport::default(),
            door: Door::Mcp,
            run_id: None,
            parent_id: None,
            headless: true,
            record_video: true,
            max_browse_actions: DEFAULT_MAX_ACTIONS,
            allowed_hosts: Vec::new(),
            allow_private_network: false,
            browser_flags: Vec::new(),
        }
    }
}

/// Who judges the agentic steps: the engine whose pipeline calls the model. Without one, an
/// agentic step is an error that says so.
pub type Model<'a> = Option<&'a Vaider>;

/// Runs the plan and keeps the run in the store; the run is returned whatever its status.
pub async fn run_plan(
    store: &QaStore,
    plan: &TestPlan,
    options: &RunOptions,
    model: Model<'_>,
) -> Result<TestRun, StoreError> {
    let started = Instant::now();
    let base_url = options
        .base_url
        .clone()
        .filter(|u| !u.trim().is_empty())
        .unwrap_or_else(|| plan.base_url.clone());
    let mut run = new_run(plan, options, &base_url);
    store.save_run(&run)?;
    let mut unfinished = Unfinished {
        store,
        run: Some(run.clone()),
    };
    let mut steps_took = None;
    match open_browser(options, plan, &base_url, model).await {
        Ok((browser, tab, secrets)) => {
            let steps = Steps {
                store,
                options,
                model,
                secrets: &secrets,
            };
            steps_took = Some(steps.perform_recorded(plan, &mut run, &tab, started).await);
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
    // The run's time is its steps'; making the video afterwards is not the app's time.
    let took = steps_took.unwrap_or_else(|| started.elapsed());
    run.duration = Some(took.as_millis() as u64);
    unfinished.run = None;
    store.save_run(&run)?;
    Ok(run)
}

/// The run as it starts: its id (the one asked for, else a new one), `running`, no steps yet.
fn new_run(plan: &TestPlan, options: &RunOptions, base_url: &str) -> TestRun {
    TestRun {
        id: options
            .run_id
            .clone()
            .unwrap_or_else(|| uuid::Uuid::now_v7().simple().to_string()),
        plan_id: plan.id.clone(),
        plan_name: plan.name.clone(),
        status: RunStatus::Running,
        started_at: now(),
        completed_at: None,
        duration: None,
        base_url: base_url.to_string(),
        step_results: Vec::new(),
        error: None,
        video: None,
    }
}

/// The plan's secrets read (off the async threads), then the browser on the plan's page; or
/// why the run cannot start.
async fn open_browser(
    options: &RunOptions,
    plan: &TestPlan,
    base_url: &str,
    model: Model<'_>,
) -> Result<(Browser, Tab, PlanSecrets), String> {
    let refs = plan.secrets.clone();
    // Secrets are bound to the plan's own origin, not to a base URL given for this run.
    let base_origin = origin_of(&plan.base_url).unwrap_or_default();
    let own_secrets = model.map(|engine| engine.own_secrets());
    let secrets = tokio::task::spawn_blocking(move || {
        let own = own_secrets.map(|o| o.values()).unwrap_or_default();
        let guard = Guard {
            base_origin: &base_origin,
            own: &own,
        };
        PlanSecrets::read(&refs, &guard)
    })
    .await
    .unwrap_or_else(|e| Err(format!("reading the plan's secrets stopped: {e}")))?;
    let (browser, tab) = start_browser(options, plan, base_url).await?;
    Ok((browser, tab, secrets))
}

/// A run under way: if it is dropped before it ends (its request cancelled, a panic), its
/// file says it stopped, rather than `running` for ever.
struct Unfinished<'a> {
    store: &'a QaStore,
    run: Option<TestRun>,
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        if let Some(mut run) = self.run.take() {
            run.status = RunStatus::Error;
            run.completed_at = Some(now());
            run.error =
                Some("the run stopped before it ended (cancelled, or Vaider stopped)".into());
            if let Err(e) = self.store.save_run(&run) {
                tracing::error!("{e}");
            }
        }
    }
}

/// A recording under way (with when it started), or why there is none.
type Started = Result<(Recording, String), String>;

async fn start_recording(tab: &Tab, store: &QaStore, run_id: &str) -> Started {
    let frames = store.run_folder(run_id).join("frames");
    let at = now();
    match tab.start_recording(&frames).await {
        Ok(recording) => Ok((recording, at)),
        Err(error) => Err(format!("no video: {error}")),
    }
}

/// The run's WebM at `runs/<runId>/run.webm`, or why there is none (the run goes on either way).
async fn finish_recording(started: Started, store: &QaStore, run_id: &str) -> RunVideo {
    let (recording, started_at) = match started {
        Ok(started) => started,
        Err(error) => {
            return RunVideo {
                path: None,
                started_at: now(),
                duration_ms: 0,
                error: Some(error),
            }
        }
    };
    let out = store.run_folder(run_id).join("run.webm");
    match recording.finish(&out).await {
        Ok(video) => RunVideo {
            path: Some(video.path.display().to_string()),
            started_at,
            duration_ms: video.duration.as_millis() as u64,
            error: None,
        },
        Err(error) => RunVideo {
            path: None,
            started_at,
            duration_ms: 0,
            error: Some(format!("no video: {error}")),
        },
    }
}

/// The run's URL policy: the base URL's origin, the plan's and the config's allow-lists.
fn url_policy(options: &RunOptions, plan: &TestPlan, base_url: &str) -> Result<UrlPolicy, String> {
    let allowed: Vec<String> = plan
        .allowed_hosts
        .iter()
        .chain(&options.allowed_hosts)
        .cloned()
        .collect();
    UrlPolicy::new(base_url, &allowed, options.allow_private_network)
        .map_err(|refusal| format!("NAVIGATION_REFUSED: {refusal}"))
}

/// The browser with a tab on the base URL, or why there is none.
async fn start_browser(
    options: &RunOptions,
    plan: &TestPlan,
    base_url: &str,
) -> Result<(Browser, Tab), String> {
    let policy = url_policy(options, plan, base_url)?;
    let browser = Browser::launch_with_flags(
        options.chrome.clone(),
        options.headless,
        &options.browser_flags,
    )
    .await
    .map_err(|e| {
        let display = match options.headless {
            true => "",
            false => " (headless: false needs a display: run it in a desktop session)",
        };
        format!("BROWSER_ERROR: {e}{display}")
    })?;
    let tab = browser
        .open_tab(options.viewport, policy)
        .await
        .map_err(|e| format!("BROWSER_ERROR: {e}"))?;
    if let Err(error) = tab.open(base_url, OPEN_TIMEOUT).await {
        tab.close().await;
        browser.close().await;
        if let BrowserError::Refused(_) = error {
            return Err(error.to_string());
        }
        return Err(format!(
            "cannot open the base URL {base_url}: {error}. Is the app running there? Start it, or pass the right baseUrl"
        ));
    }
    // What the page logged while loading belongs to the first step.
    Ok((browser, tab))
}

/// A navigation the URL policy refused during the step fails it, even when its command
/// went through (a click on a link that leads away); refused parts of a page are logged.
fn refused_navigation(tab: &Tab, outcome: Outcome, logs: &mut Vec<String>) -> Outcome {
    let mut outcome = outcome;
    for blocked in tab.take_blocked() {
        let message = format!("NAVIGATION_REFUSED: {}", blocked.refusal);
        if !blocked.navigation {
            logs.push(format!("blocked a part of the page: {}", blocked.refusal));
            continue;
        }
        let already = matches!(&outcome, Outcome::Error(m) | Outcome::Failed(m) if m.contains("NAVIGATION_REFUSED"));
        if !already {
            logs.push(message.clone());
            outcome = Outcome::Error(message);
        }
    }
    outcome
}

/// What every step of a run shares.
struct Steps<'a> {
    store: &'a QaStore,
    options: &'a RunOptions,
    model: Model<'a>,
    /// The plan's secret values: typed where a step says `{{secret:NAME}}`, redacted from
    /// whatever a step reports.
    secrets: &'a PlanSecrets,
}

impl Steps<'_> {
    async fn perform(&self, plan: &TestPlan, run: &mut TestRun, tab: &Tab) {
        let base_url = run.base_url.clone();
        let ctx = StepContext {
            tab,
            base_url: &base_url,
            timeout: self.options.step_timeout,
            secrets: self.secrets,
        };
        for (index, step) in plan.steps.iter().enumerate() {
            let result = self.step(&run.id, index, step, &ctx).await;
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

    /// The steps, recorded when the options ask for video; returns how long the steps took
    /// (the video is made after).
    async fn perform_recorded(
        &self,
        plan: &TestPlan,
        run: &mut TestRun,
        tab: &Tab,
        started: Instant,
    ) -> Duration {
        let recording = match self.options.record_video {
            true => Some(start_recording(tab, self.store, &run.id).await),
            false => None,
        };
        self.perform(plan, run, tab).await;
        let took = started.elapsed();
        if let Some(recording) = recording {
            run.video = Some(finish_recording(recording, self.store, &run.id).await);
        }
        took
    }

    async fn step(
        &self,
        run_id: &str,
        index: usize,
        step: &TestStep,
        ctx: &StepContext<'_>,
    ) -> StepResult {
        let (started_at, started) = (now(), Instant::now());
        let shot_path = self.store.run_folder(run_id).join(format!(
            "{:02}-{}.png",
            index + 1,
            file_safe(&step.id)
        ));
        let mut shot = None;
        let (performed, judgement) = self
            .perform_step(&step.kind, ctx, &shot_path, &mut shot)
            .await;
        let mut logs = performed.logs;
        let outcome = refused_navigation(ctx.tab, performed.outcome, &mut logs);
        logs.extend(
            ctx.tab
                .take_console()
                .into_iter()
                .map(|m| format!("console {m}")),
        );
        // A secret value the page or the model repeated is not kept.
        let hide = |text: String| self.secrets.redact(&text);
        let mut logs: Vec<String> = logs.into_iter().map(hide).collect();
        let (status, error) = match outcome {
            Outcome::Passed => (StepStatus::Passed, None),
            Outcome::Failed(message) => (StepStatus::Failed, Some(hide(message))),
            Outcome::Error(message) => (StepStatus::Error, Some(hide(message))),
        };
        let expected = performed.expected.map(hide);
        let actual = performed.actual.map(hide);
        if shot.is_none() {
            shot = keep_screenshot(&shot_path, ctx.tab, &mut logs).await;
        }
        StepResult {
            step_id: step.id.clone(),
            step_name: step.name.clone(),
            step_type: step.kind.name().to_string(),
            status,
            started_at,
            completed_at: now(),
            duration: started.elapsed().as_millis() as u64,
            screenshot: shot,
            logs: Some(logs),
            llm_reasoning: judgement
                .as_ref()
                .map(|j| self.secrets.redact(&j.reasoning)),
            llm_confidence: judgement.as_ref().map(|j| j.confidence),
            expected,
            actual,
            error,
        }
    }

    /// Does the step as its kind says; an agentic step also answers with the model's judgement
    /// (and keeps the shot the model saw in `shot`).
    async fn perform_step(
        &self,
        kind: &StepKind,
        ctx: &StepContext<'_>,
        shot_path: &Path,
        shot: &mut Option<String>,
    ) -> (Performed, Option<Judgement>) {
        match kind {
            StepKind::Selenese { commands } => (steps::selenese(ctx, commands).await, None),
            StepKind::UnitAssertion { assertions } => {
                (steps::unit_assertions(ctx, assertions).await, None)
            }
            StepKind::AgenticAssertion {
                instruction,
                criteria,
                context,
            } => {
                self.judge_now(
                    ctx,
                    shot_path,
                    shot,
                    (instruction, criteria, context.as_deref()),
                )
                .await
            }
            StepKind::AgenticBrowsing {
                instruction,
                expected_outcome,
                timeout,
            } => {
                let task = Browse::new(
                    instruction,
                    expected_outcome.as_deref(),
                    *timeout,
                    self.options.max_browse_actions,
                );
                self.browse(ctx, shot_path, shot, &task).await
            }
        }
    }

    /// The model's judgement of the page as it is now: the shot kept as the step's evidence is
    /// the one the model sees.
    async fn judge_now(
        &self,
        ctx: &StepContext<'_>,
        shot_path: &Path,
        shot: &mut Option<String>,
        (instruction, criteria, context): (&str, &str, Option<&str>),
    ) -> (Performed, Option<Judgement>) {
        let mut logs = Vec::new();
        *shot = keep_screenshot(shot_path, ctx.tab, &mut logs).await;
        let question = Question {
            instruction,
            criteria,
            context,
            // A secret the page shows never reaches the model or the prompt the history keeps.
            page_text: &self
                .secrets
                .redact(&ctx.tab.visible_text().await.unwrap_or_default()),
            secrets: self.secrets.values(),
        };
        let (performed, judged) = self.judge(shot.as_deref(), &question).await;
        let logs = [logs, performed.logs].concat();
        (Performed { logs, ..performed }, judged)
    }

    /// An `agentic_browsing` step: the model's loop, then, when it says it is done and the step
    /// names an expected outcome, its judgement of the page against that outcome.
    async fn browse(
        &self,
        ctx: &StepContext<'_>,
        shot_path: &Path,
        shot: &mut Option<String>,
        task: &Browse<'_>,
    ) -> (Performed, Option<Judgement>) {
        let Some(engine) = self.model else {
            return (no_model(), None);
        };
        let at = Browsing {
            tab: ctx.tab,
            base_url: ctx.base_url,
            engine,
            project: self.project(),
            door: self.options.door,
            parent_id: self.options.parent_id.clone(),
            shot_path,
            secrets: self.secrets,
        };
        let browsed = browse(&at, task).await;
        let (Ending::Done(_), Some(outcome)) = (&browsed.ending, task.expected_outcome) else {
            return (browsed.performed(task), None);
        };
        let question = (task.instruction, outcome, None);
        let (judged, judgement) = self.judge_now(ctx, shot_path, shot, question).await;
        let logs = [browsed.logs, judged.logs].concat();
        (Performed { logs, ..judged }, judgement)
    }

    /// The project folder (the store's parent), where relative media paths start.
    fn project(&self) -> &Path {
        self.store.root().parent().unwrap_or(self.store.root())
    }

    /// The model's judgement of the page as a step's outcome.
    async fn judge(
        &self,
        shot: Option<&str>,
        question: &Question<'_>,
    ) -> (Performed, Option<Judgement>) {
        let error = |message: String| Performed {
            outcome: Outcome::Error(message),
            ..Performed::default()
        };
        let Some(engine) = self.model else {
            return (no_model(), None);
        };
        let Some(shot) = shot else {
            return (
                error("BROWSER_ERROR: the page could not be shot for the model".into()),
                None,
            );
        };
        match judge_page(
            engine,
            Path::new(shot),
            question,
            self.project(),
            (self.options.door, self.options.parent_id.clone()),
        )
        .await
        {
            Err(message) => (error(message), None),
            Ok(judged) => {
                let mut performed = Performed {
                    logs: vec![format!(
                        "judged by the model (history entry {}): {} with confidence {:.2}",
                        judged.interaction_id,
                        if judged.passed { "passed" } else { "failed" },
                        judged.confidence
                    )],
                    expected: Some(question.criteria.to_string()),
                    actual: Some(judged.reasoning.clone()),
                    ..Performed::default()
                };
                if !judged.passed {
                    performed.outcome = Outcome::Failed(format!(
                        "the model judged that the page does not meet: {}",
                        question.criteria
                    ));
                }
                (performed, Some(judged))
            }
        }
    }
}

fn no_model() -> Performed {
    Performed {
        outcome: Outcome::Error(
            "agentic steps need a vision model; none was given to this run".into(),
        ),
        ..Performed::default()
    }
}

/// The page now, kept at `path` (`runs/<runId>/NN-<stepId>.png`); a shot that fails is noted
/// in the logs, not fatal to the step.
async fn keep_screenshot(path: &Path, tab: &Tab, logs: &mut Vec<String>) -> Option<String> {
    let kept = match tab.screenshot().await {
        Ok(png) => write_atomic(path, &png).map_err(|e| e.to_string()),
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

/// A step id as part of a file name.
fn file_safe(id: &str) -> String {
    id.chars()
        .map(
            |c| match c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                true => c,
                false => '-',
            },
        )
        .collect()
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
    vaider_core::pipeline::now_rfc3339()
}
