//! What an agent reads first in a validation's `errors`: Playwright's own verdict and why,
//! before Vaider's rubric. A setup failure (the config does not load, a missing dependency,
//! Playwright's video recorder) is named as the setup failure it is, with its fix; failing
//! tests are named with Playwright's message, their spec line and the page snapshot Playwright
//! wrote beside the failure (`error-context.md`).

use std::path::Path;

use crate::report::{strip_ansi, Report, TestReport};

/// The most failing tests named one by one.
const MAX_NAMED: usize = 5;
/// The longest excerpt of one message or page snapshot.
const MAX_EXCERPT: usize = 400;

/// Playwright's verdict, to put first, and whether the run failed before any test could.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdict {
    pub causes: Vec<String>,
    /// Playwright could not run the tests (not a browser or a test problem).
    pub setup_failed: bool,
}

/// Reads the verdict from the report, else (no report: Playwright stopped before its
/// reporters) from the runner's stderr.
pub fn read(report: &Report, stderr: &str, project_dir: &Path, no_report: bool) -> Verdict {
    setup_failure(report, stderr, no_report).unwrap_or_else(|| failed_tests(report, project_dir))
}

/// The run failed before any test could: Playwright's video recorder is missing, or no test
/// ran and Playwright (or, without a report, its stderr) says why.
fn setup_failure(report: &Report, stderr: &str, no_report: bool) -> Option<Verdict> {
    let messages: Vec<&str> = report
        .errors
        .iter()
        .map(String::as_str)
        .chain(
            report
                .tests
                .iter()
                .filter_map(|t| Some(t.error.as_ref()?.message.as_str())),
        )
        .chain(no_report.then_some(stderr))
        .collect();
    if let Some(message) = messages.iter().find(|m| is_recorder_missing(m)) {
        return Some(Verdict {
            causes: vec![format!(
                "Playwright's video recorder (ffmpeg) is not installed, and the project records video (use.video): run `npx playwright install ffmpeg`, or link a system ffmpeg where Playwright looks for it, or turn video off. Playwright said: {}",
                excerpt(message)
            )],
            setup_failed: true,
        });
    }
    let ran = report
        .tests
        .iter()
        .filter(|t| t.status != "skipped")
        .count();
    if ran > 0 {
        return None;
    }
    let reason = report
        .errors
        .first()
        .map(String::as_str)
        .or_else(|| no_report.then(|| stderr_reason(stderr)).flatten())?;
    Some(Verdict {
        causes: vec![format!(
            "Playwright could not run the tests: {}",
            excerpt(reason)
        )],
        setup_failed: true,
    })
}

/// The failing tests: how many of how many, then the first few, each with its message, line
/// and page snapshot. None failed: no cause.
fn failed_tests(report: &Report, project_dir: &Path) -> Verdict {
    let failed: Vec<&TestReport> = report.tests.iter().filter(|t| t.failed()).collect();
    if failed.is_empty() {
        return Verdict::default();
    }
    let mut causes = vec![format!(
        "Playwright: {} of {} tests failed",
        failed.len(),
        report.tests.len()
    )];
    causes.extend(
        failed
            .iter()
            .take(MAX_NAMED)
            .map(|t| failure(t, project_dir)),
    );
    if failed.len() > MAX_NAMED {
        causes.push(format!(
            "... and {} more failed tests",
            failed.len() - MAX_NAMED
        ));
    }
    Verdict {
        causes,
        setup_failed: false,
    }
}

/// "Failed: <title> (<file:line>): <message> | page: <snapshot>".
fn failure(test: &TestReport, project_dir: &Path) -> String {
    let location = test
        .error
        .as_ref()
        .and_then(|e| e.location.as_deref())
        .map(|l| relative(l, project_dir))
        .unwrap_or_else(|| format!("{}:{}", test.file, test.line));
    let message = test
        .error
        .as_ref()
        .map(|e| excerpt(&e.message))
        .unwrap_or_else(|| format!("status {}", test.status));
    let mut text = format!("Failed: {} ({location}): {message}", test.title);
    if let Some(page) = test.attachment("error-context").find_map(page_snapshot) {
        text.push_str(&format!(" | page: {page}"));
    }
    text
}

/// A path inside the project, relative to it (as Playwright prints it).
fn relative(location: &str, project_dir: &Path) -> String {
    let dir = format!("{}/", project_dir.display());
    location.strip_prefix(&dir).unwrap_or(location).to_string()
}

