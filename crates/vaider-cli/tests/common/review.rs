//! What the review tests share: git, `vaider` run in a project, its pending changes, and the
//! CI reports `vaider check` writes, read back as CI reads them.

use std::path::Path;
use std::process::Command;

use super::{run, stderr, stdout, Sandbox};

pub fn git(root: &Path, args: &[&str]) -> String {
    let output = Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn vaider_in(sandbox: &Sandbox, root: &Path, args: &[&str]) -> std::process::Output {
    let mut command = sandbox.vaider();
    command
        .current_dir(root)
        .args(args)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY");
    run(command)
}

pub fn pending(sandbox: &Sandbox, root: &Path) -> Vec<serde_json::Value> {
    let output = vaider_in(sandbox, root, &["review", "list", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_str(&stdout(&output)).unwrap()
}

/// The first thumbnail's address in a Markdown summary.
pub fn first_thumbnail(summary: &str) -> String {
    let start = summary.find("<img src=\"").expect("a thumbnail") + "<img src=\"".len();
    let end = summary[start..].find('"').unwrap() + start;
    summary[start..end].to_string()
}

/// A JUnit file read by a JUnit parser, as a CI's test report would read it: (tests, failures,
/// the failing cases' names) of its one suite.
pub fn junit_counts(path: &Path) -> (String, String, Vec<String>) {
    let file = std::fs::File::open(path).unwrap();
    let report = junit_parser::from_reader(std::io::BufReader::new(file))
        .unwrap_or_else(|e| panic!("{} is not JUnit XML: {e}", path.display()));
    assert_eq!(report.suites.len(), 1, "one suite: {report:?}");
    let suite = &report.suites[0];
    let failing = suite
        .cases
        .iter()
        .filter(|case| case.status.is_failure())
        .map(|case| case.original_name.clone())
        .collect();
    (suite.tests.to_string(), suite.failures.to_string(), failing)
}
