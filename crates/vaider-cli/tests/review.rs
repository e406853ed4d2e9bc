//! `vaider check` and `vaider review` on a real Playwright project: a `toHaveScreenshot`
//! failure becomes a pending change, `vaider check` fails on it (exit 1, JUnit XML read back
//! by a parser, a Markdown summary, GitHub annotations), approving it writes exactly the
//! snapshot file `--update-snapshots` would, and plain `npx playwright test` passes after.
//! The same suite run as two shards and merged gives the same pending changes.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::*;

const CONFIG: &str = "import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: './tests', workers: 1, retries: 0, reporter: 'list',
  use: { browserName: 'chromium', headless: true, viewport: { width: 320, height: 200 },
    launchOptions: { executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu'] } },
  projects: [{ name: 'chromium', use: {} }],
});
";

/// A spec whose screenshot follows $COLOUR (black unless set), or stays black.
fn spec(title: &str, snapshot: &str, follows_colour: bool) -> String {
    let text = format!(
        "import {{ test, expect }} from '@playwright/test';
test('{title}', async ({{ page }}) => {{
  await page.setContent(`<body style=\"margin:0;background:#fff\"><h1 style=\"color:${{process.env.COLOUR || 'black'}}\">{title}</h1></body>`);
  await expect(page).toHaveScreenshot('{snapshot}');
}});
"
    );
    match follows_colour {
        true => text,
        false => text.replace("process.env.COLOUR || 'black'", "'black'"),
    }
}

/// A Playwright project in a git repository, its snapshots written and committed; the home
/// page follows $COLOUR, the cart page too when `cart_follows`; `template` is the config's
/// `snapshotPathTemplate`, if any.
fn project(cart_follows: bool, template: Option<&str>) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("tests")).unwrap();
    let config = match template {
        Some(template) => CONFIG.replace(
            "testDir: './tests',",
            &format!("testDir: './tests', snapshotPathTemplate: '{template}',"),
        ),
        None => CONFIG.to_string(),
    };
    std::fs::write(root.join("playwright.config.mjs"), config).unwrap();
    std::fs::write(root.join("package.json"), "{\"type\":\"module\"}\n").unwrap();
    std::fs::write(
        root.join("tests/home.spec.mjs"),
        spec("Home", "home.png", true),
    )
    .unwrap();
    std::fs::write(
        root.join("tests/cart.spec.mjs"),
        spec("Cart", "cart.png", cart_follows),
    )
    .unwrap();
    let modules = vaider_test_support::playwright::project_dir().join("node_modules");
    assert!(
        modules.join("@playwright/test").is_dir(),
        "run `npm ci` in tests/playwright-project (scripts/test.sh does it)"
    );
    std::os::unix::fs::symlink(modules, root.join("node_modules")).unwrap();
    std::fs::write(root.join(".gitignore"), "node_modules\ntest-results\nblob-report*\nplaywright-report\n*.json\n*.xml\n*.md\n!package.json\n").unwrap();
    assert!(playwright(root, &["test", "--update-snapshots"], None)
        .status
        .success());
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(
        root,
        &[
            "-c",
            "user.name=Ada",
            "-c",
            "user.email=ada@example.com",
            "commit",
            "-qm",
            "snapshots",
        ],
    );
    dir
}

fn playwright(root: &Path, args: &[&str], colour: Option<&str>) -> std::process::Output {
    let mut command = Command::new("node");
    command
        .arg(root.join("node_modules/@playwright/test/cli.js"))
        .args(args)
        .current_dir(root)
        .env("FORCE_COLOR", "0")
        .env_remove("CI");
    match colour {
        Some(colour) => command.env("COLOUR", colour),
        None => command.env_remove("COLOUR"),
    };
    command.output().unwrap()
}

