//! `vaider-qa-bench`: a 10-step scripted test plan on the shop app (tests/qa-app/shop.html,
//! served here) run by `run_test_plan`, against the same ten steps written as a Playwright test
//! (tests/playwright-project/bench, `npx playwright test`) in the same system Chromium; the
//! target is "no slower". Vaider's runs are timed with the run's video on (the default) and
//! off; also measured: the browser's start (launch to a blank tab) and Vaider's peak memory
//! (VmHWM of this process, which runs the engine; Chromium's processes aside).
//!
//! Run with `scripts/bench.sh --qa [--runs N]`, or `target/release/vaider-qa-bench`. Needs
//! `npm ci` in tests/playwright-project (scripts/test.sh does it) and Chromium.

// A plan run's future (the engine, the browser, each step's model call named by its job) is
// nested deeper than rustc's default limit lets it lay out in this test build.
#![recursion_limit = "256"]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{ensure, Result};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use vaider_bench::report::{ms, verdict, Spread, Table};
use vaider_core::analysis::Door;
use vaider_core::{Config, Vaider};
use vaider_qa::service::{run_test_plan, RunRequest};
use vaider_qa::RunStatus;

const APP: &str = include_str!("../../../../tests/qa-app/shop.html");

fn project() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/playwright-project"
    ))
}

/// Serves the app (no bug) on a free loopback port.
async fn serve_app() -> Result<String> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let base = format!("http://{}", listener.local_addr()?);
    let body = APP.replace("__BUG__", "none");
    tokio::spawn(async move {
        while let Ok((mut socket, _)) = listener.accept().await {
            let body = body.clone();
            tokio::spawn(async move {
                let mut request = vec![0u8; 4096];
                let _ = socket.read(&mut request).await;
                let response = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            });
        }
    });
    Ok(base)
}

/// The ten steps, as the Playwright spec has them.
fn write_plan(workspace: &Path, base_url: &str) -> Result<()> {
    let command = |c: &str, t: &str, v: Option<&str>| match v {
        Some(v) => json!({"command": c, "target": t, "value": v}),
        None => json!({"command": c, "target": t}),
    };
    let step = |id: usize, commands: Vec<serde_json::Value>| json!({"id": format!("s{id}"), "name": format!("step {id}"), "type": "selenese", "commands": commands});
    let assert = |id: usize, kind: &str, selector: &str, expected: serde_json::Value| {
        json!({"id": format!("s{id}"), "name": format!("step {id}"), "type": "unit_assertion",
               "assertions": [{"type": kind, "selector": selector, "expected": expected}]})
    };
    let plan = json!({
        "id": "bench", "name": "Signs in and adds an item", "project": {"name": "shop"},
        "baseUrl": base_url, "createdAt": "2026-11-22T00:00:00.000Z", "updatedAt": "2026-11-22T00:00:00.000Z",
        "steps": [
            step(1, vec![command("open", "/", None)]),
            step(2, vec![command("type", "#email", Some("ada@example.com"))]),
            step(3, vec![command("type", "#password", Some("secret"))]),
            step(4, vec![command("click", "text=Sign in", None)]),
            step(5, vec![command("waitForElement", "#greeting", None)]),
            step(6, vec![command("assertText", "#greeting", Some("exact:Welcome, Ada"))]),
            assert(7, "contains", "#count", json!("3 items")),
            step(8, vec![command("click", "#add", None)]),
            assert(9, "equals", "#count", json!("4 items")),
            assert(10, "visible", "#items li:nth-child(4)", json!(true)),
        ]
    });
    let folder = workspace.join(".qa-agent/plans/shop");
    std::fs::create_dir_all(&folder)?;
    std::fs::write(folder.join("bench.json"), plan.to_string())?;
    Ok(())
}

/// `npx playwright test` of the same steps.
fn playwright(base_url: &str, output: &Path) -> Result<Duration> {
    let config = ["--config", "bench/playwright.config.mjs"];
    vaider_bench::playwright::npx_test(&project(), &config, output, &[("QA_BASE_URL", base_url)])
}

