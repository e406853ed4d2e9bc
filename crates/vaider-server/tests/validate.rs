//! `validate_test` and `analyse_test_results` over MCP (rmcp's client, real HTTP) and REST, on
//! a real Playwright project (tests/playwright-project, the system Chromium) with the fake
//! Gemini as the model. Each scenario's AgentResult is checked field by field against
//! contracts.md §2. Needs `npm ci` in tests/playwright-project (scripts/test.sh does it).

mod common;

use std::path::{Path, PathBuf};

use common::{call, sha256_hex, TestServer, TOKEN};
use serde_json::{json, Value};

/// A copy of the fixture project in a temporary folder (its node_modules linked), so each
/// test's run folders and results are its own.
struct Project {
    dir: tempfile::TempDir,
}

impl Project {
    fn copy() -> Project {
        let source = PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../tests/playwright-project"
        ));
        let modules = source.join("node_modules/@playwright/test/cli.js");
        assert!(
            modules.is_file(),
            "run `npm ci` in tests/playwright-project (bash scripts/test.sh does it)"
        );
        vaider_test_support::playwright::ensure_playwright_ffmpeg(&source);
        let dir = tempfile::tempdir().unwrap();
        for name in ["package.json", "playwright.config.mjs"] {
            std::fs::copy(source.join(name), dir.path().join(name)).unwrap();
        }
        for folder in ["pages", "tests", "broken-browser"] {
            std::fs::create_dir_all(dir.path().join(folder)).unwrap();
            for entry in std::fs::read_dir(source.join(folder)).unwrap() {
                let entry = entry.unwrap();
                if entry.file_type().unwrap().is_file() {
                    std::fs::copy(
                        entry.path(),
                        dir.path().join(folder).join(entry.file_name()),
                    )
                    .unwrap();
                }
            }
        }
        std::os::unix::fs::symlink(source.join("node_modules"), dir.path().join("node_modules"))
            .unwrap();
        Project { dir }
    }

    fn root(&self) -> PathBuf {
        std::fs::canonicalize(self.dir.path()).unwrap()
    }

    fn path(&self, relative: &str) -> String {
        self.root().join(relative).display().to_string()
    }
}

fn structured(result: &rmcp::model::CallToolResult) -> Value {
    result
        .structured_content
        .clone()
        .expect("structuredContent")
}

async fn validate(server: &TestServer, arguments: Value) -> (Value, bool) {
    let client = server.mcp().await;
    let result = call(&client, "validate_test", arguments).await;
    let is_error = result.is_error == Some(true);
    client.cancel().await.unwrap();
    (structured(&result), is_error)
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .unwrap_or_else(|| panic!("not an array: {value}"))
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect()
}

/// The fields every AgentResult of a run has, with the types of contracts.md §2.
fn check_shape(body: &Value, project: &Project, test: &str) {
    let keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "cost_usd",
            "data",
            "error",
            "execution_time_ms",
            "metadata",
            "success"
        ],
        "{body}"
    );
    let data = &body["data"];
    let v = &data["validation_result"];
    for key in ["browser_launched", "test_executed", "test_passed"] {
        assert!(v[key].is_boolean(), "{key}: {body}");
    }
    for key in ["screenshots", "console_errors", "network_failures"] {
        assert!(v[key].is_array(), "{key}: {body}");
    }
    for text in strings(&v["console_errors"])
        .iter()
        .chain(&strings(&v["network_failures"]))
    {
        assert!(text.chars().count() <= 200, "{text}");
    }
    assert!(v["execution_time_ms"].is_u64());
    assert_eq!(data["test_path"], project.path(test));
    assert_eq!(data["screenshots"], v["screenshots"]);
    let shots = strings(&v["screenshots"]);
    let times: Vec<_> = shots
        .iter()
        .map(|s| {
            assert!(Path::new(s).is_absolute() && Path::new(s).is_file(), "{s}");
            std::fs::metadata(s).unwrap().modified().unwrap()
        })
        .collect();
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "oldest first: {shots:?}"
    );
    assert!(Path::new(data["artifacts_dir"].as_str().unwrap()).is_dir());
    let rubric = &data["rubric_validation"];
    assert_eq!(rubric["passed"], body["success"]);
    let errors = strings(&rubric["errors"]);
    match errors.is_empty() {
        true => assert_eq!(body["error"], Value::Null),
        false => assert_eq!(body["error"], errors.join("; ")),
    }
    assert!(strings(&rubric["warnings"]).len() <= 2);
    assert!(
        body["execution_time_ms"].as_u64().unwrap() >= v["execution_time_ms"].as_u64().unwrap()
    );
    assert!(body["cost_usd"].is_f64() || body["cost_usd"].is_u64());
    assert!(body["metadata"]["interaction_id"].is_string());
}