fn git(root: &Path, args: &[&str]) -> String {
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

fn vaider_in(sandbox: &Sandbox, root: &Path, args: &[&str]) -> std::process::Output {
    let mut command = sandbox.vaider();
    command
        .current_dir(root)
        .args(args)
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY");
    run(command)
}

/// The JSON report of a run, written to `name` in the project.
fn json_report(root: &Path, name: &str, colour: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["test", "--reporter=json"];
    args.extend_from_slice(extra);
    let output = playwright(root, &args, Some(colour));
    let path = root.join(name);
    std::fs::write(&path, &output.stdout).unwrap();
    path
}

fn pending(sandbox: &Sandbox, root: &Path) -> Vec<serde_json::Value> {
    let output = vaider_in(sandbox, root, &["review", "list", "--json"]);
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_str(&stdout(&output)).unwrap()
}

/// The first thumbnail's address in a Markdown summary.
fn first_thumbnail(summary: &str) -> String {
    let start = summary.find("<img src=\"").expect("a thumbnail") + "<img src=\"".len();
    let end = summary[start..].find('"').unwrap() + start;
    summary[start..end].to_string()
}

/// A JUnit file read by a JUnit parser, as a CI's test report would read it: (tests, failures,
/// the failing cases' names) of its one suite.
fn junit_counts(path: &Path) -> (String, String, Vec<String>) {
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

#[test]
fn a_playwright_snapshot_failure_is_approved_into_exactly_its_snapshot_file() {
    let sandbox = Sandbox::new();
    let dir = project(false, None);
    let root = dir.path();
    let home = root.join("tests/home.spec.mjs-snapshots/home-chromium-linux.png");
    assert!(home.is_file());
    // The home page turns red; the cart page stays as it was.
    let report = json_report(root, "report.json", "red", &[]);

    let summary_file = sandbox.root.path().join("step-summary.md");
    let mut command = sandbox.vaider();
    command
        .current_dir(root)
        .args([
            "check",
            "--playwright",
            "report.json",
            "--no-model",
            "--junit",
            "junit.xml",
            "--summary",
            "summary.md",
        ])
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_STEP_SUMMARY", &summary_file)
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_REPOSITORY", "someone/app")
        .env("GITHUB_RUN_ID", "42");
    let output = run(command);
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    assert!(
        stdout(&output)
            .contains("::error file=tests/home.spec.mjs-snapshots/home-chromium-linux.png"),
        "{}",
        stdout(&output)
    );
    let (tests, failures, failing) = junit_counts(&root.join("junit.xml"));
    assert_eq!((tests.as_str(), failures.as_str()), ("1", "1"));
    assert_eq!(failing, ["home@chromium"]);
    // The summary file shows the pictures from beside it; GitHub's page, which shows only
    // https pictures, names them and the run that keeps them.
    let summary = std::fs::read_to_string(root.join("summary.md")).unwrap();
    let thumbnail = first_thumbnail(&summary);
    assert!(summary.contains("1 to review"), "{summary}");
    assert!(root.join(&thumbnail).is_file(), "{thumbnail} in {summary}");
    let on_github = std::fs::read_to_string(&summary_file).unwrap();
    assert!(!on_github.contains("<img"), "{on_github}");
    assert!(
        on_github.contains("`.vaider/local/review/")
            && on_github.contains("(https://github.com/someone/app/actions/runs/42)"),
        "{on_github}"
    );

    let changes = pending(&sandbox, root);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["baseline"], home.display().to_string());
    assert_eq!(changes[0]["status"], "changed");
    let id = changes[0]["id"].as_str().unwrap().to_string();

    // No terminal and no --yes: an agent's shell cannot approve by accident.
    let refused = vaider_in(&sandbox, root, &["review", "approve", &id]);
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("a person's"),
        "{}",
        stderr(&refused)
    );
    let approved = vaider_in(
        &sandbox,
        root,
        &[
            "review",
            "approve",
            &id,
            "--yes",
            "--reason",
            "red is the new look",
        ],
    );
    assert!(approved.status.success(), "{}", stderr(&approved));

    // Exactly that snapshot changed, and Playwright itself now passes.
    assert_eq!(
        git(root, &["diff", "--name-only"]).trim(),
        "tests/home.spec.mjs-snapshots/home-chromium-linux.png"
    );
    assert!(playwright(root, &["test"], Some("red")).status.success());
    let log = std::fs::read_to_string(root.join(".vaider/baselines/decisions.jsonl")).unwrap();
    assert!(
        log.contains("red is the new look") && log.contains("\"kind\":\"commandLine\""),
        "{log}"
    );

    // git sees the decisions log and the gitignore, never the local pending changes.
    let untracked = git(root, &["status", "--porcelain", "--untracked-files=all"]);
    assert!(
        untracked.contains(".vaider/baselines/decisions.jsonl"),
        "{untracked}"
    );
    assert!(!untracked.contains(".vaider/local"), "{untracked}");
    // A run without failures checks clean.
    let clean = json_report(root, "clean.json", "red", &[]);
    let output = vaider_in(
        &sandbox,
        root,
        &[
            "check",
            "--playwright",
            clean.to_str().unwrap(),
            "--no-model",
        ],
    );
    assert_eq!(output.status.code(), Some(0), "{}", stderr(&output));
    drop(report);
}

