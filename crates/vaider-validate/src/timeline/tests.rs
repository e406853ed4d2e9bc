use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use zip::write::SimpleFileOptions;

use super::*;

/// A real trace: tests/playwright-project/tests/timeline.spec.mjs run by Playwright 1.65.1
/// (two steps painting the page red, blue, green; the second fails on a 1 s `expect`).
fn real_trace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/timeline.trace.zip")
}

fn titles(timeline: &Timeline) -> Vec<(usize, &str)> {
    let own = timeline.steps.iter().filter(|s| !s.setup);
    own.map(|s| (s.number.unwrap(), s.title.as_str())).collect()
}

#[test]
fn a_real_trace_gives_the_steps_in_order_with_the_failing_one() {
    let timeline = read_timeline(&real_trace()).unwrap();
    assert_eq!(timeline.clock, Clock::Video);
    assert_eq!(
        titles(&timeline),
        [
            (1, "paint red"),
            (2, "Set content"),
            (3, "Wait for timeout"),
            (4, "Evaluate"),
            (5, "Wait for timeout"),
            (6, "paint blue and fail"),
            (7, "Evaluate"),
            (8, "Click locator('#go')"),
            (9, "Wait for timeout"),
            (10, "Evaluate"),
            (11, "Expect \"toBeVisible\" locator('#missing')"),
        ]
    );
    let own: Vec<&Step> = timeline.steps.iter().filter(|s| !s.setup).collect();
    assert_eq!(own[0].kind, StepKind::Step);
    assert_eq!((own[1].kind, own[1].depth), (StepKind::Action, 1));
    assert_eq!(own[10].kind, StepKind::Expect);
    assert_eq!(
        timeline.steps[own[10].parent.unwrap()].title,
        "paint blue and fail"
    );
    // Start order, each ending after it starts, the children within their step.
    for pair in own.windows(2) {
        assert!(pair[0].start.unwrap() <= pair[1].start.unwrap(), "{pair:?}");
    }
    for step in &own {
        assert!(step.start.unwrap() <= step.end.unwrap(), "{step:?}");
    }
    assert!(own[5].start.unwrap() <= own[10].start.unwrap());
    assert!(own[10].end.unwrap() <= own[5].end.unwrap() + 0.001);
    // The expect waited its 1 s timeout.
    let waited = own[10].end.unwrap() - own[10].start.unwrap();
    assert!((0.95..2.0).contains(&waited), "{waited}");

    // Hooks, fixtures and Playwright's own attachment are kept, marked.
    let setup: Vec<&str> = timeline
        .steps
        .iter()
        .filter(|s| s.setup)
        .map(|s| s.title.as_str())
        .collect();
    for title in [
        "Before Hooks",
        "Fixture \"page\"",
        "Create page",
        "After Hooks",
    ] {
        assert!(setup.contains(&title), "{setup:?}");
    }
    assert!(setup.contains(&"Attach \"error-context\""), "{setup:?}");

    let failing = timeline.failing_step().unwrap();
    assert_eq!(failing.step.number, Some(11));
    assert_eq!(failing.within.unwrap().title, "paint blue and fail");
    let error = failing.step.error.as_deref().unwrap();
    assert!(
        error.starts_with("Error: expect(locator).toBeVisible() failed"),
        "{error}"
    );
    assert!(
        !error.contains('\u{1b}') && !error.contains("Call log"),
        "{error}"
    );
    let named = name_step(failing.step);
    assert!(
        named.starts_with("step 11 'Expect \"toBeVisible\" locator('#missing')', 00:0"),
        "{named}"
    );
}

#[test]
fn the_frames_start_the_clock_and_follow_the_paint() {
    let timeline = read_timeline(&real_trace()).unwrap();
    let frames: Vec<&Frame> = timeline.video_frames().collect();
    assert!(frames.len() >= 4, "{frames:?}");
    assert_eq!(frames[0].time, 0.0);
    assert!(frames.iter().all(|f| (f.width, f.height) == (640, 400)));
    assert!(frames
        .iter()
        .all(|f| f.entry.starts_with("screencast/page@")));
    assert!(frames.windows(2).all(|w| w[0].time <= w[1].time));
    // Each paint (an Evaluate) is followed by a new frame within 0.2 s.
    let paints = timeline.steps.iter().filter(|s| s.title == "Evaluate");
    for paint in paints {
        let end = paint.end.unwrap();
        let next = frames.iter().find(|f| f.time >= paint.start.unwrap());
        let next = next.unwrap_or_else(|| panic!("no frame after {paint:?}"));
        assert!(next.time - end < 0.2, "{paint:?} then {next:?}");
    }
}

