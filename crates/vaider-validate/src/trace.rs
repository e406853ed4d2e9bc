//! What the page itself logged, which Playwright's JSON report does not carry: console errors
//! and uncaught exceptions from each test's `trace.zip` (`*.trace`, JSON lines), and failed
//! requests from its network log (`*.network`); for a run stopped at its timeout, the same
//! files not yet zipped. Without any, the design's text rules on the runner's stderr. Every
//! message is cut to 200 characters. Event files are read as streams of lines, never whole.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;

use serde_json::Value;

use crate::trace_zip::TraceZipError;

/// The longest message kept (contracts.md §2).
pub const MAX_MESSAGE_CHARS: usize = 200;

/// A line of a trace's event file longer than this is skipped without being held: events
/// worth reading (console messages, failed requests) are short; DOM snapshots are not.
const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Bytes of a run's unzipped event files read, at most (a run stopped at its timeout).
const MAX_UNFINISHED_BYTES: u64 = 512 * 1024 * 1024;

/// The page's console errors and network failures.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PageEvents {
    pub console_errors: Vec<String>,
    pub network_failures: Vec<String>,
}

impl PageEvents {
    fn add_console(&mut self, text: &str) {
        push_unique(&mut self.console_errors, text);
    }

    fn add_network(&mut self, text: &str) {
        push_unique(&mut self.network_failures, text);
    }

    /// Adds another test's events.
    pub fn extend(&mut self, other: PageEvents) {
        for text in other.console_errors {
            self.add_console(&text);
        }
        for text in other.network_failures {
            self.add_network(&text);
        }
    }
}

fn push_unique(list: &mut Vec<String>, text: &str) {
    let text = cut(text.trim());
    if !text.is_empty() && !list.contains(&text) {
        list.push(text);
    }
}

/// At most 200 characters (not bytes: a message may be in any language).
pub fn cut(text: &str) -> String {
    text.chars().take(MAX_MESSAGE_CHARS).collect()
}

/// Reads one `trace.zip` within the limits of [`crate::trace_zip`]: only its event files
/// (`*.trace`, `*.network`) are unpacked, line by line.
pub fn read_trace(path: &Path) -> Result<PageEvents, TraceZipError> {
    let mut archive = crate::trace_zip::open(path)?;
    let mut events = PageEvents::default();
    // Chromium also logs a failed request to the console ("Failed to load resource:
    // net::ERR_..."): by the design's rule that is a network failure, not a console error, and
    // the network log already has it with its URL. Kept apart, used only when that log is empty.
    let mut console_network = PageEvents::default();
    for name in archive.names() {
        let kind = if name.ends_with(".trace") {
            Kind::Events
        } else if name.ends_with(".network") {
            Kind::Network
        } else {
            continue;
        };
        archive.read_entry(&name, |entry| {
            read_lines(&kind, entry, &mut events, &mut console_network)
        })?;
    }
    Ok(settle(events, console_network))
}

/// A run stopped at its timeout leaves its tests' events unzipped
/// (`.playwright-artifacts-*/traces/*.trace` and `*.network`: Playwright zips them when a test
/// ends). None when there are none.
pub fn read_unfinished(output_dir: &Path) -> Option<PageEvents> {
    let mut files = Vec::new();
    crate::screenshots::collect_files(output_dir, "trace", &mut files);
    crate::screenshots::collect_files(output_dir, "network", &mut files);
    if files.is_empty() {
        return None;
    }
    let (mut events, mut console_network) = (PageEvents::default(), PageEvents::default());
    let mut budget = MAX_UNFINISHED_BYTES;
    for (path, _) in files {
        let kind = match path.extension().and_then(|e| e.to_str()) {
            Some("trace") => Kind::Events,
            _ => Kind::Network,
        };
        let Ok(file) = std::fs::File::open(&path) else {
            continue;
        };
        let mut file = file.take(budget);
        let Ok(read) = read_lines(&kind, &mut file, &mut events, &mut console_network) else {
            continue;
        };
        budget = budget.saturating_sub(read);
    }
    Some(settle(events, console_network))
}

