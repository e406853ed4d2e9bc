//! `vaider-validate-bench`: Vaider's overhead over `npx playwright test` alone on the same
//! spec (target: under 300 ms, the video analysis aside). The fixture project's passing test
//! (tests/playwright-project, the system Chromium) is run, in turns, by `npx playwright test`
//! with the project's own config and by `validate_test` (no expectations: no model call),
//! several times each; the medians are compared. `validate_test`'s own Playwright process
//! (with video, screenshots and trace on) is timed too, so the table shows what the recording
//! costs and what Vaider's own work (wrapper config, report, traces, screenshots, history)
//! costs.
//!
//! Run with `scripts/bench.sh --validate [--runs N]`, or `target/release/vaider-validate-bench`.
//! Needs `npm ci` in tests/playwright-project (scripts/test.sh does it).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{ensure, Result};
use vaider_bench::report::{ms, verdict, Spread, Table};
use vaider_core::analysis::Door;
use vaider_core::progress::NoProgress;
use vaider_core::{Config, Vaider};
use vaider_validate::{validate_test, Limits, ValidateRequest};

const SPEC: &str = "tests/login.spec.mjs";

fn fixture() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/playwright-project"
    ))
}

/// `npx playwright test SPEC` with the project's config, its results in a throwaway folder.
fn npx_alone(output: &std::path::Path) -> Result<Duration> {
    vaider_bench::playwright::npx_test(&fixture(), &[SPEC], output, &[])
}

#[tokio::main]
async fn main() -> Result<()> {
    let runs: usize = std::env::args()
        .skip_while(|a| a != "--runs")
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(7);
    ensure!(
        fixture()
            .join("node_modules/@playwright/test/cli.js")
            .is_file(),
        "run `npm ci` in tests/playwright-project first"
    );
    let data = tempfile::tempdir()?;
    let engine = Vaider::open(Config {
        data_dir: Some(data.path().to_path_buf()),
        ..Config::default()
    })?;
    let scratch = tempfile::tempdir()?;
    // One of each first, unmeasured: the disk cache and Chromium's first start.
    npx_alone(scratch.path())?;
    let (mut alone, mut vaider, mut runner) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..=runs {
        alone.push(npx_alone(scratch.path())?);
        let request = ValidateRequest {
            test_path: SPEC.into(),
            project_dir: None,
            grep: None,
            expectations: Vec::new(),
            limits: Limits::default(),
            timeout: None,
            provider: None,
            model: None,
            door: Door::Cli,
            base_dirs: vec![fixture()],
        };
        let started = Instant::now();
        let result = validate_test(&engine, request, &NoProgress).await;
        vaider.push(started.elapsed());
        ensure!(result.success, "validate_test failed: {:?}", result.error);
        let process = result.metadata["runner"]["duration_ms"]
            .as_u64()
            .unwrap_or(0);
        runner.push(Duration::from_millis(process));
        if let Some(dir) = result.data["artifacts_dir"].as_str() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
    // The first validate run warmed its own files: dropped like the first npx run.
    let (alone, vaider, runner) = (&alone[1..], &vaider[1..], &runner[1..]);
    let (a, v, r) = (Spread::of(alone), Spread::of(vaider), Spread::of(runner));
    // Signed: Vaider starts Playwright's cli.js with node directly, so it can beat npx.
    let overhead_ms = (v.median.as_secs_f64() - a.median.as_secs_f64()) * 1000.0;
    let own = v.median.saturating_sub(r.median);
    let mut table = Table::new(&["measure", "median", "min", "max"]);
    for (name, s) in [
        ("`npx playwright test` alone (project config)", a),
        ("`validate_test` (whole call)", v),
        ("its Playwright process (video, screenshots, trace on)", r),
    ] {
        table.row(&[name, &ms(s.median), &ms(s.min), &ms(s.max)]);
    }
    println!("validate_test on {SPEC}, {} runs each\n", alone.len());
    println!("{}", table.finish());
    println!(
        "Overhead over npx alone (medians): {overhead_ms:+.0} ms ({}; target under 300 ms). Vaider's own work beside the Playwright process: {}.",
        verdict(overhead_ms < 300.0),
        ms(own)
    );
    Ok(())
}
