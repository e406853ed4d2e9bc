//! `vaider review` at a terminal (a person's y/n, nothing decided without one) and `vaider check`
//! on a project's pages: new and changed pages fail it, an approval passes it, a rejection
//! keeps the baseline.

mod common;

use std::path::Path;
use std::process::Command;

use common::review::*;
use common::*;
use vaider_test_support::pictures::solid_png;

/// Runs `vaider review` in a real pseudo-terminal (Python's pty module), answering each
/// "Approve?" with the next of `answers`; gives what the terminal showed.
fn review_at_a_terminal(sandbox: &Sandbox, root: &Path, answers: &[&str]) -> String {
    let script = r#"
import os, pty, sys
vaider, answers = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(vaider, [vaider, "review"])
seen = b""
def read():
    global seen
    try:
        chunk = os.read(fd, 4096)
    except OSError:
        return False
    seen += chunk
    return bool(chunk)
asked = 0
for answer in answers:
    while seen.count(b"Approve?") <= asked:
        if not read():
            break
    asked += 1
    os.write(fd, answer.encode() + b"\r")
while read():
    pass
_, status = os.waitpid(pid, 0)
sys.stdout.write(seen.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
"#;
    let vaider = sandbox.vaider();
    let mut command = Command::new("python3");
    command
        .args(["-c", script])
        .arg(vaider.get_program())
        .args(answers)
        .current_dir(root);
    for (key, value) in vaider.get_envs() {
        match value {
            Some(value) => command.env(key, value),
            None => command.env_remove(key),
        };
    }
    let output = command.output().unwrap();
    let shown = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "{shown}{}", stderr(&output));
    shown
}

#[test]
fn a_person_decides_at_a_terminal_and_nothing_is_decided_without_one() {
    let sandbox = Sandbox::new();
    let root = sandbox.work();
    // Two failed snapshots in a test-results folder: each a pending change.
    for (name, colour) in [("home", [200, 0, 0]), ("cart", [0, 0, 200])] {
        let snapshot = root.join(format!(
            "tests/app.spec.ts-snapshots/{name}-chromium-linux.png"
        ));
        std::fs::create_dir_all(snapshot.parent().unwrap()).unwrap();
        std::fs::write(&snapshot, solid_png(40, 30, [255, 255, 255])).unwrap();
        let results = root.join(format!("test-results/app-{name}-chromium"));
        std::fs::create_dir_all(&results).unwrap();
        std::fs::write(
            results.join(format!("{name}-expected.png")),
            solid_png(40, 30, [255, 255, 255]),
        )
        .unwrap();
        std::fs::write(
            results.join(format!("{name}-actual.png")),
            solid_png(40, 30, colour),
        )
        .unwrap();
    }
    let checked = vaider_in(
        &sandbox,
        &root,
        &["check", "--playwright", "test-results", "--no-model"],
    );
    assert_eq!(checked.status.code(), Some(1), "{}", stderr(&checked));
    assert_eq!(pending(&sandbox, &root).len(), 2);

    // No terminal: refused, naming the review page, and nothing decided.
    let refused = vaider_in(&sandbox, &root, &["review"]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("#/review") && stderr(&refused).contains("a person's"),
        "{}",
        stderr(&refused)
    );
    assert!(!root.join(".vaider/baselines/decisions.jsonl").exists());

    // At a terminal: the first approved, the second rejected, both logged as a terminal's.
    let order: Vec<String> = pending(&sandbox, &root)
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_string())
        .collect();
    let shown = review_at_a_terminal(&sandbox, &root, &["y", "n"]);
    assert_eq!(shown.matches("Approve?").count(), 2, "{shown}");
    assert!(pending(&sandbox, &root).is_empty());
    let log: Vec<serde_json::Value> =
        std::fs::read_to_string(root.join(".vaider/baselines/decisions.jsonl"))
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
    let decided: Vec<(String, String, String)> = log
        .iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_string(),
                r["action"].as_str().unwrap().to_string(),
                r["proof"]["kind"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        decided,
        [
            (
                order[0].clone(),
                "approved".to_string(),
                "terminal".to_string()
            ),
            (
                order[1].clone(),
                "rejected".to_string(),
                "terminal".to_string()
            ),
        ]
    );
    // The approved one's snapshot is its new picture; the rejected one's stays.
    let snapshot = |name: &str| {
        std::fs::read(root.join(format!(
            "tests/app.spec.ts-snapshots/{name}-chromium-linux.png"
        )))
        .unwrap()
    };
    assert_ne!(snapshot(&order[0]), solid_png(40, 30, [255, 255, 255]));
    assert_eq!(snapshot(&order[1]), solid_png(40, 30, [255, 255, 255]));
}