/// Reads JSON lines from `reader` as a stream; a line over [`MAX_LINE_BYTES`] is skipped
/// unheld. Returns the bytes read.
fn read_lines(
    kind: &Kind,
    reader: &mut dyn Read,
    events: &mut PageEvents,
    console_network: &mut PageEvents,
) -> std::io::Result<u64> {
    json_lines(
        reader,
        |_| true,
        |value| match kind {
            Kind::Events => read_event(value, events, console_network),
            Kind::Network => read_request(value, events),
        },
    )
}

/// Calls `each` with every line of `reader` that `wanted` keeps (asked of its raw bytes, so
/// that a DOM snapshot is not parsed only to be dropped) and that is a JSON value, as a
/// stream: a line over [`MAX_LINE_BYTES`] is skipped unheld. Returns the bytes read.
pub(crate) fn json_lines(
    reader: &mut dyn Read,
    wanted: impl Fn(&[u8]) -> bool,
    mut each: impl FnMut(&Value),
) -> std::io::Result<u64> {
    let mut reader = BufReader::new(reader);
    let mut line = Vec::new();
    let mut read = 0;
    loop {
        line.clear();
        let n = (&mut reader)
            .take(MAX_LINE_BYTES as u64 + 1)
            .read_until(b'\n', &mut line)?;
        if n == 0 {
            return Ok(read);
        }
        read += n as u64;
        if line.len() > MAX_LINE_BYTES && !line.ends_with(b"\n") {
            read += skip_line(&mut reader)?;
            continue;
        }
        if !wanted(&line) {
            continue;
        }
        if let Ok(value) = serde_json::from_slice::<Value>(&line) {
            each(&value);
        }
    }
}

/// Reads past the rest of a line without keeping it; the bytes read.
fn skip_line(reader: &mut impl BufRead) -> std::io::Result<u64> {
    let mut skipped = 0;
    loop {
        let buffer = reader.fill_buf()?;
        if buffer.is_empty() {
            return Ok(skipped);
        }
        let (used, done) = match buffer.iter().position(|b| *b == b'\n') {
            Some(at) => (at + 1, true),
            None => (buffer.len(), false),
        };
        reader.consume(used);
        skipped += used as u64;
        if done {
            return Ok(skipped);
        }
    }
}

/// The console's lines about failed requests count only when the network log had none.
fn settle(mut events: PageEvents, console_network: PageEvents) -> PageEvents {
    if events.network_failures.is_empty() {
        events.network_failures = console_network.network_failures;
    }
    events
}

enum Kind {
    Events,
    Network,
}

/// `{"type":"console","messageType":"error","text":...}` and uncaught exceptions
/// (`{"type":"event","method":"pageError",...}`).
fn read_event(value: &Value, events: &mut PageEvents, network: &mut PageEvents) {
    match value["type"].as_str() {
        Some("console") if value["messageType"] == "error" => match value["text"].as_str() {
            Some(text) if is_network_failure(text) => network.add_network(text),
            Some(text) => events.add_console(text),
            None => {}
        },
        Some("event") if value["method"] == "pageError" => {
            let error = &value["params"]["error"];
            let text = error["error"]["message"]
                .as_str()
                .or_else(|| error["message"].as_str())
                .or_else(|| error["value"].as_str());
            if let Some(text) = text {
                events.add_console(&format!("Uncaught {text}"));
            }
        }
        _ => {}
    }
}

/// A request with a failure text (`net::ERR_CONNECTION_REFUSED`, ...).
fn read_request(value: &Value, events: &mut PageEvents) {
    if value["type"] != "resource-snapshot" {
        return;
    }
    let snapshot = &value["snapshot"];
    let failure = snapshot["response"]["_failureText"]
        .as_str()
        .filter(|f| !f.is_empty());
    if let Some(failure) = failure {
        let method = snapshot["request"]["method"].as_str().unwrap_or("GET");
        let url = snapshot["request"]["url"].as_str().unwrap_or_default();
        events.add_network(&format!("{failure}: {method} {url}"));
    }
}

/// Whether a message is a network failure by the design's rule: it mentions `net::`, `ERR_`
/// or `timeout` (case-insensitive).
pub fn is_network_failure(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    ["net::", "err_", "timeout"]
        .iter()
        .any(|mark| lower.contains(mark))
}