#[tokio::test]
async fn a_passing_test_with_screenshots_passes_the_rubric() {
    let server = TestServer::start().await;
    let project = Project::copy();
    let (body, is_error) = validate(
        &server,
        json!({"test_path": "tests/login.spec.mjs", "cwd": project.root()}),
    )
    .await;
    check_shape(&body, &project, "tests/login.spec.mjs");
    assert!(!is_error);
    assert_eq!(body["success"], true, "{body}");
    assert_eq!(body["error"], Value::Null);
    assert_eq!(body["cost_usd"], 0.0);
    let v = &body["data"]["validation_result"];
    assert_eq!(v["browser_launched"], true);
    assert_eq!(v["test_executed"], true);
    assert_eq!(v["test_passed"], true);
    let shots = strings(&v["screenshots"]);
    assert_eq!(shots.len(), 2, "the test's own and Playwright's: {shots:?}");
    assert!(shots.iter().any(|s| s.ends_with("/dashboard.png")));
    assert_eq!(v["console_errors"], json!([]));
    assert_eq!(v["network_failures"], json!([]));
    let ms = v["execution_time_ms"].as_u64().unwrap();
    assert!(ms > 0 && ms < 45_000, "{ms}");
    assert_eq!(
        body["data"]["rubric_validation"],
        json!({"passed": true, "errors": [], "warnings": []})
    );
    let report = &body["data"]["report"][0];
    assert_eq!(report["title"], "signs in and sees the welcome");
    assert_eq!(report["status"], "passed");
    assert_eq!(report["retries"], 0);
    let names: Vec<&str> = report["attachments"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    for name in ["video", "trace", "screenshot"] {
        assert!(names.contains(&name), "{names:?}");
    }
    // No expectations: no model call, and no cost.
    assert!(server.fake.generate_requests().is_empty());
    assert!(body["data"].get("video_analysis").is_none());
    // One history entry, the validation, with the AgentResult.
    let id = body["metadata"]["interaction_id"].as_str().unwrap();
    let row = server.engine.history().get(id).unwrap().unwrap();
    assert_eq!(row.tool, "validate_test");
    assert_eq!(row.door, "mcp");
    assert_eq!(row.status, vaider_core::history::Status::Ok);
    // The run's recording is what the history shows beside it.
    let video = report["attachments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "video")
        .and_then(|a| a["path"].as_str())
        .unwrap();
    assert_eq!(row.media_path.as_deref(), Some(video));
    assert_eq!(row.media_type.as_deref(), Some("video/webm"));
    // The history UI's detail has it, and plays it.
    let detail: Value = server
        .http()
        .get(format!("{}/api/interactions/{id}", server.url))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(detail["tool"], "validate_test", "{detail}");
    let media = server
        .http()
        .get(format!("{}/api/interactions/{id}/media", server.url))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(media.status(), 200);
    assert_eq!(
        media.bytes().await.unwrap().len() as u64,
        std::fs::metadata(video).unwrap().len()
    );
    assert_eq!(
        server.engine.history().job_result(id).unwrap(),
        Some(body.clone())
    );
    // The runner's own output is kept in the run's folder.
    let dir = PathBuf::from(body["data"]["artifacts_dir"].as_str().unwrap());
    let stdout = std::fs::read_to_string(dir.join("runner.stdout.log")).unwrap();
    assert!(stdout.contains("1 passed"), "{stdout}");
    assert!(dir.join("runner.stderr.log").is_file());
}

#[tokio::test]
async fn a_failing_assertion_fails_the_rubric_with_its_error_and_location() {
    let server = TestServer::start().await;
    let project = Project::copy();
    let (body, is_error) = validate(
        &server,
        json!({"test_path": project.path("tests/failing.spec.mjs")}),
    )
    .await;
    check_shape(&body, &project, "tests/failing.spec.mjs");
    assert_eq!(body["success"], false);
    // A test that failed is the answer, not a tool error.
    assert!(!is_error, "{body}");
    assert_eq!(body["metadata"]["verdict"], "failed");
    let v = &body["data"]["validation_result"];
    assert_eq!(v["browser_launched"], true);
    assert_eq!(v["test_executed"], true);
    assert_eq!(v["test_passed"], false);
    // Playwright's verdict first: the test by name, its message and spec line.
    let errors = strings(&body["data"]["rubric_validation"]["errors"]);
    assert_eq!(errors.len(), 3, "{errors:?}");
    assert_eq!(errors[0], "Playwright: 1 of 1 tests failed");
    assert!(
        errors[1].starts_with("Failed: ")
            && errors[1].contains("(tests/failing.spec.mjs:9:")
            && errors[1].contains("toHaveText"),
        "{errors:?}"
    );
    assert_eq!(errors[2], "Test failed (test_passed=false)");
    assert_eq!(body["error"], errors.join("; "));
    let report = &body["data"]["report"][0];
    assert_eq!(report["status"], "failed");
    let message = report["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("toHaveText") && message.contains("Goodbye"),
        "{message}"
    );
    assert!(!message.contains('\u{1b}'), "no colour codes: {message}");
    let location = report["error"]["location"].as_str().unwrap();
    assert!(location.contains("failing.spec.mjs:9:"), "{location}");
    // Playwright's screenshot of the failure counts.
    assert!(!strings(&v["screenshots"]).is_empty());

    // The history has it as `failed` (a result) naming the failing test, with its trace.
    let id = body["metadata"]["interaction_id"].as_str().unwrap();
    let detail = ui_get(&server, &format!("/api/interactions/{id}")).await;
    assert_eq!(
        (detail["status"].as_str(), detail["errorCode"].as_str()),
        (Some("failed"), Some("TEST_FAILED")),
        "{detail}"
    );
    assert!(detail["errorMessage"]
        .as_str()
        .unwrap()
        .contains("failing.spec.mjs:9:"));
    // Typed as its capability names it: a validation, run again with the same inputs.
    assert_eq!(
        (&detail["kind"], &detail["runAgain"]),
        (&json!("test_validation"), &json!("same_inputs")),
        "{detail}"
    );
    assert_eq!(detail["job"]["result"]["success"], false, "{detail}");
    assert!(detail["job"]["calls"].is_array() && detail["job"]["screenshotUrls"].is_array());
    assert!(detail.get("verdicts").is_none() && detail.get("comparison").is_none());
    let trace = &detail["job"]["traces"][0];
    assert!(
        trace["open"]
            .as_str()
            .unwrap()
            .starts_with("npx playwright show-trace ")
            && trace["path"].as_str().unwrap().ends_with("trace.zip"),
        "{detail}"
    );
    let url = format!("{}{}", server.url, trace["url"].as_str().unwrap());
    let response = server
        .http()
        .get(&url)
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 200);
    let zip = response.bytes().await.unwrap();
    assert!(zip.starts_with(b"PK"), "a zip archive");
    // The link is signed for the page's download (no header): it works alone, but not altered,
    // and without its signature the token is needed.
    let signed = server.http().get(&url).send().await.unwrap();
    assert_eq!(signed.status().as_u16(), 200);
    let altered = server
        .http()
        .get(url.replace("n=0", "n=1"))
        .send()
        .await
        .unwrap();
    assert_eq!(altered.status().as_u16(), 403);
    let unsigned = url.split("&exp=").next().unwrap();
    let anonymous = server.http().get(unsigned).send().await.unwrap();
    assert_eq!(anonymous.status().as_u16(), 401);
}

/// GET on the UI API with the token.
async fn ui_get(server: &TestServer, path: &str) -> Value {
    let response = server
        .http()
        .get(format!("{}{path}", server.url))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap();
    response.json().await.unwrap_or(Value::Null)
}

#[tokio::test]
async fn console_errors_and_network_failures_come_from_the_page() {
    let server = TestServer::start().await;
    let project = Project::copy();
    let (body, _) = validate(
        &server,
        json!({"test_path": "tests/console-error.spec.mjs", "cwd": project.root()}),
    )
    .await;
    check_shape(&body, &project, "tests/console-error.spec.mjs");
    assert_eq!(body["success"], true, "warnings never fail: {body}");
    let v = &body["data"]["validation_result"];
    assert_eq!(
        v["console_errors"],
        json!(["Failed to load the widget: TypeError: widget is undefined"])
    );
    assert_eq!(v["network_failures"], json!([]));
    assert_eq!(
        body["data"]["rubric_validation"]["warnings"],
        json!(["Console errors detected: 1 errors"])
    );

    let (body, _) = validate(
        &server,
        json!({"test_path": "tests/network-failure.spec.mjs", "cwd": project.root()}),
    )
    .await;
    check_shape(&body, &project, "tests/network-failure.spec.mjs");
    assert_eq!(body["success"], true, "{body}");
    let failures = strings(&body["data"]["validation_result"]["network_failures"]);
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].contains("net::ERR_CONNECTION_REFUSED")
            && failures[0].contains("127.0.0.1:45871/api/orders"),
        "{failures:?}"
    );
    assert_eq!(
        body["data"]["rubric_validation"]["warnings"],
        json!(["Network failures detected: 1 failures"])
    );
}