#[test]
fn steps_are_named_with_their_video_time() {
    let mut step = Step {
        number: Some(3),
        title: "add the chair".into(),
        kind: StepKind::Step,
        depth: 0,
        parent: None,
        setup: false,
        start: Some(4.24),
        end: Some(5.0),
        error: None,
    };
    assert_eq!(name_step(&step), "step 3 'add the chair', 00:04.2");
    step.start = Some(61.96);
    assert_eq!(name_step(&step), "step 3 'add the chair', 01:02.0");
    step.start = None;
    assert_eq!(name_step(&step), "step 3 'add the chair'");
    step.number = None;
    step.kind = StepKind::Hook;
    step.title = "beforeEach hook".into();
    step.start = Some(0.0);
    assert_eq!(name_step(&step), "hook 'beforeEach hook', 00:00.0");
    assert_eq!(clock(-3.0), "00:00.0");
    assert_eq!(clock(3600.04), "60:00.0");
}

#[test]
fn the_step_list_shows_the_tests_own_steps() {
    let timeline = read_timeline(&real_trace()).unwrap();
    let list = timeline.step_list();
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), 11, "{list}");
    assert!(lines[0].starts_with("1. 00:0"), "{list}");
    assert!(lines[0].ends_with("step 'paint red'"), "{list}");
    assert!(lines[7].starts_with("  8. "), "{list}");
    assert!(
        lines[10].contains("expect 'Expect \"toBeVisible\""),
        "{list}"
    );
    assert!(
        lines[10].contains("— failed: Error: expect(locator)"),
        "{list}"
    );
    assert!(!list.contains("Before Hooks"), "{list}");
}

/// A zip of `entries` (name, text).
fn zip_of(path: &Path, entries: &[(&str, &str)]) {
    let mut zip = zip::ZipWriter::new(File::create(path).unwrap());
    for (name, text) in entries {
        zip.start_file(*name, SimpleFileOptions::default()).unwrap();
        zip.write_all(text.as_bytes()).unwrap();
    }
    zip.finish().unwrap();
}

#[test]
fn a_trace_without_the_runners_file_uses_the_librarys_actions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.zip");
    let library = r#"{"type":"event","time":900,"class":"BrowserContext","method":"page","params":{"pageId":"page@1"}}
{"type":"screencast-frame","pageId":"page@1","sha1":"abc.jpeg","width":800,"height":600,"timestamp":1000}
{"type":"before","callId":"call@1","startTime":1500,"apiName":"page.click","class":"Frame","method":"click"}
{"type":"after","callId":"call@1","endTime":1700,"error":{"error":{"message":"boom"}}}
{"type":"before","callId":"call@2","startTime":1800,"class":"Frame","method":"goto"}
"#;
    zip_of(&path, &[("trace.trace", library)]);
    let timeline = read_timeline(&path).unwrap();
    assert_eq!(timeline.clock, Clock::VideoArrival, "no swap times");
    assert_eq!(titles(&timeline), [(1, "page.click"), (2, "Frame.goto")]);
    assert_eq!(timeline.steps[0].start, Some(0.5));
    assert_eq!(timeline.steps[0].end, Some(0.7));
    assert_eq!(timeline.steps[1].end, None, "it never ended");
    assert_eq!(timeline.frames[0].entry, "resources/abc.jpeg");
    assert_eq!(
        timeline.failing_step().unwrap().step.error.as_deref(),
        Some("boom")
    );
    assert!(timeline.failing_step().unwrap().within.is_none());
}

/// A busy machine: the first frame reached Playwright 300 ms after Chromium showed it. The
/// video places frames by when they were shown, and so must the timeline.
#[test]
fn frames_are_placed_by_when_chromium_showed_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.zip");
    // Wall = monotonic + 1,000,000 in both files.
    let runner = r#"{"type":"context-options","origin":"testRunner","wallTime":1001000,"monotonicTime":1000}
{"type":"before","callId":"a","startTime":2000,"method":"pw:api","title":"Evaluate"}
{"type":"after","callId":"a","endTime":2010}
"#;
    let library = r#"{"type":"context-options","origin":"library","wallTime":1001000,"monotonicTime":1000}
{"type":"screencast-frame","pageId":"p","file":"a.jpeg","width":8,"height":8,"timestamp":1800,"frameSwapWallTime":1001500}
{"type":"screencast-frame","pageId":"p","file":"b.jpeg","width":8,"height":8,"timestamp":2030,"frameSwapWallTime":1002020}
"#;
    zip_of(&path, &[("test.trace", runner), ("1-trace.trace", library)]);
    let timeline = read_timeline(&path).unwrap();
    assert_eq!(timeline.clock, Clock::Video);
    let times: Vec<f64> = timeline.frames.iter().map(|f| f.time).collect();
    assert_eq!(times, [0.0, 0.52]);
    // The step (wall 1,002,000) is 0.5 s after the first frame was shown, just before the
    // frame it made; by arrival times it would be at 0.2.
    assert_eq!(timeline.steps[0].start, Some(0.5));
    assert_eq!(timeline.steps[0].end, Some(0.51));
}

