//! The QA service as the doors call it: a plan written by the (fake) model from requirements
//! while looking at the running app, kept, listed, run and reported, with the contract's error
//! codes; an invalid model plan retried once with its errors; generation and runs in the
//! history as jobs with their model calls as children.

mod common;

use std::path::Path;

use common::{engine_with_fake, serve_app, sha256_hex};
use serde_json::json;
use vaider_core::analysis::Door;
use vaider_qa::service::{self, GenerateRequest, RunRequest};
use vaider_qa::{ErrorCode, QaStore, RunStatus, StepStatus};

fn generate_request(workspace: &Path, base_url: &str, requirements: &str) -> GenerateRequest {
    GenerateRequest {
        requirements: requirements.into(),
        repo_url: None,
        base_url: base_url.into(),
        name: None,
        workspace: workspace.to_path_buf(),
        provider: None,
        model: None,
        door: Door::Cli,
        budget_tokens: Some(2_000),
        github_api: service::GITHUB_API.into(),
    }
}

fn run_request(workspace: &Path, plan_id: &str) -> RunRequest {
    RunRequest {
        plan_id: plan_id.into(),
        base_url: None,
        workspace: workspace.to_path_buf(),
        door: Door::Cli,
        headless: true,
        run_id: None,
        approval: None,
    }
}

/// A workspace with a README and the app's page, as a project folder has them.
fn workspace() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("README.md"),
        "# Shop\nSign in with your email.",
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("src/pages")).unwrap();
    std::fs::write(
        dir.path().join("src/pages/index.html"),
        vaider_test_support::shop::APP,
    )
    .unwrap();
    dir
}

