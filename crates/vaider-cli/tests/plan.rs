//! `vaider plan` as a user runs it in a project folder: a plan written by the (fake) model
//! looking at a small app the test serves, listed, run in real headless Chromium and shown;
//! the exit code says the verdict (0 passed, 2 a step failed, 1 Vaider could not do its job)
//! and an error prints the contract's code. A failed run is `failed` in the history, not an error.

mod common;

use common::*;
use serde_json::{json, Value};

fn plan_command(sandbox: &Sandbox, args: &[&str]) -> (Option<i32>, String, String) {
    let mut command = sandbox.vaider();
    command.arg("plan").args(args);
    let output = run(command);
    (output.status.code(), stdout(&output), stderr(&output))
}

/// `vaider ARGS…` in the sandbox's project folder.
fn plan_command_in(sandbox: &Sandbox, args: &[&str]) -> (Option<i32>, String, String) {
    let mut command = sandbox.vaider();
    command.args(args);
    let output = run(command);
    (output.status.code(), stdout(&output), stderr(&output))
}

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn plans_are_written_listed_run_and_shown_from_the_terminal() {
    let app = vaider_test_support::shop::serve_app().await;
    let fake = fake_gemini::FakeGemini::start().await;
    let sandbox = Sandbox::new();
    let key = |mut c: std::process::Command| {
        c.env("GEMINI_API_KEY", fake_gemini::FakeGemini::API_KEY)
            .env("VAIDER_GEMINI_BASE_URL", fake.base_url());
        c
    };
    let generated = tokio::task::spawn_blocking({
        let app = app.clone();
        let mut command = key(sandbox.vaider());
        command.args([
            "plan",
            "generate",
            "The page shows \"Sign in\"",
            "--base-url",
            &app,
            "--name",
            "Sign in page",
            "--json",
        ]);
        move || run(command)
    })
    .await
    .unwrap();
    assert_eq!(generated.status.code(), Some(0), "{}", stderr(&generated));
    let generated = json_of(&stdout(&generated));
    assert_eq!(generated["steps"], 2);
    let plan_id = generated["planId"].as_str().unwrap().to_string();

    let (code, out, _) = plan_command(&sandbox, &["list"]);
    assert_eq!(code, Some(0));
    assert!(
        out.starts_with("id\tname\tproject\tstepCount\tcreatedAt\n"),
        "{out}"
    );
    assert!(out.contains(&format!("{plan_id}\tSign in page\t")), "{out}");

    let passed = tokio::task::spawn_blocking({
        let mut command = sandbox.vaider();
        command.args(["plan", "run", &plan_id]);
        move || run(command)
    })
    .await
    .unwrap();
    assert_eq!(
        passed.status.code(),
        Some(0),
        "{}{}",
        stdout(&passed),
        stderr(&passed)
    );
    assert!(
        stdout(&passed).contains("  ok   2. shows Sign in (selenese,"),
        "{}",
        stdout(&passed)
    );

    // A plan written by hand whose check fails: exit 2, and the run says where.
    // It also reaches a host the generated plan does not, so its reach is not one Vaider wrote.
    let by_hand = json!({"id": "greeting", "name": "Greeting", "project": {"name": "shop"},
    "baseUrl": app, "allowedHosts": ["cdn.example.com"], "createdAt": "2026-11-22T10:00:00.000Z", "updatedAt": "2026-11-22T10:00:00.000Z",
    "steps": [
        {"id": "open", "name": "open", "type": "selenese", "commands": [{"command": "open", "target": "/"}]},
        {"id": "hello", "name": "says hello", "type": "selenese",
         "commands": [{"command": "assertText", "target": "h1", "value": "Hello"}]},
        {"id": "later", "name": "never reached", "type": "selenese", "commands": [{"command": "click", "target": "#add"}]}
    ]});
    let folder = sandbox.work().join(".qa-agent/plans/shop");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("greeting.json"), by_hand.to_string()).unwrap();
    // Vaider did not write it: without a terminal to ask at, it is refused, naming the
    // command; the user's own `approve --yes` lets it run.
    let (code, _, err) = plan_command(&sandbox, &["run", "greeting"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("PLAN_NOT_APPROVED"), "{err}");
    assert!(err.contains("vaider plan approve greeting --dir"), "{err}");
    let (code, _, err) = plan_command(&sandbox, &["approve", "greeting"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("needs you at a terminal"), "{err}");
    let (code, out, err) = plan_command(&sandbox, &["approve", "greeting", "--yes"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("may now run"), "{out}");
    let failed = tokio::task::spawn_blocking({
        let mut command = sandbox.vaider();
        command.args(["plan", "run", "greeting", "--json"]);
        move || run(command)
    })
    .await
    .unwrap();
    assert_eq!(failed.status.code(), Some(2), "{}", stderr(&failed));
    let summary = json_of(&stdout(&failed));
    assert_eq!(
        (summary["status"].as_str(), summary["failedStep"].as_str()),
        (Some("failed"), Some("hello"))
    );
    let run_id = summary["runId"].as_str().unwrap().to_string();

    let (code, out, _) = plan_command(&sandbox, &["runs", "--status", "failed", "--json"]);
    assert_eq!(code, Some(0));
    let runs = json_of(&out)["runs"].as_array().unwrap().clone();
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0]["id"], run_id.as_str());
    let (_, out, _) = plan_command(&sandbox, &["show", &run_id]);
    assert!(out.contains("  FAIL 2. says hello"), "{out}");
    assert!(out.contains("  skip 3. never reached"), "{out}");
    // Times read as Playwright prints them: "(selenese, 412ms)" or "(selenese, 5.1s)".
    let step_time = out
        .lines()
        .find(|l| l.contains("FAIL 2. says hello"))
        .and_then(|l| l.rsplit(", ").next())
        .and_then(|t| t.strip_suffix(')'))
        .unwrap_or_default()
        .to_string();
    let playwright_like = step_time.strip_suffix("ms").map_or_else(
        || step_time.strip_suffix('s').is_some_and(|s| s.contains('.')),
        |ms| ms.parse::<u64>().is_ok(),
    );
    assert!(playwright_like, "{out}");

    // The history keeps the run as the result it is: failed, naming the step.
    let (code, out, _) = plan_command_in(&sandbox, &["history", "--json"]);
    assert_eq!(code, Some(0));
    let history = json_of(&out);
    let row = history["interactions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == run_id.as_str())
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        (row["status"].as_str(), row["errorCode"].as_str()),
        (Some("failed"), Some("TEST_FAILED")),
        "{row}"
    );
    assert!(row["errorMessage"]
        .as_str()
        .unwrap_or_default()
        .starts_with("Step 2 \"says hello\" failed"));

    let (code, _, err) = plan_command(&sandbox, &["show", "no-such-run"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("RUN_NOT_FOUND"), "{err}");
    let (code, _, err) = plan_command(&sandbox, &["runs", "--status", "green"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("INVALID_INPUT"), "{err}");
    let (code, _, err) = plan_command(&sandbox, &["run", "nope"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("PLAN_NOT_FOUND"), "{err}");
}

/// A Playwright Test Agents planner's spec (written for this test in the planner's layout) is
/// imported as a plan of model steps, and exported back as a Playwright spec in which those
/// steps are marked, not dropped; `--out` writes it, an unknown format is refused.
#[test]
fn a_planner_spec_is_imported_and_a_plan_exported_as_a_playwright_spec() {
    let sandbox = Sandbox::new();
    let spec = sandbox.work().join("specs/add-todo.md");
    std::fs::create_dir_all(spec.parent().unwrap()).unwrap();
    std::fs::write(
        &spec,
        "# Todo Plan\n\n## Application Overview\n\nA todo list.\n\n## Test Scenarios\n\n\
         ### 1. Adding\n\n**Seed:** `tests/seed.spec.ts`\n\n#### 1.1. Add a todo\n\n\
         **File:** `tests/adding/add.spec.ts`\n\n**Steps:**\n  1. Type \"Buy milk\" and press Enter\n\
         \x20    Expect: \"Buy milk\" is listed\n\n**Post Conditions:**\n  - The counter reads \"1 item left\"\n",
    )
    .unwrap();
    let (code, out, err) = plan_command(
        &sandbox,
        &[
            "import",
            "specs/add-todo.md",
            "--base-url",
            "http://127.0.0.1:9",
        ],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("Wrote the plan \"Todo Plan\" (2 steps)"),
        "{out}"
    );
    assert!(out.contains("vaider plan run add-todo"), "{out}");

    let (code, out, err) =
        plan_command(&sandbox, &["export", "add-todo", "--format", "playwright"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("import { test, expect } from '@playwright/test';"),
        "{out}"
    );
    assert!(
        out.contains("// agentic step (agentic_browsing): Type \"Buy milk\" and press Enter; performed by a model in Vaider; not exported."),
        "{out}"
    );
    assert!(
        out.contains("checked by a vision model in Vaider; not exported"),
        "{out}"
    );

    let (code, out, err) = plan_command(
        &sandbox,
        &["export", "add-todo", "--out", "add-todo.spec.ts"],
    );
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("npx playwright test add-todo.spec.ts"),
        "{out}"
    );
    let written = std::fs::read_to_string(sandbox.work().join("add-todo.spec.ts")).unwrap();
    assert!(written.contains("test(\"Todo Plan\""), "{written}");

    let (code, _, err) = plan_command(&sandbox, &["export", "add-todo", "--format", "cypress"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("unknown --format \"cypress\""), "{err}");
    let (code, _, err) = plan_command(&sandbox, &["export", "nothing-here"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("no test plan \"nothing-here\""), "{err}");
}