/// The page snapshot Playwright wrote at the failure, on one line: the YAML of its "Page
/// snapshot" section, else the one a matcher attached to its error (the file's other text
/// repeats the error).
fn page_snapshot(path: &str) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let yaml = |from: &str| -> Option<String> {
        let lines: Vec<&str> = from
            .lines()
            .skip_while(|l| l.trim() != "```yaml")
            .skip(1)
            .take_while(|l| l.trim() != "```")
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect();
        (!lines.is_empty()).then(|| cut(&lines.join(" ")))
    };
    let page = text.find("# Page snapshot").map(|at| &text[at..]);
    page.and_then(yaml).or_else(|| yaml(&text))
}

/// The message up to Playwright's call log and code frame, its lines joined.
pub fn excerpt(message: &str) -> String {
    let text = strip_ansi(message);
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Call log:") && !l.starts_with("at ") && !l.starts_with('>'))
        .filter(|l| !l.is_empty())
        .collect();
    cut(&lines.join("; "))
}

fn cut(text: &str) -> String {
    if text.chars().count() <= MAX_EXCERPT {
        return text.to_string();
    }
    let head: String = text.chars().take(MAX_EXCERPT).collect();
    format!("{head}…")
}

/// Playwright's words when the recorder is missing (the launch error names its path).
fn is_recorder_missing(message: &str) -> bool {
    message.contains("ffmpeg")
        && (message.contains("Executable doesn't exist")
            || message.contains("npx playwright install"))
}

/// From the first line naming an error, of a run that wrote no report (a config that does not
/// load): the whole stderr when no line does.
fn stderr_reason(stderr: &str) -> Option<&str> {
    let text = stderr.trim();
    let at = text
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .chain([0])
        .filter(|&i| {
            text[i..]
                .lines()
                .next()
                .is_some_and(|l| l.contains("Error"))
        })
        .min()
        .unwrap_or(0);
    let reason = text[at..].trim();
    (!reason.is_empty()).then_some(reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_excerpt_stops_at_the_call_log() {
        let message = "Error: expect(locator).toHaveText(expected) failed\n\nLocator: locator('label')\nExpected: \"a\"\nReceived: \"b\"\n\nCall log:\n  - waiting\n";
        assert_eq!(
            excerpt(message),
            "Error: expect(locator).toHaveText(expected) failed; Locator: locator('label'); Expected: \"a\"; Received: \"b\""
        );
    }

    #[test]
    fn the_page_snapshot_is_its_own_section() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("error-context.md");
        let text = "# Instructions\n- Explain why\n\n# Error details\n```\nError: x\n```\n\n# Page snapshot\n\n```yaml\n- textbox \"What needs to be done?\"\n- listitem: Unit Testing\n```\n";
        std::fs::write(&path, text).unwrap();
        assert_eq!(
            page_snapshot(path.to_str().unwrap()).unwrap(),
            "- textbox \"What needs to be done?\" - listitem: Unit Testing"
        );
        // A matcher's own snapshot of its element, when the page's is not there.
        let text =
            "# Error details\n\n```\nError: x\n```\n\n```yaml\n- listitem: Unit Testing\n```\n";
        std::fs::write(&path, text).unwrap();
        assert_eq!(
            page_snapshot(path.to_str().unwrap()).unwrap(),
            "- listitem: Unit Testing"
        );
    }

    #[test]
    fn a_missing_recorder_is_a_setup_failure_that_names_ffmpeg() {
        let report = Report {
            errors: vec!["Error: browserContext.newPage: Executable doesn't exist at /c/ms-playwright/ffmpeg-1011/ffmpeg-linux\nRun npx playwright install ffmpeg".into()],
            ..Report::default()
        };
        let verdict = read(&report, "", Path::new("/p"), false);
        assert!(verdict.setup_failed);
        assert!(
            verdict.causes[0].contains("npx playwright install ffmpeg"),
            "{verdict:?}"
        );
    }

    #[test]
    fn a_config_that_does_not_load_is_named_from_stderr() {
        let stderr = "\nSyntaxError: Cannot use import statement outside a module\n    at x";
        let verdict = read(&Report::default(), stderr, Path::new("/p"), true);
        assert!(verdict.setup_failed);
        assert_eq!(
            verdict.causes,
            ["Playwright could not run the tests: SyntaxError: Cannot use import statement outside a module"]
        );
    }
}
