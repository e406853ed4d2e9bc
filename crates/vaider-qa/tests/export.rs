//! A plan exported as a Playwright spec runs with plain `npx playwright test` (the real
//! project's Playwright, the system Chromium) against the same app: it passes where the plan
//! passes in Vaider, and fails on a broken build of the app.

use serde_json::{json, Value};
use vaider_qa::export::{find_plan, playwright_spec};
use vaider_qa::{run_plan, QaStore, RunOptions, RunStatus, TestPlan};
use vaider_test_support::playwright::{real_project_dir, serve_todomvc};

/// The scripted TodoMVC plan of run.rs: todos added with Enter in its three spellings, one
/// ticked through the `opacity: 0` checkbox, the list checked.
fn todo_steps() -> Vec<Value> {
    vec![
        json!({"id": "add", "name": "add three todos", "type": "selenese", "commands": [
            {"command": "open", "target": "/"},
            {"command": "type", "target": ".new-todo", "value": "Buy milk\n"},
            {"command": "type", "target": ".new-todo", "value": "Walk the dog${KEY_ENTER}"},
            {"command": "sendKeys", "target": ".new-todo", "value": "Call "},
            {"command": "sendKeys", "target": ".new-todo", "value": "mom"},
            {"command": "press", "target": ".new-todo", "value": "Enter"},
            {"command": "assertText", "target": ".todo-count", "value": "3*items left"}
        ]}),
        json!({"id": "tick", "name": "complete one", "type": "selenese", "commands": [
            {"command": "click", "target": ".todo-list li:first-child .toggle"},
            {"command": "assertText", "target": ".todo-count", "value": "2*items left"},
            {"command": "assertVisible", "target": "text=Call mom"}
        ]}),
        json!({"id": "state", "name": "the list", "type": "unit_assertion", "assertions": [
            {"type": "equals", "selector": ".todo-list li:first-child .toggle", "property": "checked", "expected": true},
            {"type": "matches", "selector": ".todo-list li:first-child", "property": "className", "expected": "completed"},
            {"type": "equals", "selector": ".todo-list", "property": "childElementCount", "expected": 3},
            {"type": "equals", "selector": ".todo-list li:last-child label", "expected": "Buy milk"},
            {"type": "contains", "selector": ".todo-list", "expected": "Walk the dog"},
            {"type": "visible", "selector": "role=checkbox[name=\"Toggle All Input\"]", "expected": false},
            {"type": "exists", "selector": ".todo-list li:first-child .destroy", "expected": true}
        ]}),
    ]
}

fn plan(base_url: &str, steps: Value) -> TestPlan {
    serde_json::from_value(json!({
        "id": "todos", "name": "Todos are added and completed", "project": {"name": "todomvc"},
        "baseUrl": base_url, "steps": steps,
        "createdAt": "2026-11-27T10:00:00.000Z", "updatedAt": "2026-11-27T10:00:00.000Z"
    }))
    .expect("a plan in the contract's format")
}

/// The same plan with a step only a model can judge.
fn with_agentic_step(steps: Vec<Value>) -> Vec<Value> {
    let mut steps = steps;
    steps.push(
        json!({"id": "look", "name": "looks done", "type": "agentic_assertion",
        "instruction": "Look at the first todo", "criteria": "It is struck through"}),
    );
    steps
}

/// `npx playwright test` on the spec alone, in a folder of the real project (so
/// `@playwright/test` resolves to its own): whether it passed, and what it printed.
async fn npx_playwright_test(spec: &str, base_url: &str) -> (bool, String) {
    let project = real_project_dir();
    let dir = tempfile::Builder::new()
        .prefix(".vaider-export-")
        .tempdir_in(&project)
        .unwrap();
    std::fs::write(dir.path().join("todos.spec.ts"), spec).unwrap();
    std::fs::write(dir.path().join("playwright.config.js"), CONFIG).unwrap();
    let out = tempfile::tempdir().unwrap();
    let output = tokio::process::Command::new("node")
        .arg(project.join("node_modules/@playwright/test/cli.js"))
        .args(["test", "--config"])
        .arg(dir.path().join("playwright.config.js"))
        .arg("--output")
        .arg(out.path())
        .current_dir(dir.path())
        .env("BASE_URL", base_url)
        .env("FORCE_COLOR", "0")
        .env_remove("CI")
        .output()
        .await
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    (output.status.success(), text)
}

/// A user's minimal config: the distribution's Chromium, as the real project's.
const CONFIG: &str = "const { defineConfig, devices } = require('@playwright/test');
module.exports = defineConfig({
  testDir: '.',
  reporter: 'line',
  projects: [{ name: 'chromium', use: { ...devices['Desktop Chrome'],
    launchOptions: { executablePath: process.env.CHROMIUM || '/usr/bin/chromium' } } }],
});
";

#[tokio::test]
async fn an_exported_todomvc_plan_passes_with_npx_playwright_test_and_fails_on_the_broken_app() {
    let base = serve_todomvc(false).await;
    let project = tempfile::tempdir().unwrap();
    let store = QaStore::in_project(project.path());

    // The plan passes in Vaider; its run names the plan to export.
    let scripted = plan(&base, json!(todo_steps()));
    store.save_plan(&scripted).unwrap();
    let options = RunOptions {
        step_timeout: std::time::Duration::from_secs(5),
        ..RunOptions::default()
    };
    let run = run_plan(&store, &scripted, &options, None).await.unwrap();
    assert_eq!(run.status, RunStatus::Passed, "{run:#?}");
    assert_eq!(find_plan(&store, &run.id).unwrap(), scripted);
    assert_eq!(find_plan(&store, "todos").unwrap(), scripted);
    assert!(find_plan(&store, "no-such-plan")
        .unwrap_err()
        .contains("no test plan"));

    // With a step only a model can judge: marked in the spec, not checked by it.
    let full = plan(&base, json!(with_agentic_step(todo_steps())));
    let spec = playwright_spec(&full);
    assert!(
        spec.contains("// agentic step (agentic_assertion): Look at the first todo; checked by a vision model in Vaider; not exported."),
        "{spec}"
    );
    assert!(spec.contains("test.step(\"looks done\""), "{spec}");

    // Another address than the plan's: BASE_URL wins, as the spec's header says.
    let other = serve_todomvc(false).await;
    let (passed, text) = npx_playwright_test(&spec, &other).await;
    assert!(passed, "{text}\n{spec}");
    assert!(text.contains("1 passed"), "{text}");

    let broken = serve_todomvc(true).await;
    let (passed, text) = npx_playwright_test(&spec, &broken).await;
    assert!(!passed, "{text}\n{spec}");
    assert!(text.contains("1 failed"), "{text}");
    assert!(
        text.contains("className") && text.contains("completed"),
        "Playwright names the check that failed: {text}"
    );
}
