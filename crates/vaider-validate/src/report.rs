//! Playwright's JSON report, read into what an agent acts on: per test its title, status,
//! duration, error message and location, retries and attachments. Messages lose their ANSI
//! colour codes (Playwright writes them even with NO_COLOR).

use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One test of the run, as its last attempt ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestReport {
    /// The describe blocks' titles and the test's, joined with " › ".
    pub title: String,
    /// The spec file, relative to the test folder.
    pub file: String,
    pub line: u64,
    pub project: String,
    /// The last attempt's: "passed", "failed", "timedOut", "skipped" or "interrupted".
    pub status: String,
    /// Playwright's verdict over all attempts: "expected", "unexpected", "flaky" or "skipped".
    pub outcome: String,
    pub duration_ms: u64,
    /// Attempts after the first.
    pub retries: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<TestError>,
    pub attachments: Vec<Attachment>,
    /// The attempts before the last, first first (a test retried: a flaky one passed on a
    /// later attempt).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub earlier_attempts: Vec<Attempt>,
}

/// One attempt of a retried test, as the report has it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    /// 0 for the first run, 1 for the first retry, …
    pub retry: u32,
    pub status: String,
    pub duration_ms: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<TestError>,
    pub attachments: Vec<Attachment>,
}

impl Attempt {
    /// The paths of its attachments called `name`.
    pub fn attachment<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.attachments
            .iter()
            .filter(move |a| a.name == name)
            .filter_map(|a| a.path.as_deref())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TestError {
    pub message: String,
    /// "file:line:column", when Playwright knows it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attachment {
    /// "screenshot", "video", "trace", "error-context", or the test's own name for it.
    pub name: String,
    pub content_type: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

/// A whole report: the tests, and the errors outside any test (a spec that does not load).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Report {
    pub tests: Vec<TestReport>,
    pub errors: Vec<String>,
}

/// The largest report read (a larger one is cut, and so not JSON: no report).
pub const MAX_REPORT_BYTES: u64 = 64 * 1024 * 1024;

impl Report {
    /// Reads a report file; a missing or unreadable one is an empty report (a run killed at
    /// its timeout writes none).
    pub fn read(path: &Path) -> Option<Report> {
        use std::io::Read;
        // A report is written by the run's reporter, which runs the project's code: bounded.
        let mut bytes = Vec::new();
        std::fs::File::open(path)
            .ok()?
            .take(MAX_REPORT_BYTES)
            .read_to_end(&mut bytes)
            .ok()?;
        let value: Value = serde_json::from_slice(&bytes).ok()?;
        Self::from_json(&value)
    }

    /// None when the value is not a Playwright JSON report.
    pub fn from_json(value: &Value) -> Option<Report> {
        let suites = value.get("suites")?.as_array()?;
        let mut report = Report::default();
        for suite in suites {
            read_suite(suite, &[], &mut report.tests);
        }
        report.errors = value["errors"]
            .as_array()
            .map(|errors| errors.iter().map(error_text).collect())
            .unwrap_or_default();
        Some(report)
    }

    pub fn attachments_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.tests.iter().flat_map(move |t| t.attachment(name))
    }
}

impl TestReport {
    /// The paths of this test's attachments with this name.
    pub fn attachment<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.attachments
            .iter()
            .filter(move |a| a.name == name)
            .filter_map(|a| a.path.as_deref())
    }

    pub fn failed(&self) -> bool {
        self.outcome == "unexpected"
    }
}

/// A suite's specs, then its nested suites (describe blocks); the file's own suite title is
/// the file name, which is not part of a test's title.
fn read_suite(suite: &Value, titles: &[String], tests: &mut Vec<TestReport>) {
    let mut titles = titles.to_vec();
    let title = suite["title"].as_str().unwrap_or_default();
    let is_file = suite["file"].as_str() == Some(title);
    if !title.is_empty() && !is_file {
        titles.push(title.to_string());
    }
    for spec in suite["specs"].as_array().into_iter().flatten() {
        for test in spec["tests"].as_array().into_iter().flatten() {
            tests.push(read_test(spec, test, &titles));
        }
    }
    for inner in suite["suites"].as_array().into_iter().flatten() {
        read_suite(inner, &titles, tests);
    }
}

