//! The event files of a trace.zip read into a [`Raw`] timeline: `test.trace` for the steps,
//! the library's `*.trace` files for the frames and pages (and for the steps when a trace
//! has no `test.trace`: one recorded by `context.tracing` outside the test runner).

use std::path::Path;

use serde_json::Value;

use super::{error_message, Raw, RawFrame, RawStep, StepKind, MAX_STEPS};
use crate::trace::json_lines;
use crate::trace_zip::{TraceZipError, MAX_ENTRIES};

/// A frame entry's name longer than this is not Playwright's.
const MAX_ENTRY_NAME: usize = 512;
/// A frame wider or higher than this is not a screencast's.
const MAX_SIDE: u64 = 16_384;

pub(super) fn read(trace_zip: &Path) -> Result<Raw, TraceZipError> {
    let mut archive = crate::trace_zip::open(trace_zip)?;
    let names = archive.names();
    let mut raw = Raw::default();
    let has_test_trace = names.iter().any(|n| is_test_trace(n));
    // Steps from the runner's file when there is one; the library's otherwise.
    for name in names.iter().filter(|n| n.ends_with(".trace")) {
        let runner = is_test_trace(name);
        let steps = runner || !has_test_trace;
        archive.read_entry(name, |entry| {
            json_lines(entry, wanted, |event| {
                read_event(event, &mut raw, runner, steps);
            })
        })?;
    }
    Ok(raw)
}

fn is_test_trace(name: &str) -> bool {
    name == "test.trace" || name.ends_with("/test.trace")
}

/// DOM snapshots are most of a library trace's bytes and none of its timeline.
fn wanted(line: &[u8]) -> bool {
    !line.starts_with(br#"{"type":"frame-snapshot""#)
}

fn read_event(event: &Value, raw: &mut Raw, runner: bool, steps: bool) {
    match event["type"].as_str() {
        Some("context-options") => {
            let mono = event["monotonicTime"].as_f64();
            if runner {
                raw.test_start_ms = raw.test_start_ms.or(mono);
            }
            // Each file's wall clock minus its monotonic one: steps are put on the wall
            // clock the frames' swap times are on.
            if let (true, Some(mono), Some(wall)) = (steps, mono, event["wallTime"].as_f64()) {
                raw.steps_wall_offset = raw.steps_wall_offset.or(Some(wall - mono));
            }
        }
        Some("before") if steps => before(event, raw, runner),
        Some("after") if steps => after(event, raw),
        Some("screencast-frame") if !runner => frame(event, raw),
        Some("event") if !runner && event["method"] == "page" => {
            let (Some(time), Some(id)) = (event["time"].as_f64(), page_id(&event["params"])) else {
                return;
            };
            if raw.pages.len() < MAX_ENTRIES as usize {
                raw.pages.push((time, id));
            }
        }
        _ => {}
    }
}

fn before(event: &Value, raw: &mut Raw, runner: bool) {
    let Some(call) = event["callId"].as_str() else {
        return;
    };
    if raw.steps.len() >= MAX_STEPS || raw.by_call.contains_key(call) {
        return;
    }
    let method = event["method"].as_str().unwrap_or_default();
    let kind = match runner {
        true => StepKind::from_method(method),
        false if method == "expect" => StepKind::Expect,
        false => StepKind::Action,
    };
    let mut title = event["title"]
        .as_str()
        .or_else(|| event["apiName"].as_str())
        .map(str::to_string)
        .unwrap_or_else(|| format!("{}.{method}", event["class"].as_str().unwrap_or("")));
    if let Some(subtitle) = event["subtitle"].as_str().filter(|s| !s.is_empty()) {
        title = format!("{title} {subtitle}");
    }
    raw.by_call.insert(call.to_string(), raw.steps.len());
    raw.steps.push(RawStep {
        parent_call: event["parentId"].as_str().map(str::to_string),
        title: crate::trace::cut(title.trim()),
        kind: Some(kind),
        start_ms: event["startTime"].as_f64(),
        ..RawStep::default()
    });
}

fn after(event: &Value, raw: &mut Raw) {
    let Some(&index) = event["callId"].as_str().and_then(|c| raw.by_call.get(c)) else {
        return;
    };
    let step = &mut raw.steps[index];
    step.end_ms = step.end_ms.or(event["endTime"].as_f64());
    if step.error.is_none() && event["error"].is_object() {
        step.error = error_message(&event["error"]);
    }
}

/// `{"type":"screencast-frame","pageId":...,"file":"screencast/...jpeg","width":640,
/// "height":400,"timestamp":2972.5}`; before 1.5x, `"sha1"` named `resources/<sha1>`.
fn frame(event: &Value, raw: &mut Raw) {
    if raw.frames.len() >= MAX_ENTRIES as usize {
        return;
    }
    let entry = match (event["file"].as_str(), event["sha1"].as_str()) {
        (Some(file), _) => file.to_string(),
        (None, Some(sha1)) => format!("resources/{sha1}"),
        (None, None) => return,
    };
    let side = |key: &str| {
        event[key]
            .as_u64()
            .filter(|n| (1..=MAX_SIDE).contains(n))
            .map(|n| n as u32)
    };
    let (Some(time), Some(width), Some(height), Some(page)) = (
        event["timestamp"].as_f64(),
        side("width"),
        side("height"),
        page_id(event),
    ) else {
        return;
    };
    if entry.len() <= MAX_ENTRY_NAME {
        raw.frames.push(RawFrame {
            mono: time,
            swap_wall: event["frameSwapWallTime"].as_f64(),
            entry,
            width,
            height,
            page,
        });
    }
}

fn page_id(value: &Value) -> Option<String> {
    value["pageId"]
        .as_str()
        .filter(|id| id.len() <= MAX_ENTRY_NAME)
        .map(str::to_string)
}