/// The text rules, for a run without a trace: stderr lines that are network failures, and the
/// other lines that mention an error.
pub fn from_stderr(stderr: &str) -> PageEvents {
    let mut events = PageEvents::default();
    for line in stderr.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let line = crate::report::strip_ansi(line);
        if is_network_failure(&line) {
            events.add_network(&line);
        } else if line.to_ascii_lowercase().contains("error") {
            events.add_console(&line);
        }
    }
    events
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn console_errors_and_failed_requests_come_from_the_trace() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.zip");
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        let options = zip::write::SimpleFileOptions::default();
        zip.start_file("1-trace.trace", options).unwrap();
        let long = "x".repeat(300);
        writeln!(
            zip,
            r#"{{"type":"console","messageType":"log","text":"hello"}}"#
        )
        .unwrap();
        writeln!(
            zip,
            r#"{{"type":"console","messageType":"error","text":"{long}"}}"#
        )
        .unwrap();
        writeln!(zip, r#"{{"type":"event","method":"pageError","params":{{"error":{{"error":{{"message":"boom"}}}}}}}}"#).unwrap();
        writeln!(zip, r#"{{"type":"console","messageType":"error","text":"Failed to load resource: net::ERR_CONNECTION_REFUSED"}}"#).unwrap();
        writeln!(zip, "not json").unwrap();
        zip.start_file("1-trace.network", options).unwrap();
        writeln!(zip, r#"{{"type":"resource-snapshot","snapshot":{{"request":{{"method":"GET","url":"http://127.0.0.1:1/a"}},"response":{{"status":-1,"_failureText":"net::ERR_CONNECTION_REFUSED"}}}}}}"#).unwrap();
        writeln!(zip, r#"{{"type":"resource-snapshot","snapshot":{{"request":{{"url":"http://x/"}},"response":{{"status":200}}}}}}"#).unwrap();
        zip.finish().unwrap();
        let events = read_trace(&path).unwrap();
        assert_eq!(
            events.console_errors,
            ["x".repeat(200), "Uncaught boom".into()]
        );
        assert_eq!(
            events.network_failures,
            ["net::ERR_CONNECTION_REFUSED: GET http://127.0.0.1:1/a"]
        );
        assert!(read_trace(&dir.path().join("missing.zip")).is_err());
    }

    #[test]
    fn a_console_network_error_counts_when_the_network_log_has_none() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.zip");
        let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
        zip.start_file("0-trace.trace", zip::write::SimpleFileOptions::default())
            .unwrap();
        writeln!(
            zip,
            r#"{{"type":"console","messageType":"error","text":"GET /x net::ERR_FAILED"}}"#
        )
        .unwrap();
        zip.finish().unwrap();
        let events = read_trace(&path).unwrap();
        assert!(events.console_errors.is_empty());
        assert_eq!(events.network_failures, ["GET /x net::ERR_FAILED"]);
    }

    #[test]
    fn a_run_stopped_half_way_is_read_from_its_unzipped_events() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_unfinished(dir.path()).is_none());
        let traces = dir.path().join(".playwright-artifacts-0/traces");
        std::fs::create_dir_all(&traces).unwrap();
        std::fs::write(
            traces.join("a-recording1.trace"),
            r#"{"type":"console","messageType":"error","text":"boom"}"#,
        )
        .unwrap();
        std::fs::write(
            traces.join("a.network"),
            r#"{"type":"resource-snapshot","snapshot":{"request":{"url":"http://x/"},"response":{"_failureText":"net::ERR_FAILED"}}}"#,
        )
        .unwrap();
        let events = read_unfinished(dir.path()).unwrap();
        assert_eq!(events.console_errors, ["boom"]);
        assert_eq!(events.network_failures, ["net::ERR_FAILED: GET http://x/"]);
    }

    #[test]
    fn the_text_rules_sort_stderr_lines() {
        let events = from_stderr(
            "page.goto: net::ERR_NAME_NOT_RESOLVED\nWaiting: TIMEOUT 5000ms\nTypeError: boom\nfine\n",
        );
        assert_eq!(events.network_failures.len(), 2);
        assert_eq!(events.console_errors, ["TypeError: boom"]);
        assert!(is_network_failure("ERR_FAILED"));
        assert!(!is_network_failure("all good"));
        assert_eq!(cut(&"é".repeat(250)).chars().count(), 200);
    }
}