fn read_test(spec: &Value, test: &Value, titles: &[String]) -> TestReport {
    let results = test["results"].as_array().cloned().unwrap_or_default();
    let last = results.last().cloned().unwrap_or(Value::Null);
    let mut full = titles.to_vec();
    full.push(spec["title"].as_str().unwrap_or_default().to_string());
    TestReport {
        title: full.join(" › "),
        file: spec["file"].as_str().unwrap_or_default().to_string(),
        line: spec["line"].as_u64().unwrap_or(0),
        project: test["projectName"].as_str().unwrap_or_default().to_string(),
        status: last["status"].as_str().unwrap_or("skipped").to_string(),
        outcome: test["status"].as_str().unwrap_or("skipped").to_string(),
        duration_ms: last["duration"].as_f64().unwrap_or(0.0).max(0.0) as u64,
        retries: results.len().saturating_sub(1) as u32,
        error: first_error(&last),
        attachments: attachments(&last),
        earlier_attempts: results
            .iter()
            .take(results.len().saturating_sub(1))
            .enumerate()
            .map(|(i, result)| Attempt {
                retry: result["retry"].as_u64().unwrap_or(i as u64) as u32,
                status: result["status"].as_str().unwrap_or_default().to_string(),
                duration_ms: result["duration"].as_f64().unwrap_or(0.0).max(0.0) as u64,
                error: first_error(result),
                attachments: attachments(result),
            })
            .collect(),
    }
}

fn attachments(result: &Value) -> Vec<Attachment> {
    result["attachments"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| Attachment {
            name: a["name"].as_str().unwrap_or_default().to_string(),
            content_type: a["contentType"].as_str().unwrap_or_default().to_string(),
            path: a["path"].as_str().map(str::to_string),
        })
        .collect()
}

fn first_error(result: &Value) -> Option<TestError> {
    let error = result["errors"]
        .as_array()
        .and_then(|e| e.first())
        .or_else(|| result.get("error"))?;
    let location = &error["location"];
    Some(TestError {
        message: error_text(error),
        location: location["file"].as_str().map(|file| {
            format!(
                "{file}:{}:{}",
                location["line"].as_u64().unwrap_or(0),
                location["column"].as_u64().unwrap_or(0)
            )
        }),
    })
}

fn error_text(error: &Value) -> String {
    let text = error["message"]
        .as_str()
        .or_else(|| error["value"].as_str())
        .unwrap_or_default();
    strip_ansi(text).trim().to_string()
}

/// Removes ANSI escape sequences (colours, cursor moves).
pub fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{1b}' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'[') {
            chars.next();
            // Parameters and intermediates, then one final byte in @..~.
            for c in chars.by_ref() {
                if ('@'..='~').contains(&c) {
                    break;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_suites_give_full_titles_and_the_last_attempt() {
        let report = json!({
            "suites": [{"title": "a.spec.ts", "file": "a.spec.ts", "specs": [], "suites": [{
                "title": "login", "file": "a.spec.ts", "specs": [{
                    "title": "shows the error", "file": "a.spec.ts", "line": 7,
                    "tests": [{"projectName": "chromium", "status": "unexpected", "results": [
                        {"status": "failed", "duration": 10, "errors": [{"message": "first"}]},
                        {"status": "failed", "duration": 12.7, "errors": [{
                            "message": "\u{1b}[31mError: expect(locator).toHaveText\u{1b}[39m",
                            "location": {"file": "/p/a.spec.ts", "line": 9, "column": 3}}],
                         "attachments": [{"name": "video", "contentType": "video/webm", "path": "/v.webm"}]}
                    ]}]
                }]
            }]}],
            "errors": [],
            "stats": {}
        });
        let report = Report::from_json(&report).unwrap();
        let test = &report.tests[0];
        assert_eq!(test.title, "login › shows the error");
        assert_eq!(test.retries, 1);
        assert_eq!(test.duration_ms, 12);
        assert!(test.failed());
        let error = test.error.as_ref().unwrap();
        assert_eq!(error.message, "Error: expect(locator).toHaveText");
        assert_eq!(error.location.as_deref(), Some("/p/a.spec.ts:9:3"));
        assert_eq!(test.attachment("video").collect::<Vec<_>>(), ["/v.webm"]);
    }

    #[test]
    fn anything_else_is_not_a_report() {
        assert!(Report::from_json(&json!({"config": {}})).is_none());
        assert!(Report::from_json(&json!([1, 2])).is_none());
        assert_eq!(strip_ansi("a\u{1b}[2mb\u{1b}"), "ab");
    }
}