#[test]
fn without_frames_the_clock_is_the_pages_or_the_tests() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.zip");
    let runner = r#"{"type":"context-options","origin":"testRunner","monotonicTime":100}
{"type":"before","callId":"a","startTime":300,"method":"test.step","title":"no page"}
{"type":"after","callId":"a","endTime":400}
"#;
    zip_of(&path, &[("test.trace", runner)]);
    let timeline = read_timeline(&path).unwrap();
    assert_eq!(timeline.clock, Clock::TestStart);
    assert_eq!(timeline.steps[0].start, Some(0.2));
    let page = r#"{"type":"event","time":250,"method":"page","params":{"pageId":"p"}}"#;
    zip_of(&path, &[("test.trace", runner), ("0-trace.trace", page)]);
    let timeline = read_timeline(&path).unwrap();
    assert_eq!(timeline.clock, Clock::PageCreated);
    assert_eq!(timeline.steps[0].start, Some(0.05));
}

#[test]
fn a_hostile_trace_is_read_without_panic_or_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.zip");
    let long = "t".repeat(5_000);
    let hostile = format!(
        r#"not json
{{"type":"before"}}
{{"type":"before","callId":"x","parentId":"x","startTime":"soon","method":"test.step","title":"{long}"}}
{{"type":"before","callId":"y","parentId":"z","startTime":1e300,"method":"expect"}}
{{"type":"before","callId":"z","parentId":"y","startTime":-1e300,"method":"pw:api","title":7}}
{{"type":"before","callId":"x","startTime":5,"method":"hook","title":"again"}}
{{"type":"after","callId":"y","endTime":1e308,"error":"not an object"}}
{{"type":"after","callId":"z","error":{{"message":"\u001b[31m\u001b[39m"}}}}
{{"type":"after","callId":"nobody","endTime":1}}
[1,2,3]
"#
    );
    let frames = r#"{"type":"screencast-frame","pageId":"p","file":"../../etc/passwd","width":0,"height":400,"timestamp":1}
{"type":"screencast-frame","pageId":"p","file":"x.jpeg","width":99999999999,"height":400,"timestamp":1}
{"type":"screencast-frame","file":"x.jpeg","width":10,"height":10,"timestamp":1}
"#;
    zip_of(
        &path,
        &[("test.trace", &hostile), ("1-trace.trace", frames)],
    );
    let timeline = read_timeline(&path).unwrap();
    assert!(timeline.frames.is_empty(), "{:?}", timeline.frames);
    assert_eq!(timeline.steps.len(), 3, "{:?}", timeline.steps);
    assert_eq!(timeline.steps[0].title.chars().count(), 200);
    // A step cannot be its own parent, nor have a later one.
    let parents: Vec<Option<usize>> = timeline.steps.iter().map(|s| s.parent).collect();
    assert_eq!(parents, [None, None, Some(1)]);
    assert!(timeline.steps.iter().all(|s| s.error.is_none()));
    assert!(timeline.steps[1].start.map(clock).unwrap().len() > 5);
    let _ = timeline.step_list();
    assert!(timeline.steps.iter().all(|s| !name_step(s).is_empty()));

    // Not a zip, missing, and a zip bomb's sizes: errors, not panics.
    std::fs::write(&path, b"PK\x03\x04 and then nothing").unwrap();
    assert!(read_timeline(&path).is_err());
    assert!(read_timeline(&dir.path().join("missing.zip")).is_err());
    let empty = dir.path().join("empty.zip");
    zip_of(&empty, &[]);
    let nothing = read_timeline(&empty).unwrap();
    assert!(nothing.steps.is_empty() && nothing.failing_step().is_none());
}

#[test]
fn a_trace_with_endless_steps_keeps_a_bounded_number() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("trace.zip");
    let mut zip = zip::ZipWriter::new(File::create(&path).unwrap());
    zip.start_file("test.trace", SimpleFileOptions::default())
        .unwrap();
    for i in 0..(MAX_STEPS + 5_000) {
        writeln!(
            zip,
            r#"{{"type":"before","callId":"c{i}","parentId":"c{}","startTime":{i},"method":"test.step","title":"s"}}"#,
            i.saturating_sub(1)
        )
        .unwrap();
    }
    zip.finish().unwrap();
    let timeline = read_timeline(&path).unwrap();
    assert_eq!(timeline.steps.len(), MAX_STEPS);
    // Nested 20,000 deep: the depth is counted, never recursed.
    assert_eq!(timeline.steps.last().unwrap().depth, MAX_STEPS - 1);
    assert_eq!(timeline.step_list().lines().count(), MAX_STEPS);
}