/// A validation whose test fails on `toHaveScreenshot` puts the snapshot up for review: the
/// result names the pending change, `vaider review list` shows it, and its approval writes the
/// snapshot file, so the test and the next validation pass.
#[test]
fn a_validations_failed_snapshot_is_pending_review_and_approving_it_makes_the_test_pass() {
    let sandbox = Sandbox::new();
    // A template relative to the config's folder: the validation's own config, written in its
    // run folder, must still compare with the project's file.
    let dir = project(false, Some("__screenshots__/{testFilePath}/{arg}{ext}"));
    let root = dir.path();
    let home = root.join("__screenshots__/home.spec.mjs/home.png");
    assert!(home.is_file());
    // The agent's change: the heading turns red.
    let spec_file = root.join("tests/home.spec.mjs");
    let spec = std::fs::read_to_string(&spec_file).unwrap();
    let red = spec.replace("process.env.COLOUR || 'black'", "'red'");
    assert_ne!(red, spec);
    std::fs::write(&spec_file, red).unwrap();
    let mut command = sandbox.vaider();
    command
        .current_dir(root)
        .args(["validate", "tests/home.spec.mjs", "--json"]);
    let output = run(command);
    assert_eq!(
        output.status.code(),
        Some(2),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    let result: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    let changes = result["data"]["snapshot_changes"].as_array().cloned();
    let changes = changes.unwrap_or_else(|| panic!("no snapshot_changes in {result:#}"));
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["snapshot"], home.display().to_string());
    assert_eq!(changes[0]["status"], "changed");
    assert!(changes[0]["changed_pixels"].as_u64().unwrap() > 0);
    let warnings = result["data"]["rubric_validation"]["warnings"].to_string();
    assert!(
        warnings.contains("1 screenshot (home) differs from its snapshot: pending review"),
        "{warnings}"
    );

    let id = changes[0]["id"].as_str().unwrap();
    let listed = pending(&sandbox, root);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["id"], id);
    let approve = ["review", "approve", id, "--yes", "--reason", "red it is"];
    let approved = vaider_in(&sandbox, root, &approve);
    assert!(approved.status.success(), "{}", stderr(&approved));
    assert_eq!(
        git(root, &["diff", "--name-only"]).trim(),
        "__screenshots__/home.spec.mjs/home.png\ntests/home.spec.mjs"
    );
    assert!(playwright(root, &["test"], None).status.success());
    // And so does the next validation, which compares with the same file.
    let mut again = sandbox.vaider();
    again
        .current_dir(root)
        .args(["validate", "tests/home.spec.mjs", "--json"]);
    let again = run(again);
    assert_eq!(again.status.code(), Some(0), "{}", stdout(&again));
    assert!(pending(&sandbox, root).is_empty());
}

