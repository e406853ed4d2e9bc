//! validate_test on the real fixture project (tests/playwright-project, the system Chromium)
//! without any door: the runner, report, trace and rubric together. The doors' end-to-end
//! tests are in vaider-server/tests/validate.rs.

use std::path::PathBuf;

use vaider_core::analysis::Door;
use vaider_core::progress::NoProgress;
use vaider_core::{Config, Vaider};
use vaider_validate::{validate_test, Limits, ValidateRequest};

fn fixture() -> PathBuf {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/playwright-project"
    ));
    vaider_test_support::playwright::ensure_playwright_ffmpeg(&dir);
    dir
}

fn request(test: &str) -> ValidateRequest {
    ValidateRequest {
        test_path: test.into(),
        project_dir: None,
        grep: None,
        expectations: Vec::new(),
        limits: Limits::default(),
        timeout: None,
        provider: None,
        model: None,
        door: Door::Cli,
        base_dirs: vec![fixture()],
    }
}

#[tokio::test]
async fn a_passing_test_passes_the_rubric_and_is_one_history_entry() {
    let data = tempfile::tempdir().unwrap();
    let engine = Vaider::open(Config {
        data_dir: Some(data.path().to_path_buf()),
        ..Config::default()
    })
    .unwrap();
    let result = validate_test(&engine, request("tests/login.spec.mjs"), &NoProgress).await;
    let text = serde_json::to_string_pretty(&result).unwrap();
    assert!(result.success, "{text}");
    let v = &result.data["validation_result"];
    assert_eq!(v["browser_launched"], true, "{text}");
    assert_eq!(v["test_executed"], true);
    assert_eq!(v["test_passed"], true);
    let shots = v["screenshots"].as_array().unwrap();
    assert_eq!(shots.len(), 2, "the test's own and Playwright's: {text}");
    assert_eq!(result.cost_usd, 0.0);
    let rows = engine.history().list(10, 0).unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].tool, "validate_test");
    assert_eq!(rows[0].status, vaider_core::history::Status::Ok);
    // The run's files are in the data folder, not among the project's tests or its own
    // test-results.
    let dir = PathBuf::from(result.data["artifacts_dir"].as_str().unwrap());
    assert!(dir.starts_with(data.path()), "{text}");
    assert!(dir.join("runner.stdout.log").is_file());
    assert!(dir.join("report.json").is_file());
    // Only this run's folder: another test may be running the fixture beside it.
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir(dir.parent().unwrap());
}

/// A test, a reporter or a dependency of the project can read its environment: the server's
/// keys and token must not be in it, while what Playwright needs (PATH, HOME) and what the
/// user declared (`child_env_pass`) is.
#[tokio::test]
async fn a_playwright_test_sees_no_secret_of_the_server() {
    // nextest runs each test in its own process: this environment is this test's alone.
    std::env::set_var("GEMINI_API_KEY", "AIza-secret-of-the-server");
    std::env::set_var("VAIDER_TOKEN", "vdr_secret_token_of_the_server");
    std::env::set_var("AWS_SECRET_ACCESS_KEY", "aws-secret-of-the-server");
    std::env::set_var("PROJECT_FLAG", "declared-and-passed");
    std::env::set_var("UNDECLARED_FLAG", "not-passed");
    let data = tempfile::tempdir().unwrap();
    let engine = Vaider::open(Config {
        data_dir: Some(data.path().to_path_buf()),
        // Declaring a secret does not let it through.
        child_env_pass: vec!["PROJECT_FLAG".into(), "GEMINI_API_KEY".into()],
        ..Config::default()
    })
    .unwrap();
    let result = validate_test(&engine, request("tests/environment.spec.mjs"), &NoProgress).await;
    let text = serde_json::to_string_pretty(&result).unwrap();
    assert!(result.success, "{text}");
    let dir = PathBuf::from(result.data["artifacts_dir"].as_str().unwrap());
    let stdout = std::fs::read_to_string(dir.join("runner.stdout.log")).unwrap();
    let line = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("ENVIRONMENT "))
        .unwrap_or_else(|| panic!("the test printed no environment: {stdout}"));
    let env: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line).unwrap();
    for secret in ["GEMINI_API_KEY", "VAIDER_TOKEN", "AWS_SECRET_ACCESS_KEY"] {
        assert!(
            !env.contains_key(secret),
            "{secret} reached the test: {line}"
        );
    }
    assert!(!line.contains("-of-the-server"), "{line}");
    assert!(env.contains_key("PATH"), "{line}");
    assert_eq!(env["PROJECT_FLAG"], "declared-and-passed");
    assert!(!env.contains_key("UNDECLARED_FLAG"), "{line}");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir(dir.parent().unwrap());
}
