//! Current models end to end through the terminal, against a fake Gemini that serves only
//! today's models: a fresh configuration's first call works, `vaider models` lists the
//! provider's models page by page, a shut-down model gives MODEL_NOT_FOUND naming the
//! current ones, and `vaider doctor` flags a retiring or gone model with its replacement.

mod common;

use common::*;
use fake_gemini::FakeGemini;
use serde_json::Value;

fn with_fake(command: &mut std::process::Command, fake: &FakeGemini) {
    command
        .env("GEMINI_API_KEY", FakeGemini::API_KEY)
        .env("VAIDER_GEMINI_BASE_URL", fake.base_url());
}

#[tokio::test]
async fn a_fresh_configuration_first_call_succeeds_on_todays_models() {
    let fake = FakeGemini::start().await;
    let sandbox = Sandbox::new();
    sandbox.media("login-flow.webm");
    let mut command = sandbox.vaider();
    command.args(["analyse", "login-flow.webm", "--json"]);
    with_fake(&mut command, &fake);
    let output = tokio::task::spawn_blocking(move || run(command))
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let result: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(result["model"], "gemini-3.5-flash-lite");
    let generate: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.path.ends_with(":generateContent"))
        .collect();
    assert_eq!(generate.len(), 1);
    assert_eq!(
        generate[0].path,
        "/v1beta/models/gemini-3.5-flash-lite:generateContent"
    );
}

#[tokio::test]
async fn vaider_models_lists_the_fakes_models_following_every_page() {
    let fake = FakeGemini::start().await;
    // Two models a page: five models take three pages.
    fake.set_models_page_cap(2);
    let sandbox = Sandbox::new();
    let mut command = sandbox.vaider();
    command.args(["models", "--json"]);
    with_fake(&mut command, &fake);
    let output = tokio::task::spawn_blocking(move || run(command))
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    let catalogue: Value = serde_json::from_str(&stdout(&output)).unwrap();
    let ids: Vec<&str> = catalogue["models"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, fake_gemini::served_models());
    let lists = fake
        .requests()
        .into_iter()
        .filter(|r| r.path == "/v1beta/models")
        .count();
    assert_eq!(lists, 3);
    let lite = &catalogue["models"][1];
    assert_eq!(lite["id"], "gemini-3.5-flash-lite");
    assert_eq!(lite["default"], true);
    assert_eq!(lite["configured"], true);
    assert_eq!(lite["lifecycle"]["state"], "current");
    assert_eq!(catalogue["models"][0]["inputTokenLimit"], 1_048_576);

    // The table for a person marks the configured model, and a retiring one with its day.
    let mut command = sandbox.vaider();
    command.arg("models").env("VAIDER_MODEL", "gemini-2.5-pro");
    with_fake(&mut command, &fake);
    let output = tokio::task::spawn_blocking(move || run(command))
        .await
        .unwrap();
    let table = stdout(&output);
    for model in fake_gemini::served_models() {
        assert!(table.contains(model), "{table}");
    }
    let pro = table
        .lines()
        .find(|l| l.contains("gemini-2.5-pro"))
        .unwrap_or_else(|| panic!("{table}"));
    assert!(pro.starts_with('*'), "{pro}");
    assert!(
        pro.contains("2026-12-01") && pro.contains("gemini-3.5-flash-lite"),
        "{pro}"
    );
    assert!(pro.contains("not served"), "{pro}");
}

#[tokio::test]
async fn a_shut_down_model_is_model_not_found_naming_the_current_ones() {
    let fake = FakeGemini::start().await;
    let sandbox = Sandbox::new();
    sandbox.media("login-flow.webm");
    let mut command = sandbox.vaider();
    command
        .args(["analyse", "login-flow.webm"])
        .env("VAIDER_MODEL", "gemini-2.5-flash");
    with_fake(&mut command, &fake);
    let output = tokio::task::spawn_blocking(move || run(command))
        .await
        .unwrap();
    assert!(!output.status.success());
    let err = stderr(&output);
    for needle in [
        "MODEL_NOT_FOUND",
        "gemini-2.5-flash",
        "2026-12-01",
        "gemini-3.5-flash-lite",
        "gemini-3.8-flash",
        "VAIDER_MODEL",
        "vaider models",
    ] {
        assert!(err.contains(needle), "{needle} missing: {err}");
    }
    assert!(!err.contains(FakeGemini::API_KEY));

    // The same as JSON: the choices are the provider's list, fetched on the error path.
    let mut command = sandbox.vaider();
    command.args([
        "analyse",
        "login-flow.webm",
        "--json",
        "--model",
        "gemini-2.0-flash",
    ]);
    with_fake(&mut command, &fake);
    let output = tokio::task::spawn_blocking(move || run(command))
        .await
        .unwrap();
    assert!(!output.status.success());
    let body: Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(body["error"]["code"], "MODEL_NOT_FOUND");
    assert_eq!(body["error"]["model"], "gemini-2.0-flash");
    assert_eq!(body["error"]["shutDown"], "2026-06-01");
    let choices: Vec<&str> = body["error"]["choices"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c.as_str().unwrap())
        .collect();
    assert_eq!(choices, fake_gemini::served_models());
    assert!(body["error"]["message"]
        .as_str()
        .unwrap()
        .contains("was shut down on 2026-06-01"));
}

#[tokio::test]
async fn doctor_flags_a_retiring_or_gone_model_with_its_replacement() {
    let fake = FakeGemini::start().await;
    let sandbox = Sandbox::new();
    let mut command = sandbox.vaider();
    command
        .arg("doctor")
        .env("VAIDER_MODEL", "gemini-2.5-flash");
    with_fake(&mut command, &fake);
    let output = tokio::task::spawn_blocking(move || run(command))
        .await
        .unwrap();
    assert!(!output.status.success());
    let report = stdout(&output);
    let line = report
        .lines()
        .find(|l| l.contains(" model: "))
        .unwrap_or_else(|| panic!("{report}"));
    assert!(line.starts_with("FIX "), "{line}");
    assert!(line.contains("gemini-2.5-flash"), "{line}");
    assert!(line.contains("2026-12-01"), "{line}");
    assert!(line.contains("gemini-3.5-flash-lite"), "{line}");

    // A name the provider does not list is flagged too, even with no shutdown on record.
    let mut command = sandbox.vaider();
    command
        .arg("doctor")
        .env("VAIDER_MODEL", "gemini-9-imaginary");
    with_fake(&mut command, &fake);
    let report = stdout(
        &tokio::task::spawn_blocking(move || run(command))
            .await
            .unwrap(),
    );
    let line = report.lines().find(|l| l.contains(" model: ")).unwrap();
    assert!(
        line.starts_with("FIX ") && line.contains("not among gemini's models"),
        "{line}"
    );

    // The default is current and served.
    let mut command = sandbox.vaider();
    command.arg("doctor");
    with_fake(&mut command, &fake);
    let report = stdout(
        &tokio::task::spawn_blocking(move || run(command))
            .await
            .unwrap(),
    );
    assert!(
        report.contains("ok   model: gemini-3.5-flash-lite is served by gemini"),
        "{report}"
    );
}