#[test]
fn two_shards_merged_give_the_same_pending_changes_as_one_run() {
    let sandbox = Sandbox::new();
    let dir = project(
        true,
        Some("{testDir}/__screenshots__/{testFilePath}/{arg}{ext}"),
    );
    let root = dir.path();
    json_report(root, "whole.json", "red", &[]);
    let output = vaider_in(
        &sandbox,
        root,
        &["check", "--playwright", "whole.json", "--no-model"],
    );
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    let seen = |changes: Vec<serde_json::Value>| -> Vec<String> {
        let mut seen: Vec<String> = changes
            .iter()
            .map(|c| {
                format!(
                    "{} {} {}",
                    c["name"],
                    c["baseline"],
                    sha256_hex(Path::new(c["actual"].as_str().unwrap()))
                )
            })
            .collect();
        seen.sort();
        seen
    };
    let mut whole: Vec<String> = seen(pending(&sandbox, root));
    whole.sort();
    assert_eq!(whole.len(), 2);
    std::fs::remove_dir_all(root.join(".vaider/local")).unwrap();

    for shard in ["1/2", "2/2"] {
        let dir = format!("blob-report-{}", &shard[..1]);
        let mut command = Command::new("node");
        command
            .arg(root.join("node_modules/@playwright/test/cli.js"))
            .args(["test", "--reporter=blob", &format!("--shard={shard}")])
            .current_dir(root)
            .env("COLOUR", "red")
            .env("PLAYWRIGHT_BLOB_OUTPUT_DIR", root.join(&dir))
            .env_remove("CI");
        assert!(
            !command.output().unwrap().status.success(),
            "shard {shard} fails on its snapshot"
        );
    }
    std::fs::create_dir_all(root.join("blob-reports")).unwrap();
    for n in ["1", "2"] {
        for entry in std::fs::read_dir(root.join(format!("blob-report-{n}")))
            .unwrap()
            .flatten()
        {
            let name = format!("{n}-{}", entry.file_name().to_string_lossy());
            std::fs::copy(entry.path(), root.join("blob-reports").join(name)).unwrap();
        }
    }
    let merged = playwright(
        root,
        &["merge-reports", "--reporter", "json", "blob-reports"],
        None,
    );
    std::fs::write(root.join("merged.json"), &merged.stdout).unwrap();
    let output = vaider_in(
        &sandbox,
        root,
        &["check", "--playwright", "merged.json", "--no-model"],
    );
    assert_eq!(
        output.status.code(),
        Some(1),
        "{}{}",
        stdout(&output),
        stderr(&output)
    );
    let mut sharded: Vec<String> = seen(pending(&sandbox, root));
    sharded.sort();
    assert_eq!(
        sharded, whole,
        "the same snapshots with the same actual pictures"
    );
}

