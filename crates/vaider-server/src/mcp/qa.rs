//! The QA test plan tools of contracts.md §3: `generate_test_plan`, `run_test_plan`,
//! `list_test_plans`, `list_test_runs` and `get_test_run`, with the contract's names, inputs
//! and outputs. A failure is `{error: {code, message, details?}}` as `structuredContent` of an
//! `isError` result, so an agent branches on the code. Plans and runs live in the project's
//! `.qa-agent/` (the one workspace rule: the `cwd` argument, else the client's first root).

use std::path::{Path, PathBuf};

use rmcp::handler::server::tool::InputResponses as Answers;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResponse, CallToolResult, InputResponses};
use rmcp::service::RequestContext;
use rmcp::{tool, tool_router, ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use vaider_core::analysis::Door;
use vaider_core::person::Decision;
use vaider_qa::service::{self, GenerateRequest, RunRequest};
use vaider_qa::QaError;

use super::answer::said;
use super::ask::{self, Asked};
use super::call::non_empty;
use super::workspace::{answer_in, Need};
use super::VaiderMcp;
use crate::api_error::Mapped;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
// The required fields default to empty, so that one left out reaches the service and is its
// INVALID_INPUT (the contract's error), not a protocol error; the schema still requires them.
#[schemars(extend("required" = ["requirements", "baseUrl"]))]
pub struct GenerateTestPlanArgs {
    /// What the app must do, in plain English, e.g. "a user can log in and sees their name".
    #[serde(default)]
    pub requirements: String,
    /// Where the app runs, e.g. "http://localhost:3000". Vaider opens it and shows its first
    /// page to the model, so the app must be running.
    #[serde(default)]
    pub base_url: String,
    /// The code base to take context from: a GitHub repository or pull request URL, or a local
    /// folder (default: the workspace).
    #[serde(default)]
    pub repo_url: Option<String>,
    /// The plan's name (default: the model's).
    #[serde(default)]
    pub name: Option<String>,
    /// The provider and model to write the plan with, instead of the configured ones.
    #[serde(default)]
    pub provider: Option<String>,
    #[serde(default)]
    pub model: Option<String>,
    /// The project folder whose .qa-agent/ keeps the plans, when the client has no roots.
    #[serde(default)]
    pub cwd: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
// The required fields default to empty, so that one left out reaches the service and is its
// INVALID_INPUT (the contract's error), not a protocol error; the schema still requires them.
#[schemars(extend("required" = ["planId"]))]
pub struct RunTestPlanArgs {
    /// The plan's id, as generate_test_plan or list_test_plans gave it.
    #[serde(default)]
    pub plan_id: String,
    /// Run against this URL instead of the plan's baseUrl.
    #[serde(default)]
    pub base_url: Option<String>,
    /// False shows the browser window while it runs (needs a display). Default true.
    #[serde(default)]
    pub headless: Option<bool>,
    #[serde(default)]
    pub cwd: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListTestPlansArgs {
    /// Only this project's plans.
    #[serde(default)]
    pub project: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListTestRunsArgs {
    /// Only this plan's runs.
    #[serde(default)]
    pub plan_id: Option<String>,
    /// Only runs in this status: passed, failed, running (or error).
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub cwd: Option<String>,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
// The required fields default to empty, so that one left out reaches the service and is its
// INVALID_INPUT (the contract's error), not a protocol error; the schema still requires them.
#[schemars(extend("required" = ["runId"]))]
pub struct GetTestRunArgs {
    /// The run's id, as run_test_plan or list_test_runs gave it.
    #[serde(default)]
    pub run_id: String,
    #[serde(default)]
    pub cwd: Option<String>,
}

/// The key of the plan approval question in an `input_required` answer.
const APPROVE_PLAN: &str = "approve_plan";

#[tool_router(router = qa_tools, vis = "pub(super)")]
impl VaiderMcp {
    /// Write a QA test plan from plain-English requirements and the running app.
    #[tool(name = "generate_test_plan")]
    async fn generate_test_plan(
        &self,
        Parameters(args): Parameters<GenerateTestPlanArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let workspace = self.qa_workspace(&ctx, answers, args.cwd.as_deref()).await;
        answer_in(workspace, |workspace| self.generate(args, workspace)).await
    }

    /// Run a kept test plan in a local browser, step by step, stopping at the first failure.
    #[tool(name = "run_test_plan")]
    async fn run_test_plan(
        &self,
        Parameters(args): Parameters<RunTestPlanArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let retried = answers.clone();
        let workspace = match self.qa_workspace(&ctx, answers, args.cwd.as_deref()).await {
            Ok(workspace) => workspace,
            Err(early) => return Ok(early),
        };
        // A plan Vaider did not write runs only once a person approved what it reaches.
        let approval = match self
            .plan_approval(&ctx, retried.as_ref(), &workspace, &args.plan_id)
            .await
        {
            Ok(approval) => approval,
            Err(early) => return Ok(early),
        };
        Ok(self.run_plan(args, workspace, approval).await.into())
    }

    /// List the kept test plans, newest first.
    #[tool(name = "list_test_plans")]
    async fn list_test_plans(
        &self,
        Parameters(args): Parameters<ListTestPlansArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let workspace = self.qa_workspace(&ctx, answers, args.cwd.as_deref()).await;
        answer_in(workspace, |workspace| async move {
            let plans = service::list_test_plans(&workspace, args.project.as_deref());
            reply(Ok(plans), |plans| counted(plans, "plans"))
        })
        .await
    }

    /// List the test runs, newest first.
    #[tool(name = "list_test_runs")]
    async fn list_test_runs(
        &self,
        Parameters(args): Parameters<ListTestRunsArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let workspace = self.qa_workspace(&ctx, answers, args.cwd.as_deref()).await;
        answer_in(workspace, |workspace| async move {
            let (plan, status) = (args.plan_id.as_deref(), args.status.as_deref());
            reply(service::list_test_runs(&workspace, plan, status), |runs| {
                counted(runs, "runs")
            })
        })
        .await
    }

    /// Get one test run with every step's status, evidence and reasoning.
    #[tool(name = "get_test_run")]
    async fn get_test_run(
        &self,
        Parameters(args): Parameters<GetTestRunArgs>,
        Answers(answers): Answers,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let workspace = self.qa_workspace(&ctx, answers, args.cwd.as_deref()).await;
        answer_in(workspace, |workspace| async move {
            reply(service::get_test_run(&workspace, &args.run_id), |run| {
                crate::text::run(run).whole()
            })
        })
        .await
    }
}

impl VaiderMcp {
    /// The project whose `.qa-agent/` the call works in (the one workspace rule), or the
    /// answer to send instead: roots asked of a 2026-07-28 client, or the contract's error.
    async fn qa_workspace(
        &self,
        ctx: &RequestContext<RoleServer>,
        answers: Option<InputResponses>,
        cwd: Option<&str>,
    ) -> Result<PathBuf, CallToolResponse> {
        let need = Need::always(cwd.unwrap_or_default());
        let workspace = self
            .workspace(ctx, answers.as_ref(), need)
            .await
            .map_err(CallToolResponse::from)?;
        service::workspace(&workspace).map_err(|error| failed(&error).into())
    }

    /// `generate_test_plan` in the workspace: the plan written, and how to run it.
    async fn generate(&self, args: GenerateTestPlanArgs, workspace: PathBuf) -> CallToolResult {
        let request = GenerateRequest {
            requirements: args.requirements,
            repo_url: args.repo_url,
            base_url: args.base_url,
            name: args.name,
            workspace,
            provider: args.provider.and_then(non_empty),
            model: args.model.and_then(non_empty),
            door: Door::Mcp,
            budget_tokens: None,
            github_api: service::GITHUB_API.into(),
        };
        reply(
            service::generate_test_plan(&self.engine, request).await,
            |plan| {
                let written = crate::text::plan_written(&plan.name, plan.steps, &plan.path);
                format!(
                    "{written}. Run it with run_test_plan planId {:?}.",
                    plan.plan_id
                )
            },
        )
    }

    /// The person's approval this run needs, if it needs one: asked of the user through the
    /// client, or the answer to send instead (the question on 2026-07-28, a refusal naming the
    /// command that approves it).
    async fn plan_approval(
        &self,
        ctx: &RequestContext<RoleServer>,
        answers: Option<&InputResponses>,
        workspace: &Path,
        plan_id: &str,
    ) -> Result<Option<Decision>, CallToolResponse> {
        // A plan that is not there is the run's own error, said by the run.
        let Ok(Some(unapproved)) = service::needs_approval(&self.engine, workspace, plan_id) else {
            return Ok(None);
        };
        let refused = |how: &str| CallToolResponse::from(failed(&unapproved.refusal(how)));
        match ask::yes_or_no(ctx, answers, APPROVE_PLAN, &unapproved.question()).await {
            Asked::Yes(decision) => Ok(Some(decision)),
            Asked::No => Err(refused("you declined when your client asked")),
            Asked::Pending(question) => Err(CallToolResponse::from(*question)),
            Asked::CannotAsk => Err(refused(
                "this MCP client cannot ask you (it offers no elicitation)",
            )),
        }
    }

    /// `run_test_plan` in the workspace. A run that stopped at a failing step is an answer
    /// (the plan did its job), never `isError`: that is kept for a run Vaider could not carry
    /// out.
    async fn run_plan(
        &self,
        args: RunTestPlanArgs,
        workspace: PathBuf,
        approval: Option<Decision>,
    ) -> CallToolResult {
        let request = RunRequest {
            plan_id: args.plan_id,
            base_url: args.base_url,
            workspace: workspace.clone(),
            door: Door::Mcp,
            headless: args.headless.unwrap_or(true),
            run_id: None,
            approval,
        };
        let summary = service::run_test_plan(&self.engine, request).await;
        reply(summary, |summary| run_text(&workspace, summary))
    }
}

/// The run as every door reads it (its steps, then how it went), from its file; the summary's
/// error if the file cannot be read.
fn run_text(workspace: &Path, summary: &service::RunSummary) -> String {
    match service::get_test_run(workspace, &summary.run_id) {
        Ok(run) => crate::text::run(&run).whole(),
        Err(error) => summary.error.clone().unwrap_or_else(|| error.to_string()),
    }
}

/// "3 test plans.": how many of `what` a listing holds.
fn counted(listing: &Value, what: &str) -> String {
    let count = listing[what].as_array().map_or(0, Vec::len);
    format!("{count} test {what}.")
}

/// A tool's outcome as its answer: the sentence `told` makes of the value, then the value as
/// JSON (also the `structuredContent`, with the sentence as its `summary`); or the contract's
/// error.
fn reply<T: Serialize>(
    outcome: Result<T, QaError>,
    told: impl FnOnce(&T) -> String,
) -> CallToolResult {
    match outcome {
        Ok(value) => {
            let structured = serde_json::to_value(&value).unwrap_or_default();
            said(told(&value), structured, false)
        }
        Err(error) => failed(&error),
    }
}

/// The contract's `{error: {code, message, details?}}`, as an error result whose text is the
/// code and message every door shows (`api_error`).
fn failed(error: &QaError) -> CallToolResult {
    said(Mapped::from(error).line(), error.to_json(), true)
}
