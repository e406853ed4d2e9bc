//! `vaider validate` as a user runs it from the project folder: a real process running the
//! fixture's real Playwright tests (tests/playwright-project; `npm ci` there first, which
//! scripts/test.sh does). The exit code says the verdict: 0 passed, 2 the tests ran and failed
//! (a result), 1 Vaider could not get them running (no file, a browser that cannot launch).

mod common;

use std::path::PathBuf;

use common::*;
use serde_json::Value;

fn fixture() -> PathBuf {
    let dir = std::fs::canonicalize(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/playwright-project"
    ))
    .unwrap();
    vaider_test_support::playwright::ensure_playwright_ffmpeg(&dir);
    dir
}

fn validate(sandbox: &Sandbox, test: &str) -> (Option<i32>, Value) {
    let mut command = sandbox.vaider();
    command
        .current_dir(fixture())
        .args(["validate", test, "--json"]);
    let output = run(command);
    let body: Value = serde_json::from_str(&stdout(&output))
        .unwrap_or_else(|e| panic!("{e}: {}{}", stdout(&output), stderr(&output)));
    // The run's folder (in the sandbox's data folder) is this test's own: removed.
    if let Some(dir) = body["data"]["artifacts_dir"].as_str() {
        let dir = std::path::Path::new(dir);
        let _ = std::fs::remove_dir_all(dir);
        // Empty unless another test is running the same spec now.
        let _ = dir.parent().map(std::fs::remove_dir);
    }
    (output.status.code(), body)
}

#[test]
fn the_exit_code_is_the_verdict() {
    let sandbox = Sandbox::new();
    let (code, body) = validate(&sandbox, "tests/login.spec.mjs");
    assert_eq!(code, Some(0), "{body}");
    assert_eq!(body["success"], true);
    assert_eq!(
        body["data"]["test_path"],
        fixture().join("tests/login.spec.mjs").display().to_string()
    );

    let (code, body) = validate(&sandbox, "tests/failing.spec.mjs");
    assert_eq!(code, Some(2), "{body}");
    assert_eq!(body["metadata"]["verdict"], "failed");
    let error = body["error"].as_str().unwrap();
    assert!(
        error.starts_with("Playwright: 1 of 1 tests failed; Failed: ")
            && error.ends_with("Test failed (test_passed=false)"),
        "{error}"
    );

    // A browser that cannot start: Vaider could not do its job, whatever the rubric says.
    let (code, body) = validate(&sandbox, "broken-browser/launch.spec.mjs");
    assert_eq!(code, Some(1), "{body}");
    assert_eq!(body["metadata"]["verdict"], "error");
    assert_eq!(body["data"]["validation_result"]["test_passed"], false);

    let (code, body) = validate(&sandbox, "tests/nope.spec.mjs");
    assert_eq!(code, Some(1), "{body}");
    assert_eq!(
        body["error"],
        format!(
            "Test file not found: {}",
            fixture().join("tests/nope.spec.mjs").display()
        )
    );
    assert_eq!(body["data"], serde_json::json!({}));
}
