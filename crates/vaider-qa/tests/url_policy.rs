//! Plans held to the URL policy in the real headless Chromium: a step that opens a local file
//! (directly or through `view-source:`), a `file://` base URL, a link to the metadata host name
//! and a redirect from the app to a foreign host each fail the step, say which URL and which
//! rule, and leave nothing of what is behind them in the run, its folder or the history. All
//! traffic stays on loopback: the test host names are mapped by Chromium's
//! `--host-resolver-rules` to a loopback listener that counts every connection (and every other
//! name resolves to nothing).

mod common;

use std::sync::atomic::Ordering;

use common::{engine_with_fake, plan};
// The shared app server is for the other plan tests; these serve their own pages.
#[allow(unused_imports)]
use common::serve_app as _;
use serde_json::json;
use vaider_core::analysis::Door;
use vaider_qa::service::{self, RunRequest};
use vaider_qa::{run_plan, QaStore, RunOptions, RunStatus, StepStatus};
use vaider_test_support::loopback::{files_containing, html, listen};

/// What the local file and the foreign host hold: it must appear nowhere Vaider writes.
const SECRET: &str = "SECRET-BEHIND-THE-POLICY";

#[tokio::test]
async fn refused_navigations_fail_the_step_and_leak_nothing() {
    let files = tempfile::tempdir().unwrap();
    let secret_file = files.path().join("secret.txt");
    std::fs::write(&secret_file, SECRET).unwrap();
    let file_url = format!("file://{}", secret_file.display());

    let (foreign_port, foreign_hits) = listen(|_| html(SECRET)).await;
    let (app_port, _) = listen(move |path| match path {
        "/redirect" => format!(
            "HTTP/1.1 302 Found\r\nLocation: http://evil.test:{foreign_port}/secret\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        ),
        _ => html(&format!(
            r#"<!doctype html><html><body><h1>Shop</h1>
<a id="meta" href="http://metadata.google.internal:{foreign_port}/computeMetadata/v1/">meta</a>
</body></html>"#
        )),
    })
    .await;
    let base = format!("http://127.0.0.1:{app_port}");
    let options = RunOptions {
        step_timeout: std::time::Duration::from_millis(3000),
        record_video: false,
        browser_flags: vec![
            "--host-resolver-rules=MAP evil.test 127.0.0.1, MAP metadata.google.internal 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"
                .into(),
        ],
        ..RunOptions::default()
    };
    let project = tempfile::tempdir().unwrap();
    let store = QaStore::in_project(project.path());

    let open = |target: &str| {
        json!([{"id": "go", "name": "go", "type": "selenese", "commands": [
            {"command": "open", "target": target}
        ]}])
    };
    let cases = [
        (open(&file_url), file_url.clone(), "http"),
        (
            open(&format!("view-source:{file_url}")),
            "view-source:".to_string(),
            "http",
        ),
        (open("/redirect"), "evil.test".to_string(), "allow-list"),
        (
            json!([{"id": "go", "name": "go", "type": "selenese", "commands": [
                {"command": "open", "target": "/"},
                {"command": "click", "target": "#meta"},
                {"command": "waitForElement", "target": "#never-there"}
            ]}]),
            "metadata.google.internal".to_string(),
            "metadata",
        ),
    ];
    for (steps, url_part, rule_part) in cases {
        let run = run_plan(&store, &plan(&base, steps), &options, None)
            .await
            .unwrap();
        assert_eq!(run.status, RunStatus::Error, "{run:#?}");
        let step = &run.step_results[0];
        assert_eq!(step.status, StepStatus::Error, "{step:#?}");
        let error = step.error.clone().unwrap_or_default();
        assert!(error.contains("NAVIGATION_REFUSED"), "{error}");
        assert!(error.contains(&url_part), "{error}");
        assert!(error.contains(rule_part), "{error}");
    }

    // A base URL that is a local file: the run does not start.
    let run = run_plan(&store, &plan(&file_url, open("/")), &options, None)
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Error);
    let error = run.error.clone().unwrap_or_default();
    assert!(
        error.contains("NAVIGATION_REFUSED") && error.contains("file://"),
        "{error}"
    );

    assert_eq!(
        foreign_hits.load(Ordering::SeqCst),
        0,
        "the foreign listener was reached"
    );
    assert_eq!(
        files_containing(project.path(), SECRET),
        Vec::<std::path::PathBuf>::new()
    );
}

#[tokio::test]
async fn a_plan_that_reads_a_local_file_leaves_nothing_in_the_history() {
    let files = tempfile::tempdir().unwrap();
    let secret_file = files.path().join("secret.txt");
    std::fs::write(&secret_file, SECRET).unwrap();
    let file_url = format!("file://{}", secret_file.display());
    let (engine, _fake, data) = engine_with_fake().await;
    let project = tempfile::tempdir().unwrap();
    let store = QaStore::in_project(project.path());
    let steps = json!([{"id": "go", "name": "go", "type": "selenese", "commands": [
        {"command": "open", "target": file_url}
    ]}]);
    let mut by_file = plan(&file_url, steps.clone());
    by_file.id = "by-file".into();
    store.save_plan(&by_file).unwrap();
    let (app_port, _) = listen(|_| html("<h1>Shop</h1>")).await;
    let mut by_step = plan(&format!("http://127.0.0.1:{app_port}"), steps);
    by_step.id = "by-step".into();
    store.save_plan(&by_step).unwrap();

    for (plan_id, base_url) in [
        ("by-file", None),
        ("by-step", None),
        ("by-step", Some(file_url.clone())),
    ] {
        let answer = service::run_test_plan(
            &engine,
            RunRequest {
                plan_id: plan_id.into(),
                base_url,
                workspace: project.path().to_path_buf(),
                door: Door::Cli,
                headless: true,
                run_id: None,
                // The user approved these plans: what is tested here is where they may go.
                approval: Some(vaider_core::person::Decision::on_command_line()),
            },
        )
        .await;
        // A file base URL is refused before the run starts; a step's file URL fails its step.
        let error = match answer {
            Ok(summary) => {
                assert_eq!(summary.status, RunStatus::Error, "{summary:#?}");
                let error = summary.error.unwrap_or_default();
                assert!(error.contains("NAVIGATION_REFUSED"), "{error}");
                error
            }
            Err(error) => error.message,
        };
        assert!(error.contains(&file_url), "{error}");
    }
    // The step's run was kept as a history job, with the refusal and nothing behind it.
    let jobs = engine.history().list(10, 0).unwrap();
    assert!(jobs.iter().any(|j| j.tool == "run_test_plan"), "{jobs:#?}");
    assert_eq!(
        files_containing(project.path(), SECRET),
        Vec::<std::path::PathBuf>::new()
    );
    assert_eq!(
        files_containing(data.path(), SECRET),
        Vec::<std::path::PathBuf>::new()
    );
}
