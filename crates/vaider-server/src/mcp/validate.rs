//! The test-run tools of contracts.md §2: `validate_test` (run a Playwright test and judge it
//! by the rubric, the video watched against the agent's expectations) and
//! `analyse_test_results` (watch the failed tests' videos of a run that already finished).
//! Each result is the `AgentResult`: paths, numbers and sentences.

use std::path::PathBuf;
use std::time::Duration;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, ContentBlock};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::Deserialize;
use vaider_core::analysis::Door;
use vaider_validate::{AgentResult, Limits, ResultsRequest, ValidateRequest};

use super::call::non_empty;
use super::progress::McpProgress;
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
    /// Run a Playwright test file with the project's own Playwright (video, screenshots and
    /// trace on for this run) and judge it: did the browser start, did the test run and pass,
    /// are there screenshots, was it fast enough, what console errors and network failures
    /// the page had. Give `expectations` to have Vaider watch the recording and check them.
    /// Returns the AgentResult: success, data.validation_result, data.rubric_validation,
    /// data.report (per test), data.video_analysis, error, cost_usd.
    #[tool(name = "validate_test")]
    async fn validate_test(
        &self,
        Parameters(args): Parameters<ValidateTestArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let base_dirs = self.base_dirs(&ctx, &args.cwd).await;
        let request = validate_request(args, Door::Mcp, base_dirs);
        let progress = McpProgress::start(&ctx);
        let result = vaider_validate::validate_test(&self.engine, request, &progress).await;
        drop(progress);
        Ok(answer(&result, validate_sentence(&result)))
    }

    /// Watch the failed tests of a Playwright run that already finished (its test-results
    /// folder or JSON report; nothing is run): each failed test's video is analysed with its
    /// error as context, and the summary says, test by test, what the screen showed when it
    /// failed.
    #[tool(name = "analyse_test_results")]
    async fn analyse_test_results(
        &self,
        Parameters(args): Parameters<AnalyseTestResultsArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let request = ResultsRequest {
            path: args.path,
            provider: non_empty(args.provider),
            model: non_empty(args.model),
            timeout: (args.timeout_sec > 0).then(|| Duration::from_secs(args.timeout_sec)),
            door: Door::Mcp,
            base_dirs: self.base_dirs(&ctx, &args.cwd).await,
        };
        let progress = McpProgress::start(&ctx);
        let result = vaider_validate::analyse_test_results(&self.engine, request, &progress).await;
        drop(progress);
        let sentence = result.data["summary"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_default();
        Ok(answer(&result, sentence))
    }
}

impl VaiderMcp {
    /// The client's roots, then its `cwd`: where relative paths are looked for.
    async fn base_dirs(&self, ctx: &RequestContext<RoleServer>, cwd: &str) -> Vec<PathBuf> {
        let mut dirs = super::call::client_roots(ctx).await;
        if !cwd.trim().is_empty() {
            dirs.push(PathBuf::from(cwd.trim()));
        }
        dirs
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
/// validation that could not run at all (`data: {}`) is a tool error: a failed rubric is an
/// answer.
fn answer(result: &AgentResult, sentence: String) -> CallToolResult {
    let structured = serde_json::to_value(result).unwrap_or_default();
    let ran = result.data.as_object().is_some_and(|d| !d.is_empty());
    let content = vec![
        ContentBlock::text(sentence),
        ContentBlock::text(structured.to_string()),
    ];
    let mut answer = if ran {
        CallToolResult::success(content)
    } else {
        CallToolResult::error(content)
    };
    answer.structured_content = Some(structured);
    answer
}

fn validate_sentence(result: &AgentResult) -> String {
    match (&result.error, result.success) {
        (_, true) => format!(
            "The test passed the rubric in {} ms (cost ${:.4}).",
            result.execution_time_ms, result.cost_usd
        ),
        (Some(error), false) => format!("The test failed the rubric: {error}"),
        (None, false) => "The test failed the rubric.".to_string(),
    }
}
