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
pub struct ValidateArgs {
    pub test_file: String,
    pub project_dir: Option<String>,
    pub grep: Option<String>,
    pub expectations: Vec<String>,
    pub max_test_duration_ms: u64,
    pub min_screenshots: usize,
    pub timeout: Option<u64>,
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

fn print_validation(result: &AgentResult) {
    let data = &result.data;
    let v = &data["validation_result"];
    if v.is_null() {
        eprintln!("vaider: {}", result.error.as_deref().unwrap_or("failed"));
        return;
    }
    let flag = |key: &str| if v[key] == true { "yes" } else { "no" };
    println!(
        "browser launched: {} · test executed: {} · test passed: {} · {} ms",
        flag("browser_launched"),
        flag("test_executed"),
        flag("test_passed"),
        v["execution_time_ms"]
    );
    for (label, key) in [
        ("screenshot", "screenshots"),
        ("console error", "console_errors"),
        ("network failure", "network_failures"),
    ] {
        for item in v[key].as_array().into_iter().flatten() {
            println!("- {label}: {}", item.as_str().unwrap_or_default());
        }
    }
    for e in data["video_analysis"]["expectations"]
        .as_array()
        .into_iter()
        .flatten()
    {
        println!(
            "- [{}] {}",
            e["verdict"].as_str().unwrap_or_default().to_uppercase(),
            e["expectation"].as_str().unwrap_or_default()
        );
    }
    let rubric = &data["rubric_validation"];
    for w in rubric["warnings"].as_array().into_iter().flatten() {
        println!("warning: {}", w.as_str().unwrap_or_default());
    }
    for e in rubric["errors"].as_array().into_iter().flatten() {
        println!("error: {}", e.as_str().unwrap_or_default());
    }
    println!(
        "{} · cost ${:.4} · artifacts {}",
        if result.success { "PASSED" } else { "FAILED" },
        result.cost_usd,
        data["artifacts_dir"].as_str().unwrap_or_default()
    );
}

/// `vaider test-results PATH`: each failed test's video watched, one summary.
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
    } else if let Some(summary) = result.data["summary"].as_str() {
        println!("{summary}");
    } else {
        eprintln!("vaider: {}", result.error.as_deref().unwrap_or("failed"));
    }
    Ok(if result.success {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