#[tokio::test]
async fn a_plan_is_written_from_the_running_app_kept_run_and_reported() {
    let base = serve_app().await;
    let (engine, fake, _data) = engine_with_fake().await;
    let dir = workspace();
    let requirements = "The first page shows \"Sign in\"; after login it says \"Welcome, Ada\"";

    let generated =
        service::generate_test_plan(&engine, generate_request(dir.path(), &base, requirements))
            .await
            .unwrap();
    assert_eq!(generated.steps, 3);
    assert!(
        generated.plan_id.starts_with("plan-the-first-page-shows"),
        "{}",
        generated.plan_id
    );
    let (plan, path) = QaStore::in_project(dir.path())
        .plan(&generated.plan_id)
        .unwrap();
    assert_eq!(path.display().to_string(), generated.path);
    assert!(path.starts_with(dir.path().join(".qa-agent/plans")));
    assert_eq!(plan.prompt, requirements);
    assert_eq!(plan.base_url, base);
    // The model saw the app's first page: the fake names the sha256 of the bytes it got.
    let shot = std::fs::read_dir(dir.path().join(".qa-agent/generation"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path()
        .join("first-page.png");
    assert!(
        plan.description
            .contains(&sha256_hex(shot.to_str().unwrap())),
        "{}",
        plan.description
    );
    // The context chosen from the code base, and its budget, are kept in the plan.
    let context = plan.context.clone().unwrap();
    assert_eq!(context.budget_tokens, 2_000);
    assert_eq!(context.files[..2], ["README.md", "src/pages/index.html"]);
    let sent = &fake.generate_requests()[0];
    assert!(
        sent.to_string().contains("Sign in with your email."),
        "the README reached the model"
    );
    // "Sign in" is on the page, so it is a scripted check; "Welcome, Ada" is not yet: judged.
    let json = serde_json::to_value(&plan.steps).unwrap();
    assert_eq!(
        json[1]["commands"][0],
        json!({"command": "assertVisible", "target": "text=Sign in"})
    );
    assert_eq!(json[2]["type"], "agentic_assertion");

    // The plan runs: the first page is not the greeting, so the judged step fails.
    let summary = service::run_test_plan(&engine, run_request(dir.path(), &plan.id))
        .await
        .unwrap();
    assert_eq!(summary.status, RunStatus::Failed, "{summary:#?}");
    assert_eq!((summary.steps_executed, summary.steps_passed), (3, 2));
    assert_eq!(summary.failed_step.as_deref(), Some("step-3"));
    let run = service::get_test_run(dir.path(), &summary.run_id).unwrap();
    assert_eq!(run.step_results[2].status, StepStatus::Failed);
    // The whole run is a WebM, started before the first step, its frames cleaned up.
    let video = run.video.clone().unwrap();
    let webm = std::fs::read(video.path.as_deref().expect("a video")).unwrap();
    assert_eq!(webm[..4], [0x1a, 0x45, 0xdf, 0xa3], "an EBML (WebM) file");
    assert!(video.started_at <= run.step_results[0].started_at);
    assert!(video.duration_ms >= run.step_results.iter().map(|s| s.duration).sum::<u64>());
    let probed = std::process::Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-show_entries",
            "format=duration",
            "-of",
            "csv=p=0",
        ])
        .arg(video.path.as_deref().unwrap())
        .output()
        .unwrap();
    let seconds: f64 = String::from_utf8_lossy(&probed.stdout)
        .trim()
        .parse()
        .unwrap();
    let expected = video.duration_ms as f64 / 1000.0;
    assert!(
        (seconds - expected).abs() < 0.5,
        "the video lasts {seconds} s, the run {expected} s"
    );
    let folder = QaStore::in_project(dir.path()).run_folder(&run.id);
    assert!(!folder.join("frames").exists());
    assert!(run.step_results[2]
        .llm_reasoning
        .as_deref()
        .unwrap()
        .contains("Welcome, Ada"));

    // Both are history jobs, each with its model calls as children.
    let mut jobs = engine.history().list(10, 0).unwrap();
    jobs.retain(|row| row.parent_id.is_none());
    let tools: Vec<&str> = jobs.iter().map(|j| j.tool.as_str()).collect();
    assert_eq!(tools, ["run_test_plan", "generate_test_plan"]);
    assert_eq!(
        jobs[0].id, summary.run_id,
        "the run's id is its history entry's"
    );
    assert_eq!(
        engine.history().children(&jobs[0].id).unwrap()[0].tool,
        "judge_page"
    );
    assert_eq!(
        engine.history().children(&jobs[1].id).unwrap()[0].tool,
        "generate_test_plan"
    );

    // Listed with their filters, and still there for a new engine (a restart).
    let plans = service::list_test_plans(dir.path(), None);
    assert_eq!(plans["plans"][0]["id"], plan.id);
    assert_eq!(plans["plans"][0]["stepCount"], 3);
    assert_eq!(
        service::list_test_plans(dir.path(), Some("other"))["plans"],
        json!([])
    );
    let failed = service::list_test_runs(dir.path(), Some(&plan.id), Some("failed")).unwrap();
    assert_eq!(failed["runs"][0]["id"], summary.run_id);
    assert!(failed["runs"][0]["duration"].as_u64().is_some());
    assert_eq!(
        service::list_test_runs(dir.path(), None, Some("passed")).unwrap()["runs"],
        json!([])
    );
    let bad = service::list_test_runs(dir.path(), None, Some("green")).unwrap_err();
    assert_eq!(bad.code, ErrorCode::InvalidInput);
}

