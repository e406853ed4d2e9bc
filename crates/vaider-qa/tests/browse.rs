//! `agentic_browsing` steps run in the real headless Chromium of this machine on the small app
//! the tests serve, with the fake Gemini as the model (it follows the instruction's quoted
//! hints, by the page's numbered elements it is shown) and Vaider's own pipeline between them:
//! a login done by clicking and typing and then judged, the loop stopped at its bounds, a model
//! that gives up, and an action on an element the page has not, told to the model.

mod common;

use std::time::Duration;

use common::{engine_with_fake, plan, serve_app, sha256_hex};
use serde_json::{json, Value};
use vaider_qa::{run_plan, QaStore, RunOptions, RunStatus, StepResult, StepStatus, TestRun};
use vaider_test_support::loopback::files_containing;

fn browsing(instruction: &str, expected_outcome: Option<&str>, timeout: Option<u64>) -> Value {
    let mut step = json!({"id": "browse", "name": "browse", "type": "agentic_browsing",
                          "instruction": instruction});
    if let Some(outcome) = expected_outcome {
        step["expectedOutcome"] = json!(outcome);
    }
    if let Some(ms) = timeout {
        step["timeout"] = json!(ms);
    }
    step
}

fn options(max_browse_actions: usize) -> RunOptions {
    RunOptions {
        step_timeout: Duration::from_millis(1500),
        max_browse_actions,
        ..RunOptions::default()
    }
}

/// The lines of the step's logs that record an action of the loop.
fn actions(step: &StepResult) -> Vec<&str> {
    let logs = step.logs.as_deref().unwrap_or_default();
    logs.iter()
        .map(String::as_str)
        .filter(|l| l.starts_with("action "))
        .collect()
}

/// The screenshot an action line names.
fn shot_of(line: &str) -> &str {
    let start = line
        .find("(screenshot ")
        .expect("each action names its shot")
        + 12;
    let end = start + line[start..].find(".png)").expect("a PNG") + 4;
    &line[start..end]
}

