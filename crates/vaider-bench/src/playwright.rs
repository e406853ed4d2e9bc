//! `npx playwright test` as a user runs it, timed: the baseline the test-run benchmarks
//! (`vaider-validate-bench`, `vaider-qa-bench`) compare Vaider with.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};

/// Runs `npx playwright test ARGS --output OUTPUT` in `project` with `env`, its output
/// discarded; the wall time, or an error when the tests did not pass.
pub fn npx_test(
    project: &Path,
    args: &[&str],
    output: &Path,
    env: &[(&str, &str)],
) -> Result<Duration> {
    let started = Instant::now();
    let status = Command::new("npx")
        .args(["playwright", "test"])
        .args(args)
        .arg("--output")
        .arg(output)
        .envs(env.iter().copied())
        .current_dir(project)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .context("run npx (is Node installed?)")?;
    let took = started.elapsed();
    ensure!(status.success(), "npx playwright test {args:?} failed");
    Ok(took)
}
