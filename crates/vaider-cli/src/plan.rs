//! `vaider plan generate|run|approve|secret|list|runs|show|export|import`: the QA test plan tools from the terminal, through
//! the same service the MCP tools call, in the current folder's `.qa-agent/` (or `--dir`).
//! Errors print the contract's code and message. `run` exits 0 when the run passed, 2 when a
//! step failed (the plan found the app at fault: a result), 1 when Vaider could not do its
//! job (an error before the run, or a step it could not carry out: no browser, no model).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use clap::{Args, Subcommand};
use serde_json::Value;
use vaider_core::analysis::Door;
use vaider_core::workspace::Workspace;
use vaider_core::{Config, Vaider};
use vaider_qa::service::{self, GenerateRequest, RunRequest};
use vaider_qa::{QaError, RunStatus, TestRun};

#[derive(Subcommand)]
pub enum PlanAction {
    /// Write a plan from plain-English requirements, looking at the running app at --base-url
    /// and at the code base (--repo: a local folder or a GitHub URL; default: the project).
    Generate(GenerateArgs),
    /// Run a plan in a local Chromium, stopping at the first failed step.
    Run(RunArgs),
    /// Approve a plan Vaider did not write (one from a cloned repository, or edited by hand):
    /// shows its address, hosts and secrets and asks at the terminal. A plan runs only once
    /// Vaider wrote it or you approved what it reaches.
    Approve {
        plan_id: String,
        /// Approve without asking (your own script or CI, where no terminal can ask).
        #[arg(long)]
        yes: bool,
    },
    /// A plan's secret value in the OS keychain (service vaider-plan-secrets).
    Secret {
        #[command(subcommand)]
        action: crate::plan_trust::SecretAction,
    },
    /// The plans kept in the project, newest first.
    List {
        #[arg(long)]
        project: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// The runs kept in the project, newest first.
    Runs {
        #[arg(long)]
        plan: Option<String>,
        /// passed, failed, running or error.
        #[arg(long)]
        status: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// One run, step by step.
    Show {
        run_id: String,
        #[arg(long)]
        json: bool,
    },
    /// Write a plan as a Playwright Test spec that runs with `npx playwright test` (steps a
    /// model performs are marked in it, not exported).
    Export {
        /// A plan's id, a run's id (its plan), or a plan's JSON file.
        plan: String,
        /// Only `playwright`.
        #[arg(long, default_value = "playwright")]
        format: String,
        /// Write the spec here instead of printing it.
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// Read a Playwright Test Agents planner's test plan (specs/*.md) as a plan: each step to
    /// be performed by the model, each expected result judged by it.
    Import {
        /// The planner's Markdown file.
        file: PathBuf,
        /// Where the app runs.
        #[arg(long)]
        base_url: String,
        /// The project's name (default: the project folder's).
        #[arg(long)]
        project: Option<String>,
    },
}

/// What `vaider plan generate` was asked.
#[derive(Args)]
pub struct GenerateArgs {
    /// What the app must do, e.g. "a user can log in and sees their name".
    requirements: String,
    #[arg(long)]
    base_url: String,
    #[arg(long)]
    repo: Option<String>,
    #[arg(long)]
    name: Option<String>,
    /// The provider and model to write it with, instead of the configured ones.
    #[arg(long)]
    provider: Option<String>,
    #[arg(long)]
    model: Option<String>,
    #[arg(long)]
    json: bool,
}

impl GenerateArgs {
    fn request(self, workspace: PathBuf) -> GenerateRequest {
        GenerateRequest {
            requirements: self.requirements,
            repo_url: self.repo,
            base_url: self.base_url,
            name: self.name,
            workspace,
            provider: self.provider,
            model: self.model,
            door: Door::Cli,
            budget_tokens: None,
            github_api: service::GITHUB_API.into(),
        }
    }
}

/// What `vaider plan run` was asked.
#[derive(Args)]
pub struct RunArgs {
    plan_id: String,
    /// Run against this URL instead of the plan's.
    #[arg(long)]
    base_url: Option<String>,
    /// Show the browser window while it runs.
    #[arg(long)]
    headed: bool,
    #[arg(long)]
    json: bool,
}

impl RunArgs {
    fn request(self, workspace: PathBuf) -> RunRequest {
        RunRequest {
            plan_id: self.plan_id,
            base_url: self.base_url,
            workspace,
            door: Door::Cli,
            headless: !self.headed,
            run_id: None,
            approval: None,
        }
    }
}

/// Runs one `vaider plan` command in the project folder `dir` (default: the current one).
pub async fn plan(action: PlanAction, dir: Option<PathBuf>) -> Result<ExitCode> {
    let dir = match dir {
        Some(dir) => dir,
        None => std::env::current_dir()?,
    };
    let workspace = match service::workspace(&Workspace::of(Some(&dir.display().to_string()), [])) {
        Ok(workspace) => workspace,
        Err(error) => return Ok(report(&error)),
    };
    match action {
        PlanAction::Secret { action } => crate::plan_trust::secret(action).await,
        PlanAction::Approve { plan_id, yes } => {
            let engine = Vaider::open(Config::load()?)?;
            Ok(crate::plan_trust::approve(
                &engine, &workspace, &plan_id, yes,
            ))
        }
        PlanAction::Generate(args) => {
            let json = args.json;
            generate(args.request(workspace), json).await
        }
        PlanAction::Run(args) => {
            let json = args.json;
            run(args.request(workspace), json).await
        }
        PlanAction::List { .. } | PlanAction::Runs { .. } | PlanAction::Show { .. } => {
            read(&workspace, action)
        }
        PlanAction::Export { plan, format, out } => {
            Ok(export(&workspace, &plan, &format, out.as_deref()))
        }
        PlanAction::Import {
            file,
            base_url,
            project,
        } => {
            let project = project.unwrap_or_else(|| {
                let name = workspace.file_name().unwrap_or_default();
                name.to_string_lossy().into_owned()
            });
            Ok(import(&workspace, &file, &base_url, &project))
        }
    }
}

/// `vaider plan list`, `runs` and `show`: what the project's `.qa-agent/` holds.
fn read(workspace: &Path, action: PlanAction) -> Result<ExitCode> {
    match action {
        PlanAction::List { project, json } => {
            let plans = service::list_test_plans(workspace, project.as_deref());
            Ok(match json {
                true => print_json(&plans),
                false => print_rows(
                    &plans["plans"],
                    &["id", "name", "project", "stepCount", "createdAt"],
                ),
            })
        }
        PlanAction::Runs { plan, status, json } => Ok(
            match service::list_test_runs(workspace, plan.as_deref(), status.as_deref()) {
                Ok(runs) if json => print_json(&runs),
                Ok(runs) => print_rows(
                    &runs["runs"],
                    &["id", "planName", "status", "duration", "startedAt"],
                ),
                Err(error) => report(&error),
            },
        ),
        PlanAction::Show { run_id, json } => Ok(match service::get_test_run(workspace, &run_id) {
            Ok(run) if json => print_json(&serde_json::to_value(&run)?),
            Ok(run) => {
                print_run(&run);
                ExitCode::SUCCESS
            }
            Err(error) => report(&error),
        }),
        // plan() sends only the three above here.
        _ => Ok(ExitCode::FAILURE),
    }
}

/// `vaider plan export`: the spec, printed or written to `out`.
fn export(workspace: &Path, plan: &str, format: &str, out: Option<&Path>) -> ExitCode {
    if format != "playwright" {
        return fail(&format!("unknown --format {format:?}: use playwright"));
    }
    let store = vaider_qa::QaStore::in_project(workspace);
    let plan = match vaider_qa::export::find_plan(&store, plan) {
        Ok(plan) => plan,
        Err(error) => return fail(&error),
    };
    let spec = vaider_qa::export::playwright_spec(&plan);
    match out {
        None => print!("{spec}"),
        Some(out) => match std::fs::write(out, spec) {
            Ok(()) => println!(
                "Wrote {}: run it with `npx playwright test {}` (BASE_URL sets the app's address)",
                out.display(),
                out.display()
            ),
            Err(e) => return fail(&format!("cannot write {}: {e}", out.display())),
        },
    }
    ExitCode::SUCCESS
}

/// `vaider plan import`: the plan written, and how to run it.
fn import(workspace: &Path, file: &Path, base_url: &str, project: &str) -> ExitCode {
    let store = vaider_qa::QaStore::in_project(workspace);
    match vaider_qa::import::import_file(&store, file, base_url, project) {
        Ok((plan, path)) => {
            // You imported it with the address you gave: Vaider wrote this plan for you.
            let data_dir = Config::load().map(|c| c.data_dir());
            let kept = data_dir.map_err(|e| e.to_string()).and_then(|dir| {
                vaider_qa::trust::PlanApprovals::in_data_dir(&dir).record_written(&plan, &path)
            });
            if let Err(error) = kept {
                return fail(&error);
            }
            let path = path.display().to_string();
            println!(
                "{}",
                vaider_server::text::plan_written(&plan.name, plan.steps.len(), &path)
            );
            println!("Run it: vaider plan run {}", plan.id);
            ExitCode::SUCCESS
        }
        Err(error) => fail(&error),
    }
}

fn fail(message: &str) -> ExitCode {
    eprintln!("vaider: {message}");
    ExitCode::FAILURE
}

/// `vaider plan generate`: the plan's id, name, steps and file.
async fn generate(request: GenerateRequest, json: bool) -> Result<ExitCode> {
    let engine = Vaider::open(Config::load()?)?;
    Ok(match service::generate_test_plan(&engine, request).await {
        Ok(generated) if json => print_json(&serde_json::to_value(&generated)?),
        Ok(generated) => {
            let (name, steps, path) = (&generated.name, generated.steps, &generated.path);
            println!("{}", vaider_server::text::plan_written(name, steps, path));
            println!("Run it: vaider plan run {}", generated.plan_id);
            ExitCode::SUCCESS
        }
        Err(error) => report(&error),
    })
}

/// `vaider plan run`: the run step by step (or its summary as JSON); exit 0 passed, 2 a step
/// failed, 1 the run could not be carried out.
async fn run(mut request: RunRequest, json: bool) -> Result<ExitCode> {
    let engine = Vaider::open(Config::load()?)?;
    let workspace = request.workspace.clone();
    request.approval =
        match crate::plan_trust::approval_for_run(&engine, &workspace, &request.plan_id) {
            Ok(approval) => approval,
            Err(code) => return Ok(code),
        };
    Ok(match service::run_test_plan(&engine, request).await {
        Ok(summary) => {
            if json {
                print_json(&serde_json::to_value(&summary)?);
            } else if let Ok(run) = service::get_test_run(&workspace, &summary.run_id) {
                print_run(&run);
            }
            match summary.status {
                RunStatus::Passed => ExitCode::SUCCESS,
                RunStatus::Failed => ExitCode::from(2),
                _ => ExitCode::FAILURE,
            }
        }
        Err(error) => report(&error),
    })
}

fn print_json(value: &Value) -> ExitCode {
    println!(
        "{}",
        serde_json::to_string_pretty(value).unwrap_or_default()
    );
    ExitCode::SUCCESS
}

/// One tab-separated line per row, with a header; "(none)" for an empty list.
fn print_rows(rows: &Value, columns: &[&str]) -> ExitCode {
    let rows = rows.as_array().cloned().unwrap_or_default();
    if rows.is_empty() {
        println!("(none)");
        return ExitCode::SUCCESS;
    }
    println!("{}", columns.join("\t"));
    for row in rows {
        let cells: Vec<String> = columns
            .iter()
            .map(|c| match &row[*c] {
                Value::String(s) => s.clone(),
                Value::Null => "-".into(),
                other => other.to_string(),
            })
            .collect();
        println!("{}", cells.join("\t"));
    }
    ExitCode::SUCCESS
}

/// The run as every door reads it: the plan and a line per step on stdout, how it went on
/// stderr.
fn print_run(run: &TestRun) {
    let told = vaider_server::text::run(run);
    println!("{}", told.body);
    eprintln!("{}", told.notes);
}

/// The error as the contract names it, on stderr; exit 1.
pub(crate) fn report(error: &QaError) -> ExitCode {
    eprintln!("vaider: {error}");
    if let Some(details) = &error.details {
        eprintln!("details: {details}");
    }
    ExitCode::FAILURE
}