/// The same snapshot name in two test files, with the same picture: only the project's own
/// template tells them apart. The project's `expect.toHaveScreenshot.pathTemplate` wins over
/// the top-level `snapshotPathTemplate`, as in Playwright.
const TEMPLATE_CONFIG: &str = "import { defineConfig } from '@playwright/test';
export default defineConfig({
  testDir: './tests', snapshotDir: './snaps', workers: 1, retries: 0, reporter: 'list',
  snapshotPathTemplate: '{testDir}/__not_this_one__/{arg}{ext}',
  use: { browserName: 'chromium', headless: true, viewport: { width: 320, height: 200 },
    launchOptions: { executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu'] } },
  projects: [{ name: 'desktop chromium', use: {}, expect: { toHaveScreenshot: {
    pathTemplate: '{snapshotDir}/{platform}/{testFileDir}/{testFileBaseName}/{testName}/{arg}{-projectName}{ext}' } } }],
});
";

/// A spec in a describe block whose `total.png` follows $COLOUR when `follows_colour`.
fn total_spec(follows_colour: bool) -> String {
    let colour = match follows_colour {
        true => "${process.env.COLOUR || 'black'}",
        false => "black",
    };
    format!(
        "import {{ test, expect }} from '@playwright/test';
test.describe('total', () => {{
  test('shows the total', async ({{ page }}) => {{
    await page.setContent(`<body style=\"margin:0;background:#fff\"><h1 style=\"color:{colour}\">Total</h1></body>`);
    await expect(page).toHaveScreenshot('total.png');
  }});
}});
"
    )
}

#[test]
fn an_approval_writes_the_snapshot_the_projects_own_template_names() {
    let sandbox = Sandbox::new();
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("tests/shop")).unwrap();
    std::fs::write(root.join("playwright.config.mjs"), TEMPLATE_CONFIG).unwrap();
    std::fs::write(root.join("package.json"), "{\"type\":\"module\"}\n").unwrap();
    std::fs::write(root.join("tests/shop/cart.spec.mjs"), total_spec(false)).unwrap();
    std::fs::write(root.join("tests/shop/checkout.spec.mjs"), total_spec(true)).unwrap();
    let modules = vaider_test_support::playwright::project_dir().join("node_modules");
    std::os::unix::fs::symlink(modules, root.join("node_modules")).unwrap();
    std::fs::write(
        root.join(".gitignore"),
        "node_modules\ntest-results\nblob-report*\n*.json\n!package.json\n",
    )
    .unwrap();
    assert!(playwright(root, &["test", "--update-snapshots"], None)
        .status
        .success());
    let shots = root.join("snaps/linux/shop");
    let checkout = shots.join("checkout.spec/total-shows-the-total/total-desktop-chromium.png");
    let cart = shots.join("cart.spec/total-shows-the-total/total-desktop-chromium.png");
    assert!(
        checkout.is_file() && cart.is_file(),
        "Playwright wrote its snapshots where the template says"
    );
    assert_eq!(
        std::fs::read(&checkout).unwrap(),
        std::fs::read(&cart).unwrap()
    );
    git(root, &["init", "-q"]);
    git(root, &["add", "-A"]);
    git(
        root,
        &[
            "-c",
            "user.name=Ada",
            "-c",
            "user.email=ada@example.com",
            "commit",
            "-qm",
            "snapshots",
        ],
    );

    // The checkout turns red: a blob report (for a merged report) and the test-results folder.
    let mut command = Command::new("node");
    command
        .arg(root.join("node_modules/@playwright/test/cli.js"))
        .args(["test", "--reporter=blob"])
        .current_dir(root)
        .env("COLOUR", "red")
        .env_remove("CI");
    assert!(!command.output().unwrap().status.success());
    let merged = playwright(
        root,
        &["merge-reports", "--reporter", "json", "blob-report"],
        None,
    );
    std::fs::write(root.join("merged.json"), &merged.stdout).unwrap();

    for results in ["test-results", "merged.json"] {
        let output = vaider_in(
            &sandbox,
            root,
            &["check", "--playwright", results, "--no-model"],
        );
        assert_eq!(
            output.status.code(),
            Some(1),
            "{results}: {}",
            stderr(&output)
        );
        let changes = pending(&sandbox, root);
        assert_eq!(changes.len(), 1, "{results}: {changes:?}");
        assert_eq!(
            changes[0]["baseline"],
            checkout.display().to_string(),
            "{results}: the checkout's snapshot, not the cart's with the same picture"
        );
    }
    let id = pending(&sandbox, root)[0]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let approved = vaider_in(&sandbox, root, &["review", "approve", &id, "--yes"]);
    assert!(approved.status.success(), "{}", stderr(&approved));

    // Only that snapshot file changed, and plain Playwright passes with the new look.
    assert_eq!(
        git(root, &["diff", "--name-only"]).trim(),
        "snaps/linux/shop/checkout.spec/total-shows-the-total/total-desktop-chromium.png"
    );
    let untracked = git(root, &["status", "--porcelain", "--untracked-files=all"]);
    assert!(
        untracked
            .lines()
            .all(|l| l.contains(".vaider/") || l.starts_with(" M snaps/linux/shop/checkout.spec/")),
        "{untracked}"
    );
    let after = playwright(root, &["test"], Some("red"));
    assert!(
        after.status.success(),
        "{}",
        String::from_utf8_lossy(&after.stdout)
    );
}

/// A picture of `w`x`h` pixels of one colour, as PNG bytes.
fn png(w: u32, h: u32, rgb: [u8; 3]) -> Vec<u8> {
    let image = image::RgbImage::from_pixel(w, h, image::Rgb(rgb));
    let mut bytes = Vec::new();
    image
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .unwrap();
    bytes
}

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
        std::fs::write(&snapshot, png(40, 30, [255, 255, 255])).unwrap();
        let results = root.join(format!("test-results/app-{name}-chromium"));
        std::fs::create_dir_all(&results).unwrap();
        std::fs::write(
            results.join(format!("{name}-expected.png")),
            png(40, 30, [255, 255, 255]),
        )
        .unwrap();
        std::fs::write(
            results.join(format!("{name}-actual.png")),
            png(40, 30, colour),
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
    assert_ne!(snapshot(&order[0]), png(40, 30, [255, 255, 255]));
    assert_eq!(snapshot(&order[1]), png(40, 30, [255, 255, 255]));
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