#[tokio::test]
async fn a_test_slower_than_the_limit_fails_with_the_real_numbers() {
    let server = TestServer::start().await;
    let project = Project::copy();
    let (body, _) = validate(
        &server,
        json!({
            "test_path": "tests/slow.spec.mjs", "cwd": project.root(),
            "max_test_duration_ms": 1000, "min_screenshots": 1
        }),
    )
    .await;
    check_shape(&body, &project, "tests/slow.spec.mjs");
    let v = &body["data"]["validation_result"];
    assert_eq!(v["test_passed"], true);
    let ms = v["execution_time_ms"].as_u64().unwrap();
    assert!(ms >= 1500, "{ms}");
    assert_eq!(
        body["data"]["rubric_validation"]["errors"],
        json!([format!("Execution time {ms}ms exceeds 1000ms limit")])
    );
    assert_eq!(body["success"], false);
}

#[tokio::test]
async fn a_run_longer_than_its_timeout_is_killed_with_its_whole_process_group() {
    let server = TestServer::start().await;
    let project = Project::copy();
    let (body, _) = validate(
        &server,
        json!({"test_path": "tests/hangs.spec.mjs", "cwd": project.root(), "timeout_sec": 10}),
    )
    .await;
    check_shape(&body, &project, "tests/hangs.spec.mjs");
    assert_eq!(body["metadata"]["runner"]["timed_out"], true, "{body}");
    let errors = strings(&body["data"]["rubric_validation"]["errors"]);
    assert_eq!(
        errors[0],
        "Test run exceeded the 10s timeout and was stopped"
    );
    assert!(errors.contains(&"Test failed (test_passed=false)".to_string()));
    // The browser had started and was recording when the run was stopped.
    assert_eq!(
        body["data"]["validation_result"]["browser_launched"], true,
        "{body}"
    );
    // What the page logged before it hung is read from the events not yet zipped.
    assert_eq!(
        body["data"]["validation_result"]["console_errors"],
        json!(["Failed to load the widget: TypeError: widget is undefined"])
    );
    // Nothing of the run is left: Node, its workers and Chromium all ran in the project
    // folder, and no process runs there any more.
    let root = project.root();
    let left = || -> Vec<String> {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|p| {
                std::fs::read_link(p.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(&root))
            })
            .filter_map(|p| std::fs::read(p.path().join("cmdline")).ok())
            .map(|c| String::from_utf8_lossy(&c).replace('\0', " "))
            .collect()
    };
    // SIGKILL is delivered at once, but a process takes a moment to go.
    assert!(
        common::eventually(|| left().is_empty()).await,
        "{:?}",
        left()
    );
}