/// One run through the service, as `run_test_plan` does it; its time and the browser's start
/// with the first page (the run's start to its first step's).
async fn vaider_run(engine: &Vaider, workspace: &Path) -> Result<(Duration, Duration)> {
    let request = RunRequest {
        plan_id: "bench".into(),
        base_url: None,
        workspace: workspace.to_path_buf(),
        door: Door::Cli,
        headless: true,
        run_id: None,
        approval: None,
    };
    // The bench wrote the plan itself, as Vaider writes its own: it runs without asking.
    let (plan, path) = vaider_qa::QaStore::in_project(workspace).plan("bench")?;
    vaider_qa::trust::PlanApprovals::in_data_dir(engine.data_dir())
        .record_written(&plan, &path)
        .map_err(anyhow::Error::msg)?;
    let started = Instant::now();
    let summary = run_test_plan(engine, request)
        .await
        .map_err(anyhow::Error::msg)?;
    let took = started.elapsed();
    ensure!(
        summary.status == RunStatus::Passed,
        "the plan failed: {summary:?}"
    );
    let run =
        vaider_qa::service::get_test_run(workspace, &summary.run_id).map_err(anyhow::Error::msg)?;
    let first = chrono::DateTime::parse_from_rfc3339(&run.step_results[0].started_at)?;
    let begun = chrono::DateTime::parse_from_rfc3339(&run.started_at)?;
    Ok((took, (first - begun).to_std().unwrap_or_default()))
}

fn engine(data: &Path, record_video: bool) -> Result<std::sync::Arc<Vaider>> {
    let mut config = Config {
        data_dir: Some(data.to_path_buf()),
        ..Config::default()
    };
    config.qa.record_video = record_video;
    Ok(Vaider::open(config)?)
}

/// Launch to a blank tab, and closing.
async fn browser_start() -> Result<Duration> {
    let started = Instant::now();
    let browser = vaider_browser::Browser::launch().await?;
    let tab = browser
        .open_tab(
            vaider_browser::Viewport::default(),
            vaider_browser::UrlPolicy::for_page("http://127.0.0.1/")?,
        )
        .await?;
    let took = started.elapsed();
    tab.close().await;
    browser.close().await;
    Ok(took)
}

fn peak_rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kib| kib / 1024.0)
}

#[tokio::main]
async fn main() -> Result<()> {
    let runs: usize = std::env::args()
        .skip_while(|a| a != "--runs")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(7);
    ensure!(
        project()
            .join("node_modules/@playwright/test/cli.js")
            .is_file(),
        "run `npm ci` in tests/playwright-project first"
    );
    let base_url = serve_app().await?;
    let (workspace, data, scratch) = (
        tempfile::tempdir()?,
        tempfile::tempdir()?,
        tempfile::tempdir()?,
    );
    write_plan(workspace.path(), &base_url)?;
    let (with_video, without_video) = (engine(data.path(), true)?, engine(data.path(), false)?);
    let baseline = peak_rss_mib();
    // One of each first, unmeasured: the disk cache and Chromium's first start.
    playwright(&base_url, scratch.path())?;
    vaider_run(&with_video, workspace.path()).await?;
    let (mut alone, mut video, mut plain, mut starts, mut launches) =
        (vec![], vec![], vec![], vec![], vec![]);
    for _ in 0..runs {
        alone.push(playwright(&base_url, scratch.path())?);
        let (took, start) = vaider_run(&with_video, workspace.path()).await?;
        video.push(took);
        starts.push(start);
        plain.push(vaider_run(&without_video, workspace.path()).await?.0);
        launches.push(browser_start().await?);
    }
    let peak = peak_rss_mib();
    let (a, v, p) = (Spread::of(&alone), Spread::of(&video), Spread::of(&plain));
    let mut table = Table::new(&["measure", "median", "min", "max"]);
    for (name, s) in [
        ("`npx playwright test`, the same 10 steps", a),
        ("`run_test_plan`, video on (the default)", v),
        ("`run_test_plan`, video off", p),
        (
            "  of which: browser start and first page",
            Spread::of(&starts),
        ),
        (
            "browser start alone (launch to a blank tab)",
            Spread::of(&launches),
        ),
    ] {
        table.row(&[name, &ms(s.median), &ms(s.min), &ms(s.max)]);
    }
    println!("A 10-step scripted plan on the shop app, {runs} runs each\n");
    println!("{}", table.finish());
    println!(
        "run_test_plan against Playwright (medians): video on {} ({}), video off {} ({}); target: no slower.",
        ms(v.median), verdict(v.median <= a.median), ms(p.median), verdict(p.median <= a.median)
    );
    println!(
        "Vaider's peak memory (VmHWM, Chromium aside): {peak:.1} MiB, {:.1} MiB at start.",
        baseline
    );
    Ok(())
}
