//! `vaider check` and `vaider review` on a real Playwright project: a `toHaveScreenshot`
//! failure becomes a pending change, `vaider check` fails on it (exit 1, JUnit XML read back
//! by a parser, a Markdown summary, GitHub annotations), approving it writes exactly the
//! snapshot file `--update-snapshots` would, and plain `npx playwright test` passes after.
//! The same suite run as two shards and merged gives the same pending changes, and a
//! validation's failed snapshot enters the same loop.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::review::*;
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

/// The JSON report of a run, written to `name` in the project.
fn json_report(root: &Path, name: &str, colour: &str, extra: &[&str]) -> PathBuf {
    let mut args = vec!["test", "--reporter=json"];
    args.extend_from_slice(extra);
    let output = playwright(root, &args, Some(colour));
    let path = root.join(name);
    std::fs::write(&path, &output.stdout).unwrap();
    path
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
#[tokio::test(flavor = "multi_thread")]
async fn a_validations_failed_snapshot_is_pending_review_and_approving_it_makes_the_test_pass() {
    let fake = fake_gemini::FakeGemini::start().await;
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
        .args(["validate", "tests/home.spec.mjs", "--json"])
        .env("GEMINI_API_KEY", fake_gemini::FakeGemini::API_KEY)
        .env("VAIDER_GEMINI_BASE_URL", fake.base_url());
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
    // The model judged it, and what that cost is the validation's.
    let summary = changes[0]["summary"].as_str().unwrap_or_default();
    assert!(
        !summary.is_empty() && !summary.contains("could not judge"),
        "{summary}"
    );
    assert!(result["cost_usd"].as_f64().unwrap() > 0.0, "{result:#}");
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