/// The text of the user prompt of each model call, in order.
fn prompts(fake: &fake_gemini::FakeGemini) -> Vec<String> {
    fake.generate_requests()
        .iter()
        .map(|body| {
            body["contents"][0]["parts"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .collect()
}

/// Runs a plan of the one step on the app; the project folder (with the run's shots) is
/// returned so that it lives as long as the test reads them.
async fn run_one(
    step: Value,
    max_actions: usize,
) -> (TestRun, fake_gemini::FakeGemini, tempfile::TempDir) {
    let base = serve_app().await;
    let (engine, fake, _data) = engine_with_fake().await;
    let project = tempfile::tempdir().unwrap();
    let store = QaStore::in_project(project.path());
    let run = run_plan(
        &store,
        &plan(&base, json!([step])),
        &options(max_actions),
        Some(&engine),
    )
    .await
    .unwrap();
    for step in &run.step_results {
        for line in actions(step) {
            let shot = std::path::Path::new(shot_of(line));
            assert!(shot.starts_with(store.run_folder(&run.id)), "{line}");
        }
    }
    (run, fake, project)
}

#[tokio::test]
async fn a_model_logs_in_by_clicking_and_typing_and_the_outcome_is_judged() {
    let instruction = "Log in as Ada: type \"ada@example.com\" into \"Email\", \
                       type \"hunter2\" into \"Password\", click \"Sign in\".";
    let outcome = "the greeting says \"Welcome, Ada\"";
    let (run, fake, _project) = run_one(browsing(instruction, Some(outcome), None), 10).await;
    assert_eq!(run.status, RunStatus::Passed, "{run:#?}");
    let step = &run.step_results[0];
    assert_eq!(step.status, StepStatus::Passed);

    // One line per action, each with its reasoning and a shot on disk that the model saw.
    let lines = actions(step);
    assert_eq!(lines.len(), 4, "{lines:#?}");
    assert!(
        lines[0].starts_with("action 1: type \"ada@example.com\" into [2] textbox \"Email\" — "),
        "{}",
        lines[0]
    );
    assert!(lines[1].starts_with(
        "action 2: type (7 characters, hidden) into [4] textbox \"Password\" secret — "
    ));
    assert!(lines[2].starts_with("action 3: click [5] button \"Sign in\" — I click"));
    assert!(lines[3].starts_with("action 4: done — All 3 scripted actions are done."));
    for line in &lines {
        let shot = shot_of(line);
        assert!(image::open(shot).is_ok(), "{shot} is a PNG");
        // The fake names the sha256 of the bytes it received: this very file.
        assert!(line.contains(&sha256_hex(shot)), "{line}");
    }
    assert!(shot_of(lines[2]).ends_with("/01-browse-action-3.png"));
    // What was typed into the password field is in no log.
    let logs = step.logs.as_ref().unwrap();
    assert!(!logs.iter().any(|l| l.contains("hunter2")), "{logs:#?}");

    // The model saw the page's elements and what it had done so far.
    let asked = prompts(&fake);
    assert_eq!(asked.len(), 5, "four turns and the judgement");
    assert!(asked[0].contains("Actions so far: none"));
    assert!(asked[0].contains("[5] button \"Sign in\""), "{}", asked[0]);
    assert!(asked[3].contains("Action 3: click [5] button \"Sign in\" — ok"));
    assert!(
        asked[3].contains("heading \"Welcome, Ada\""),
        "{}",
        asked[3]
    );

    // Done, the page was judged against the expected outcome, on the step's own shot.
    let reasoning = step.llm_reasoning.as_deref().unwrap();
    assert!(
        reasoning.contains("on the page: [\"Welcome, Ada\"]"),
        "{reasoning}"
    );
    assert!(reasoning.contains(&sha256_hex(step.screenshot.as_deref().unwrap())));
    assert_eq!(step.llm_confidence, Some(0.9));
    assert_eq!(step.expected.as_deref(), Some(outcome));
}

#[tokio::test]
async fn the_loop_stops_at_its_bound_of_actions_or_time() {
    let instruction = "Look around the shop and never finish.";
    let (run, _fake, _project) = run_one(browsing(instruction, Some("anything"), None), 3).await;
    assert_eq!(run.status, RunStatus::Failed, "{run:#?}");
    let step = &run.step_results[0];
    assert_eq!(step.status, StepStatus::Failed);
    assert_eq!(
        step.error.as_deref(),
        Some("stopped after 3 actions without finishing: Look around the shop and never finish.")
    );
    let lines = actions(step);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    assert!(lines.iter().all(|l| l.contains(": scroll down — ")));
    assert!(
        step.llm_reasoning.is_none(),
        "an unfinished step is not judged"
    );
    assert!(step.screenshot.is_some(), "the step keeps its last page");

    // The step's own time limit ends it too, whatever the number of actions allowed.
    let (run, _fake, _project) = run_one(browsing(instruction, None, Some(1_500)), 1_000).await;
    let step = &run.step_results[0];
    assert_eq!(step.status, StepStatus::Failed, "{step:#?}");
    let error = step.error.as_deref().unwrap();
    assert!(
        error.starts_with("stopped at the time limit of 1.5 s, after "),
        "{error}"
    );
    assert!(
        actions(step).len() < 1_000,
        "{} actions",
        actions(step).len()
    );
}

#[tokio::test]
async fn a_model_that_gives_up_fails_the_step_with_its_reasoning() {
    let (run, _fake, _project) =
        run_one(browsing("Delete the account, or give up.", None, None), 10).await;
    assert_eq!(run.status, RunStatus::Failed, "{run:#?}");
    let step = &run.step_results[0];
    assert_eq!(step.status, StepStatus::Failed);
    let error = step.error.as_deref().unwrap();
    assert!(
        error.starts_with(
            "the model gave up: The instruction tells me to give up. media 1: image/png"
        ),
        "{error}"
    );
    assert_eq!(actions(step).len(), 1);
    assert!(step.actual.as_deref().unwrap().contains("give up"));
}

#[tokio::test]
async fn an_action_on_an_element_the_page_has_not_is_told_to_the_model() {
    let instruction = "click ref \"99\", then click \"Sign in\"";
    let (run, fake, _project) = run_one(browsing(instruction, None, None), 10).await;
    assert_eq!(run.status, RunStatus::Passed, "{run:#?}");
    let lines = actions(&run.step_results[0]);
    assert_eq!(lines.len(), 3, "{lines:#?}");
    assert!(
        lines[0].starts_with("action 1: click [99] (not in the list) — "),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].ends_with(
            "; failed: no element has ref 99 in the latest snapshot: act on an element it lists"
        ),
        "{}",
        lines[0]
    );
    assert!(lines[1].contains("click [5] button \"Sign in\""));
    assert!(!lines[1].contains("failed"), "{}", lines[1]);
    let asked = prompts(&fake);
    assert!(
        asked[1].contains("Action 1: click [99] (not in the list) — failed: no element has ref 99"),
        "{}",
        asked[1]
    );
    // The second click reached the button: the model's last look is at the signed-in page.
    assert!(
        asked[2].contains("[1] heading \"Welcome,\""),
        "{}",
        asked[2]
    );
}

#[tokio::test]
async fn without_a_model_a_browsing_step_is_an_error_that_says_so() {
    let base = serve_app().await;
    let project = tempfile::tempdir().unwrap();
    let store = QaStore::in_project(project.path());
    let step = browsing("click \"Sign in\"", None, None);
    let run = run_plan(&store, &plan(&base, json!([step])), &options(10), None)
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Error);
    assert!(run.error.unwrap().contains("need a vision model"));
}

/// A password typed during agentic browsing is kept nowhere: the plan names where its value is
/// read (an environment variable), the model types `{{secret:PASSWORD}}`, the page gets the
/// value, and no file of the data folder or the project (history, interaction files, the
/// run's files, logs) holds it.
#[tokio::test]
async fn a_password_typed_in_agentic_browsing_is_in_no_file() {
    let password = "Tr0ub4dor-kept-nowhere";
    std::env::set_var("QA_SHOP_PASSWORD", password);
    let instruction = "Log in as Ada: type \"ada@example.com\" into \"Email\", \
                       type \"{{secret:PASSWORD}}\" into \"Password\", click \"Sign in\".";
    let base = serve_app().await;
    let (engine, fake, data) = engine_with_fake().await;
    let project = tempfile::tempdir().unwrap();
    let store = QaStore::in_project(project.path());
    let mut plan = plan(&base, json!([browsing(instruction, None, None)]));
    plan.secrets =
        serde_json::from_value(json!({"PASSWORD": {"env": "QA_SHOP_PASSWORD"}})).unwrap();
    let run = run_plan(&store, &plan, &options(10), Some(&engine))
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Passed, "{run:#?}");
    // The page got the value itself: its password field holds that many characters.
    let asked = prompts(&fake);
    let hidden = format!("({} characters, hidden)", password.len());
    assert!(asked[2].contains(&hidden), "{}", asked[2]);
    assert!(
        asked.iter().all(|p| !p.contains(password)),
        "the model saw it"
    );
    for dir in [data.path(), project.path()] {
        let holding = files_containing(dir, password);
        assert!(holding.is_empty(), "the password is in {holding:#?}");
    }
    // The plan as kept names only where the value comes from, in a file only its owner reads.
    let saved = store.save_plan(&plan).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&saved).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    assert!(!files_containing(project.path(), "QA_SHOP_PASSWORD").is_empty());
}

