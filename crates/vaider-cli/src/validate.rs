//! `vaider validate` and `vaider test-results`: the test-run tools from the terminal, through
//! the same code the MCP tools run. `validate` exits 0 when the rubric passed, 2 when the tests
//! ran and failed it (a result), 1 when Vaider could not get them running (no such file, the
//! project's setup: config, browser, missing dependency).

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Result;
use vaider_core::analysis::Door;
use vaider_core::progress::NoProgress;
use vaider_core::{Config, Vaider};
use vaider_validate::{AgentResult, Limits, ResultsRequest, ValidateRequest};

/// What `vaider validate` was asked.
#[derive(Debug, clap::Args)]
pub struct ValidateArgs {
    /// The spec file, e.g. e2e/login.spec.ts.
    pub test_file: String,
    /// The folder of playwright.config.* (default: the nearest one above the test).
    #[arg(long)]
    pub project_dir: Option<String>,
    /// Only the tests whose title matches (Playwright's --grep).
    #[arg(long)]
    pub grep: Option<String>,
    /// A statement the recording must show (the video is watched); repeat for several.
    #[arg(long = "expect")]
    pub expectations: Vec<String>,
    #[arg(long, default_value_t = 45_000)]
    pub max_test_duration_ms: u64,
    #[arg(long, default_value_t = 1)]
    pub min_screenshots: usize,
    /// Time limit in seconds for the run (default 120).
    #[arg(long)]
    pub timeout: Option<u64>,
    /// Print the AgentResult as JSON.
    #[arg(long)]
    pub json: bool,
}

pub async fn validate(args: ValidateArgs) -> Result<ExitCode> {
    let engine = Vaider::open(Config::load()?)?;
    let request = ValidateRequest {
        test_path: args.test_file,
        project_dir: args.project_dir,
        grep: args.grep,
        expectations: args.expectations,
        limits: Limits {
            max_test_duration_ms: args.max_test_duration_ms,
            min_screenshots: args.min_screenshots,
        },
        timeout: args.timeout.map(Duration::from_secs),
        provider: None,
        model: None,
        door: Door::Cli,
        base_dirs: vec![std::env::current_dir()?],
    };
    let result = vaider_validate::validate_test(&engine, request, &NoProgress).await;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else {
        print_validation(&result);
    }
    Ok(exit_code(&result))
}

/// 0 passed, 2 the tests ran and failed (a result), 1 Vaider could not get them running.
fn exit_code(result: &AgentResult) -> ExitCode {
    if result.success {
        ExitCode::SUCCESS
    } else if vaider_validate::service::could_not_run(result) {
        ExitCode::FAILURE
    } else {
        ExitCode::from(2)
    }
}

/// The validation as every door reads it: what ran on stdout, then the verdict on stderr (only
/// the verdict, as `vaider: …`, when the tests could not be run).
fn print_validation(result: &AgentResult) {
    let told = vaider_server::text::validation(result);
    if told.body.is_empty() {
        eprintln!("vaider: {}", result.error.as_deref().unwrap_or("failed"));
        return;
    }
    println!("{}", told.body);
    eprintln!("{}", told.notes);
}

/// `vaider test-results PATH`: each failed test watched at its failing step, one summary.
pub async fn test_results(path: PathBuf, json: bool) -> Result<ExitCode> {
    let engine = Vaider::open(Config::load()?)?;
    let request = ResultsRequest {
        path: path.display().to_string(),
        provider: None,
        model: None,
        timeout: None,
        door: Door::Cli,
        base_dirs: vec![std::env::current_dir()?],
    };
    let result = vaider_validate::analyse_test_results(&engine, request, &NoProgress).await;
    if json {
        println!("{}", serde_json::to_string_pretty(&result)?);
    } else if result.data["summary"].is_string() {
        println!("{}", vaider_server::text::test_results(&result));
    } else {
        eprintln!("vaider: {}", vaider_server::text::test_results(&result));
    }
    Ok(if result.success {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