#[tokio::test]
async fn an_invalid_model_plan_is_retried_once_with_its_errors_then_reported() {
    let base = serve_app().await;
    let (engine, fake, _data) = engine_with_fake().await;
    let dir = workspace();

    let fixed = service::generate_test_plan(
        &engine,
        generate_request(dir.path(), &base, "[invalid first] it shows \"Sign in\""),
    )
    .await
    .unwrap();
    assert_eq!(fixed.steps, 2);
    let requests = fake.generate_requests();
    assert_eq!(requests.len(), 2);
    assert!(
        requests[1].to_string().contains("Validation errors:"),
        "the errors went back"
    );

    let error = service::generate_test_plan(
        &engine,
        generate_request(dir.path(), &base, "[always invalid] it shows \"Sign in\""),
    )
    .await
    .unwrap_err();
    assert_eq!(error.code, ErrorCode::ModelError);
    assert!(error.message.contains("invalid twice"), "{}", error.message);
    assert!(error.details.unwrap()["errors"][0]
        .as_str()
        .unwrap()
        .contains("step-broken"));
    assert_eq!(
        service::list_test_plans(dir.path(), None)["plans"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn bad_input_gets_the_contract_codes_and_says_what_to_do() {
    let (engine, _fake, _data) = engine_with_fake().await;
    let dir = workspace();
    // Nothing listens on this port: an app that is not running.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let down = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);

    let error =
        service::generate_test_plan(&engine, generate_request(dir.path(), &down, "it works"))
            .await
            .unwrap_err();
    assert_eq!(error.code, ErrorCode::BrowserError);
    assert!(
        error.message.contains("Is the app running there?"),
        "{}",
        error.message
    );
    let error =
        service::generate_test_plan(&engine, generate_request(dir.path(), "localhost:3000", "x"))
            .await
            .unwrap_err();
    assert_eq!(
        (error.code, error.details.unwrap()["field"].as_str()),
        (ErrorCode::InvalidInput, Some("baseUrl"))
    );
    let error = service::generate_test_plan(&engine, generate_request(dir.path(), &down, "  "))
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidInput);
    let mut request = generate_request(dir.path(), &down, "x");
    request.repo_url = Some("https://gitlab.com/a/b".into());
    let error = service::generate_test_plan(&engine, request)
        .await
        .unwrap_err();
    assert!(
        error.message.contains("neither a GitHub repository"),
        "{}",
        error.message
    );

    let error = service::run_test_plan(&engine, run_request(dir.path(), "nope"))
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::PlanNotFound);
    let error = service::get_test_run(dir.path(), "nope").unwrap_err();
    assert_eq!(error.code, ErrorCode::RunNotFound);
    let error = service::get_test_run(dir.path(), "../../etc/passwd").unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert_eq!(
        service::workspace(&Default::default()).unwrap_err().code,
        ErrorCode::InvalidInput
    );

    // A plan written by hand whose app is down: the run ends `error`, saying so.
    let plan = json!({"id": "by-hand", "name": "By hand", "project": {"name": "shop"},
        "baseUrl": down, "createdAt": "2026-11-22T10:00:00.000Z", "updatedAt": "2026-11-22T10:00:00.000Z",
        "steps": [{"id": "s1", "name": "open", "type": "selenese", "commands": [{"command": "open", "target": "/"}]}]});
    let folder = dir.path().join(".qa-agent/plans/shop");
    std::fs::create_dir_all(&folder).unwrap();
    std::fs::write(folder.join("by-hand.json"), plan.to_string()).unwrap();
    // Vaider did not write it: it runs only once a person approved where it goes.
    let error = service::run_test_plan(&engine, run_request(dir.path(), "by-hand"))
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::PlanNotApproved, "{}", error.message);
    assert!(
        error.message.contains("vaider plan approve by-hand --dir"),
        "{}",
        error.message
    );
    let details = error.details.unwrap();
    assert_eq!(details["reach"][0], format!("opens {down}"), "{details}");
    let mut approved = run_request(dir.path(), "by-hand");
    approved.approval = Some(vaider_core::person::Decision::on_command_line());
    let summary = service::run_test_plan(&engine, approved).await.unwrap();
    assert_eq!(summary.status, RunStatus::Error);
    assert_eq!(summary.steps_executed, 0);
    assert!(summary.error.unwrap().contains("Is the app running there?"));
    // A hand-written plan that cannot run is refused before a browser starts.
    let broken = plan
        .to_string()
        .replace("\"target\":\"/\"", "\"target\":\"\"");
    std::fs::write(folder.join("by-hand.json"), broken).unwrap();
    let error = service::run_test_plan(&engine, run_request(dir.path(), "by-hand"))
        .await
        .unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidInput);
    assert!(
        error.message.contains("needs a target"),
        "{}",
        error.message
    );
}