/// A password the model itself chose (here from a plan that wrote it out, not as a secret) is
/// redacted from what is kept of the model's answer: the result and the provider's raw answer
/// in response.json, and the history row's description. (The prompt keeps the instruction the
/// plan's author wrote: plans keep secrets out with `{{secret:NAME}}`, as tested above.)
#[tokio::test]
async fn a_password_the_model_types_is_redacted_from_its_recorded_answer() {
    let password = "chosen-by-the-model-42";
    let instruction = format!(
        "Sign up: type \"ada@example.com\" into \"Email\", type \"{password}\" into \"Password\"."
    );
    let base = serve_app().await;
    let (engine, _fake, _data) = engine_with_fake().await;
    let project = tempfile::tempdir().unwrap();
    let store = QaStore::in_project(project.path());
    let run = run_plan(
        &store,
        &plan(&base, json!([browsing(&instruction, None, None)])),
        &options(10),
        Some(&engine),
    )
    .await
    .unwrap();
    assert_eq!(run.status, RunStatus::Passed, "{run:#?}");
    let rows = engine.history().list(50, 0).unwrap();
    let mut turns = 0;
    for row in rows.iter().filter(|r| r.tool == "browse_step") {
        let log_dir = std::path::Path::new(row.log_dir.as_deref().unwrap());
        let text = std::fs::read_to_string(log_dir.join("response.json")).unwrap();
        let response: Value = serde_json::from_str(&text).unwrap();
        for part in ["result", "providerResponse"] {
            let kept = response[part].to_string();
            assert!(!kept.contains(password), "{part}: {kept}");
        }
        // The prompt holds the instruction the plan's author wrote; the answer is redacted.
        let described = row.description.as_deref().unwrap_or_default();
        assert!(!described.contains(password), "{described}");
        turns += 1;
    }
    assert!(turns >= 2, "{turns} browsing turns");
}