#[tokio::test]
async fn a_missing_test_file_is_the_contracts_error() {
    let server = TestServer::start().await;
    let project = Project::copy();
    let missing = project.path("tests/nope.spec.mjs");
    let (body, is_error) = validate(&server, json!({"test_path": missing})).await;
    assert!(is_error);
    assert_eq!(body["success"], false);
    assert_eq!(body["data"], json!({}));
    assert_eq!(body["error"], format!("Test file not found: {missing}"));
    assert_eq!(body["cost_usd"], 0.0);
    // Vaider could not do its job: in the history that is `error`, never `failed`.
    let errors = ui_get(&server, "/api/history?status=error").await;
    assert!(
        errors["items"]
            .as_array()
            .unwrap()
            .iter()
            .any(|row| row["tool"] == "validate_test" && row["source"] == missing.as_str()),
        "{errors}"
    );
    let failed = ui_get(&server, "/api/history?status=failed").await;
    assert_eq!(failed["items"], json!([]), "{failed}");
    // REST answers the same AgentResult.
    let response = server
        .http()
        .post(format!("{}/v1/validate", server.url))
        .bearer_auth(TOKEN)
        .json(&json!({"test_path": missing}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let rest: Value = response.json().await.unwrap();
    assert_eq!(rest["data"], json!({}));
    assert_eq!(rest["error"], format!("Test file not found: {missing}"));
    // A malformed body is the REST contract's 422.
    let response = server
        .http()
        .post(format!("{}/v1/validate", server.url))
        .bearer_auth(TOKEN)
        .json(&json!({"test_path": 7}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 422);
}

#[tokio::test]
async fn a_browser_that_cannot_launch_fails_every_criterion_it_blocks() {
    let server = TestServer::start().await;
    let project = Project::copy();
    // Over REST this time: the same AgentResult as MCP's.
    let response = server
        .http()
        .post(format!("{}/v1/validate", server.url))
        .bearer_auth(TOKEN)
        .json(&json!({"test_path": "broken-browser/launch.spec.mjs", "cwd": project.root()}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let body: Value = response.json().await.unwrap();
    check_shape(&body, &project, "broken-browser/launch.spec.mjs");
    let v = &body["data"]["validation_result"];
    assert_eq!(v["browser_launched"], false, "{body}");
    assert_eq!(v["test_executed"], false);
    assert_eq!(v["test_passed"], false);
    assert_eq!(v["screenshots"], json!([]));
    // Playwright's own words first; a test that never ran is not also short of screenshots.
    let errors = strings(&body["data"]["rubric_validation"]["errors"]);
    assert_eq!(errors[0], "Playwright: 1 of 1 tests failed", "{errors:?}");
    assert!(errors[1].contains("browserType.launch"), "{errors:?}");
    assert_eq!(
        errors[2..],
        [
            "Browser failed to launch",
            "Test did not execute",
            "Test failed (test_passed=false)",
        ]
    );
    assert_eq!(
        body["metadata"]["playwright_config"],
        project.path("broken-browser/playwright.config.mjs")
    );
    let id = body["metadata"]["interaction_id"].as_str().unwrap();
    let row = server.engine.history().get(id).unwrap().unwrap();
    assert_eq!(row.door, "rest");
    assert_eq!(row.status, vaider_core::history::Status::Error);
}

#[tokio::test]
async fn expectations_send_the_video_to_the_model_and_count_in_the_rubric() {
    let server = TestServer::start().await;
    let project = Project::copy();
    let (shown, missing) = ("the welcome heading appears", "an error banner is shown");
    server.fake.set_reply_text(Some(
        json!({
            "description": "00:00 The login form. 00:01 'Welcome' appears.",
            "expectations": [
                {"verdict": "met", "evidence": "00:01 'Welcome' is shown"},
                {"verdict": "not_met", "evidence": "no banner at any time"}
            ]
        })
        .to_string(),
    ));
    let (body, _) = validate(
        &server,
        json!({
            "test_path": "tests/login.spec.mjs", "cwd": project.root(),
            "expectations": [shown, missing]
        }),
    )
    .await;
    check_shape(&body, &project, "tests/login.spec.mjs");
    let analysis = &body["data"]["video_analysis"];
    assert_eq!(analysis["expectations"][0]["verdict"], "met", "{body}");
    assert_eq!(analysis["expectations"][1]["verdict"], "not_met");
    assert_eq!(analysis["all_expectations_met"], false);
    assert_eq!(
        body["data"]["rubric_validation"]["errors"],
        json!([format!("Video does not show: {missing}")])
    );
    assert_eq!(body["success"], false);
    // The recording itself reached the model: the fake holds the same bytes.
    let video = body["data"]["report"][0]["attachments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "video")
        .and_then(|a| a["path"].as_str())
        .unwrap()
        .to_string();
    assert_eq!(analysis["video"], video);
    let sha = sha256_hex(Path::new(&video));
    assert!(
        server.fake.files().iter().any(|f| f.sha256_hex == sha),
        "no upload with the video's sha256"
    );
    // cost_usd is the history's cost of that call, which sits under the validation.
    let call = server
        .engine
        .history()
        .get(analysis["interaction_id"].as_str().unwrap())
        .unwrap()
        .unwrap();
    assert!(call.cost_usd > 0.0);
    assert_eq!(body["cost_usd"].as_f64().unwrap(), call.cost_usd);
    let job = body["metadata"]["interaction_id"].as_str().unwrap();
    assert_eq!(call.parent_id.as_deref(), Some(job));
    assert_eq!(call.tool, "analyze_video");
    let row = server.engine.history().get(job).unwrap().unwrap();
    assert_eq!(row.cost_usd, call.cost_usd);
}

#[tokio::test]
async fn analyse_test_results_watches_each_failed_tests_failing_step() {
    let server = TestServer::start().await;
    let project = Project::copy();
    let (run, _) = validate(
        &server,
        json!({"test_path": "tests/two-failures.spec.mjs", "cwd": project.root()}),
    )
    .await;
    assert_eq!(run["data"]["report"].as_array().unwrap().len(), 2, "{run}");
    let results =
        PathBuf::from(run["data"]["artifacts_dir"].as_str().unwrap()).join("test-results");
    let client = server.mcp().await;
    let answer = call(&client, "analyse_test_results", json!({"path": results})).await;
    let body = structured(&answer);
    assert_eq!(body["success"], true, "{body}");
    let failed = body["data"]["failed_tests"].as_array().unwrap();
    assert_eq!(failed.len(), 2, "{body}");
    let mut cost = 0.0;
    for test in failed {
        // Their traces name the failed step: each is watched closely.
        let analysis = &test["failure"];
        assert!(
            analysis["screen_at_failure"]
                .as_str()
                .unwrap()
                .contains("sha256"),
            "{test}"
        );
        cost += analysis["cost_usd"].as_f64().unwrap();
        let video = test["video"].as_str().unwrap();
        assert!(server
            .fake
            .files()
            .iter()
            .any(|f| f.sha256_hex == sha256_hex(Path::new(video))));
    }
    assert!((body["cost_usd"].as_f64().unwrap() - cost).abs() < 1e-12);
    // The validation asked the same two questions of the same recordings, so these answers
    // come from Vaider's cache; each went with its own test's error as context.
    assert!(
        failed.iter().all(|t| t["failure"]["cached"] == true),
        "{body}"
    );
    let prompts: Vec<String> = server
        .fake
        .generate_requests()
        .iter()
        .map(|r| r.to_string())
        .collect();
    assert_eq!(prompts.len(), 2);
    assert!(prompts
        .iter()
        .any(|p| p.contains("expects an error banner")));
    assert!(prompts
        .iter()
        .any(|p| p.contains("expects the welcome before signing in")));
    // One summary, test by test.
    let summary = body["data"]["summary"].as_str().unwrap();
    assert!(summary.starts_with("2 failed tests:"), "{summary}");
    assert!(summary.contains("1. expects an error banner"), "{summary}");
    assert!(
        summary.contains("2. expects the welcome before signing in"),
        "{summary}"
    );
    client.cancel().await.unwrap();
}

/// A request's model calls are capped (max_model_calls): the failed tests past the cap are
/// listed without an analysis, each saying why, and no call is made for them.
#[tokio::test]
async fn analyse_test_results_stops_at_its_cap_of_model_calls_and_says_so() {
    let server = TestServer::start_with(|config| config.max_model_calls = 1).await;
    let project = Project::copy();
    let (run, _) = validate(
        &server,
        json!({"test_path": "tests/two-failures.spec.mjs", "cwd": project.root()}),
    )
    .await;
    let results =
        PathBuf::from(run["data"]["artifacts_dir"].as_str().unwrap()).join("test-results");
    let before = server.fake.generate_requests().len();
    let client = server.mcp().await;
    let answer = call(&client, "analyse_test_results", json!({"path": results})).await;
    let body = structured(&answer);
    assert_eq!(body["success"], true, "{body}");
    let failed = body["data"]["failed_tests"].as_array().unwrap();
    assert_eq!(failed.len(), 2, "{body}");
    assert!(failed[0]["failure"].is_object(), "{body}");
    assert!(failed[1]["failure"].is_null(), "{body}");
    assert!(failed[1]["analysis"].is_null(), "{body}");
    let why = failed[1]["problem"].as_str().unwrap();
    assert!(why.contains("max_model_calls"), "{why}");
    // The first test's question was the validation's own (also capped at one call), answered
    // from the cache; none is asked for the second.
    assert_eq!(failed[0]["failure"]["cached"], true, "{body}");
    assert_eq!(server.fake.generate_requests().len() - before, 0);
    client.cancel().await.unwrap();
}

/// The stretch of video a generateContent request sent (its `videoMetadata` offsets and fps),
/// as the fake received it.
fn clip_sent(request: &Value) -> Option<(f64, f64, f64)> {
    let parts = request["contents"][0]["parts"].as_array()?;
    let meta = parts.iter().find_map(|p| p.get("videoMetadata"))?;
    let secs = |key: &str| {
        meta[key]
            .as_str()?
            .trim_end_matches('s')
            .parse::<f64>()
            .ok()
    };
    Some((
        secs("startOffset")?,
        secs("endOffset")?,
        meta["fps"].as_f64()?,
    ))
}

/// The failing test's steps from its own trace, read apart from the validation: the step that
/// failed with its start and end on the video's clock.
fn failing_step_of(body: &Value) -> (String, f64, f64) {
    let trace = body["data"]["report"][0]["attachments"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == "trace")
        .and_then(|a| a["path"].as_str())
        .expect("a trace")
        .to_string();
    let timeline = vaider_validate::timeline::read_timeline(Path::new(&trace)).unwrap();
    let failing = timeline.failing_step().expect("a failed step").step;
    (
        failing.title.clone(),
        failing.start.unwrap(),
        failing.end.unwrap(),
    )
}

/// The request that asked about the failing step.
fn failing_step_request(server: &TestServer) -> Value {
    server
        .fake
        .generate_requests()
        .into_iter()
        .find(|r| r.to_string().contains("first_wrong_step"))
        .expect("a request about the failing step")
}

/// Checks what a validation of tests/cart.spec.mjs says of its failing step, and what the
/// model was sent for it, from the fake's side.
fn assert_failing_step_watched(server: &TestServer, body: &Value) -> Value {
    let (title, start, end) = failing_step_of(body);
    assert!(title.contains("toHaveText"), "{title}");
    let analysis = body["data"]["failure_analysis"][0].clone();
    let named = analysis["failing_step"].as_str().expect("the failing step");
    assert!(named.contains(&title), "{analysis}");
    // The fake received the stretch from the step before through the failure, at 8 fps.
    let request = failing_step_request(server);
    let (from, to, fps) = clip_sent(&request).expect("a clip of the video");
    assert!(
        from <= start && to >= end,
        "{from}-{to} does not cover {start}-{end}"
    );
    assert!(
        to - from < 10.0,
        "the stretch is not the whole run: {from}-{to}"
    );
    assert_eq!(fps, 8.0);
    // With the step list on the video's clock and Playwright's error.
    let text = request.to_string();
    assert!(text.contains("'add the chair'"), "{text}");
    assert!(text.contains("Cart: 1 item"), "{text}");
    // The fake names the step only when the clip it received covers it: the first wrong
    // moment is that step, at its time.
    let first = analysis["first_wrong"]
        .as_str()
        .expect("a first wrong moment");
    assert!(first.contains(&title), "{analysis}");
    assert!((analysis["first_wrong_at"].as_f64().unwrap() - start).abs() < 0.06);
    assert!(analysis["cost_usd"].as_f64().unwrap() > 0.0);
    analysis
}

/// A test that fails in its second step: the model watches the stretch around that step, with
/// the steps on the video's clock, and the answer names the step and the moment.
#[tokio::test]
async fn a_failed_tests_failing_step_is_watched_closely_and_named() {
    let server = TestServer::start().await;
    let project = Project::copy();
    let client = server.mcp().await;
    let result = call(
        &client,
        "validate_test",
        json!({"test_path": "tests/cart.spec.mjs", "cwd": project.root()}),
    )
    .await;
    client.cancel().await.unwrap();
    let body = structured(&result);
    assert_eq!(body["metadata"]["verdict"], "failed", "{body}");
    let analysis = assert_failing_step_watched(&server, &body);
    // Watched on Playwright's own video.
    assert!(analysis["video"].as_str().unwrap().ends_with(".webm"));
    assert!(!analysis["video"].as_str().unwrap().contains("screencast"));
    // The agent reads it in the tool's text too.
    let text = common::text_of(&result);
    assert!(text.contains("failed at step"), "{text}");
}

/// Without Playwright's video recorder no video is recorded: the trace's screencast stands in,
/// for the failing step and for the expectations alike.
#[tokio::test]
async fn without_playwrights_ffmpeg_the_screencast_is_watched() {
    let server = TestServer::start().await;
    let project = Project::copy();
    // Playwright finds no recorder: its browsers folder is an empty one (set after the copy,
    // which links the recorder where Playwright looks).
    let empty = tempfile::tempdir().unwrap();
    std::env::set_var("PLAYWRIGHT_BROWSERS_PATH", empty.path());
    let (body, _) = validate(
        &server,
        json!({"test_path": "tests/cart.spec.mjs", "cwd": project.root(),
               "expectations": ["the shop's heading reads Chairs"]}),
    )
    .await;
    assert_eq!(body["metadata"]["runner"]["video"], false, "{body}");
    let analysis = assert_failing_step_watched(&server, &body);
    let screencast = analysis["video"].as_str().unwrap();
    assert!(screencast.ends_with("screencast-1.webm"), "{analysis}");
    // The expectations were judged on the same screencast, which reached the model.
    let watched = &body["data"]["video_analysis"];
    assert_eq!(watched["video"], screencast, "{body}");
    assert!(!watched["expectations"].as_array().unwrap().is_empty());
    let sha = sha256_hex(Path::new(screencast));
    assert!(server.fake.files().iter().any(|f| f.sha256_hex == sha));
    let warnings = body["data"]["rubric_validation"]["warnings"].to_string();
    assert!(warnings.contains("screencast"), "{warnings}");
}

/// A test that fails once and passes on retry: its attempts are compared, and the answer says
/// what differed (the step where they parted, its time, what the page logged, the screen).
#[tokio::test]
async fn a_flaky_tests_attempts_are_compared_and_the_difference_named() {
    let server = TestServer::start().await;
    let project = Project::copy();
    let (body, is_error) = validate(
        &server,
        json!({"test_path": "tests/flaky.spec.mjs", "cwd": project.root()}),
    )
    .await;
    // Playwright passes a flaky test, and so does the rubric.
    assert!(!is_error, "{body}");
    assert_eq!(body["data"]["report"][0]["outcome"], "flaky", "{body}");
    let flaky = &body["data"]["flaky"][0];
    assert_eq!(
        flaky["attempts"], "attempt 1 failed, attempt 2 passed",
        "{body}"
    );
    assert!(
        flaky["diverged_at"]
            .as_str()
            .unwrap()
            .contains("toHaveText"),
        "{flaky}"
    );
    let differences = flaky["differences"].to_string();
    // The console error only the failed attempt logged, and the step that took longer there.
    assert!(
        differences.contains(
            "attempt 1 had console errors that attempt 2 did not: \\\"stock service slow\\\""
        ),
        "{differences}"
    );
    assert!(differences.contains("'add the chair'"), "{differences}");
    assert!(differences.contains("in attempt 1 and"), "{differences}");
    // Both attempts' screens at that step reached the model, each its own recording's stretch.
    assert!(
        flaky["failed_attempt"]["screen_at_failure"].is_string(),
        "{flaky}"
    );
    assert!(flaky["passed_attempt_screen"].is_string(), "{flaky}");
    let clips: Vec<_> = server
        .fake
        .generate_requests()
        .iter()
        .filter_map(clip_sent)
        .collect();
    assert_eq!(clips.len(), 2, "{clips:?}");
    assert!(
        differences.contains("in attempt 2 it showed"),
        "{differences}"
    );
    assert!(body["cost_usd"].as_f64().unwrap() > 0.0);
}
