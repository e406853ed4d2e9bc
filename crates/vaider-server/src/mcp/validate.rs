//! The test-run tools of contracts.md §2: `validate_test` (run a Playwright test and judge it
//! by the rubric, the video watched against the agent's expectations) and
//! `analyse_test_results` (watch the failed tests' videos of a run that already finished).
//! Each result is the `AgentResult`: paths, numbers and sentences.

use std::path::PathBuf;
use std::time::Duration;

use rmcp::handler::server::tool::InputResponses as Answers;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResponse, CallToolResult, InputResponses};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;
use vaider_core::analysis::Door;
use vaider_validate::{AgentResult, Limits, ResultsRequest, ValidateRequest};

use super::answer::of_fields;
use super::call::non_empty;
use super::workspace::Need;
use super::VaiderMcp;

#[derive(Debug, Deserialize, JsonSchema)]
pub struct ValidateTestArgs {
    /// The Playwright spec to run, absolute or relative to the workspace, e.g.
    /// "e2e/login.spec.ts".
    #[serde(alias = "testPath")]
    pub test_path: String,
    /// The folder holding playwright.config.* (default: the nearest one above the test).
    #[serde(default, alias = "projectDir")]
    pub project_dir: String,
    /// Only the tests whose title matches this regular expression (Playwright's --grep).
    #[serde(default)]
    pub grep: String,
    /// What the recording must show, e.g. "after signing in the dashboard says 'Welcome'".
    /// The video is watched by the vision model; each one not shown fails the rubric.
    #[serde(default)]
    pub expectations: Vec<String>,
    /// The longest the tests may take, browser start excluded (default 45000).
    #[serde(default, alias = "maxTestDurationMs")]
    pub max_test_duration_ms: Option<u64>,
    /// The fewest screenshots the run must leave (default 1).
    #[serde(default, alias = "minScreenshots")]
    pub min_screenshots: Option<u64>,
    /// Time limit in seconds for the Playwright run (default 120); the run is killed then.
    #[serde(default, alias = "timeoutSec")]
    pub timeout_sec: u64,
    /// The provider to watch the video with, instead of the configured one.
    #[serde(default)]
    pub provider: String,
    #[serde(default)]
    pub model: String,
    /// The workspace folder, when the client has no workspace roots.
    #[serde(default)]
    pub cwd: String,
}

#[derive(Debug, Deserialize, JsonSchema)]
pub struct AnalyseTestResultsArgs {
    /// A finished run's test-results folder, or its JSON report file.
    pub path: String,
    #[serde(default)]
    pub provider: String,
    #[serde(default)]
    pub model: String,
    /// Time limit in seconds for each video's analysis (default: the configured one).
    #[serde(default)]
    pub timeout_sec: u64,
    #[serde(default)]
    pub cwd: String,
}

#[tool_router(router = validate_tools, vis = "pub(super)")]
impl VaiderMcp {
    /// Run a Playwright test and judge it (rubric, video); a failure is watched at its step.
    #[tool(name = "validate_test")]
    async fn validate_test(
        &self,
        Parameters(args): Parameters<ValidateTestArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let sources = [args.test_path.as_str(), args.project_dir.as_str()];
        let base_dirs = match self.base_dirs(&ctx, answers, &args.cwd, &sources).await {
            Ok(dirs) => dirs,
            Err(ask) => return Ok(ask),
        };
        let request = validate_request(args, Door::Mcp, base_dirs);
        let progress = self.progress(&ctx);
        let result = vaider_validate::validate_test(&self.engine, request, &progress).await;
        drop(progress);
        Ok(answer(&result, crate::text::validation(&result).whole()).into())
    }

    /// Watch each failed test of a finished Playwright run at its failing step; one summary.
    #[tool(name = "analyse_test_results")]
    async fn analyse_test_results(
        &self,
        Parameters(args): Parameters<AnalyseTestResultsArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let base_dirs = match self
            .base_dirs(&ctx, answers, &args.cwd, &[&args.path])
            .await
        {
            Ok(dirs) => dirs,
            Err(ask) => return Ok(ask),
        };
        let request = ResultsRequest {
            path: args.path,
            provider: non_empty(args.provider),
            model: non_empty(args.model),
            timeout: (args.timeout_sec > 0).then(|| Duration::from_secs(args.timeout_sec)),
            door: Door::Mcp,
            base_dirs,
        };
        let progress = self.progress(&ctx);
        let result = vaider_validate::analyse_test_results(&self.engine, request, &progress).await;
        drop(progress);
        Ok(answer(&result, crate::text::test_results(&result)).into())
    }
}

impl VaiderMcp {
    /// Where relative paths are looked for (the one workspace rule), or the answer asking a
    /// 2026-07-28 client for its roots first.
    async fn base_dirs(
        &self,
        ctx: &RequestContext<RoleServer>,
        answers: Option<InputResponses>,
        cwd: &str,
        sources: &[&str],
    ) -> Result<Vec<PathBuf>, CallToolResponse> {
        let need = Need::for_sources(cwd, sources);
        match self.workspace(ctx, answers.as_ref(), need).await {
            Ok(workspace) => Ok(workspace.folders().to_vec()),
            Err(ask) => Err(ask.into()),
        }
    }
}

/// The request every door builds from these arguments.
pub fn validate_request(
    args: ValidateTestArgs,
    door: Door,
    base_dirs: Vec<PathBuf>,
) -> ValidateRequest {
    let defaults = Limits::default();
    ValidateRequest {
        test_path: args.test_path,
        project_dir: non_empty(args.project_dir),
        grep: non_empty(args.grep),
        expectations: args
            .expectations
            .into_iter()
            .map(|e| e.trim().to_string())
            .filter(|e| !e.is_empty())
            .collect(),
        limits: Limits {
            max_test_duration_ms: args
                .max_test_duration_ms
                .unwrap_or(defaults.max_test_duration_ms),
            min_screenshots: args
                .min_screenshots
                .map_or(defaults.min_screenshots, |n| n.min(10_000) as usize),
        },
        timeout: (args.timeout_sec > 0).then(|| Duration::from_secs(args.timeout_sec)),
        provider: non_empty(args.provider),
        model: non_empty(args.model),
        door,
        base_dirs,
    }
}

/// The AgentResult as `structuredContent` and as text, after a sentence for people. Only a
/// validation Vaider could not get running (no such file, the project's setup) is a tool
/// error: tests that ran and failed are an answer.
fn answer(result: &AgentResult, sentence: String) -> CallToolResult {
    let structured = serde_json::to_value(result).unwrap_or_default();
    let ran = !vaider_validate::service::could_not_run(result);
    // The sentence is made of the AgentResult's own fields (success, execution_time_ms,
    // cost_usd, error; analyse_test_results' is data.summary), whose exact shape is the
    // contract's: no `summary` added.
    of_fields(sentence, structured, !ran)
}