/// The app `vaider check` captures: `/cards` as served, its title `TITLE`.
fn cards_page(title: &'static str) -> impl Fn(&str) -> String + Send + Sync + 'static {
    move |_| {
        vaider_test_support::loopback::html(&format!(
            "<!doctype html><body style='margin:0;background:#fff'><h1>{title}</h1></body>"
        ))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn check_fails_on_new_and_changed_pages_and_passes_once_approved() {
    let sandbox = Sandbox::new();
    let root = sandbox.work();
    let (port, _) = vaider_test_support::loopback::listen(cards_page("Cards")).await;
    let (changed_port, _) = vaider_test_support::loopback::listen(cards_page("Cards!")).await;

    let missing = vaider_in(&sandbox, &root, &["check", "--no-model"]);
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        stderr(&missing).contains("vaider check --init"),
        "{}",
        stderr(&missing)
    );
    let init = vaider_in(&sandbox, &root, &["check", "--init"]);
    assert!(init.status.success(), "{}", stderr(&init));
    let written = std::fs::read_to_string(root.join(".vaider/check.toml")).unwrap();
    assert!(
        written.contains("[[page]]") && written.contains("# "),
        "{written}"
    );

    let check_file = |port: u16| {
        format!("[[page]]\nname = \"cards\"\nurl = \"http://127.0.0.1:{port}/cards\"\nviewport = \"400x300\"\n")
    };
    std::fs::write(root.join(".vaider/check.toml"), check_file(port)).unwrap();
    let new = vaider_in(
        &sandbox,
        &root,
        &["check", "--no-model", "--junit", "junit.xml"],
    );
    assert_eq!(new.status.code(), Some(1), "{}", stderr(&new));
    assert!(
        stdout(&new).contains("cards@400x300  new"),
        "{}",
        stdout(&new)
    );
    let (tests, failures, _) = junit_counts(&root.join("junit.xml"));
    assert_eq!((tests.as_str(), failures.as_str()), ("1", "1"));

    let updated = vaider_in(&sandbox, &root, &["check", "--no-model", "--update"]);
    assert_eq!(updated.status.code(), Some(0), "{}", stderr(&updated));
    assert!(root.join(".vaider/baselines/cards@400x300.png").is_file());
    let unchanged = vaider_in(
        &sandbox,
        &root,
        &["check", "--no-model", "--junit", "junit.xml"],
    );
    assert_eq!(unchanged.status.code(), Some(0), "{}", stderr(&unchanged));
    assert_eq!(junit_counts(&root.join("junit.xml")).1, "0");

    std::fs::write(root.join(".vaider/check.toml"), check_file(changed_port)).unwrap();
    let changed = vaider_in(
        &sandbox,
        &root,
        &["check", "--no-model", "--summary", "summary.md"],
    );
    assert_eq!(changed.status.code(), Some(1), "{}", stderr(&changed));
    let summary = std::fs::read_to_string(root.join("summary.md")).unwrap();
    assert!(summary.contains("changed: 1 regions"), "{summary}");
    let pending = pending(&sandbox, &root);
    assert_eq!(pending.len(), 1);
    let id = pending[0]["id"].as_str().unwrap();
    let rejected = vaider_in(
        &sandbox,
        &root,
        &[
            "review",
            "reject",
            id,
            "--yes",
            "--reason",
            "no exclamation marks",
        ],
    );
    assert!(rejected.status.success(), "{}", stderr(&rejected));
    let log = vaider_in(&sandbox, &root, &["review", "log"]);
    assert!(
        stdout(&log).contains("rejected cards@400x300"),
        "{}",
        stdout(&log)
    );
    // The history has the decisions too.
    let history = vaider_in(&sandbox, &root, &["history", "--json"]);
    assert!(
        stdout(&history).contains("review_decision"),
        "{}",
        stdout(&history)
    );
    // The baselines folder is committed; the rest of .vaider/ stays out of git.
    let ignore = std::fs::read_to_string(root.join(".vaider/.gitignore")).unwrap();
    assert!(ignore.contains("!baselines/**"), "{ignore}");
}
