//! The timeline and the screencast on a real Playwright run: the fixture project's
//! timeline.spec.mjs (system Chromium, video and trace on) paints the page red, blue and
//! green in two steps and fails in the second. The steps' times must fall where the
//! recorded video changes colour, and the video made from the trace's screencast frames
//! must show the same colours at the same times. Colours are read from frames ffmpeg
//! extracts, below the page's button.

use std::path::{Path, PathBuf};
use std::process::Command;

use vaider_validate::screencast::{write_screencast, ScreencastError};
use vaider_validate::timeline::{name_step, read_timeline, Clock, Step, Timeline};

/// Playwright's video has a frame every 40 ms; a change shows within a frame or two.
const WITHIN: f64 = 0.2;

/// Runs the spec into a fresh output folder: its trace.zip and video.webm.
fn run_playwright(out: &Path) -> (PathBuf, PathBuf) {
    let project = vaider_test_support::playwright::project_dir();
    vaider_test_support::playwright::ensure_playwright_ffmpeg(&project);
    run_spec(&project, out, Command::new("node"))
}

fn run_spec(project: &Path, out: &Path, mut command: Command) -> (PathBuf, PathBuf) {
    let status = command
        .arg(project.join("node_modules/@playwright/test/cli.js"))
        .args([
            "test",
            "tests/timeline.spec.mjs",
            "--reporter=line",
            "--output",
        ])
        .arg(out)
        .current_dir(project)
        .env("FORCE_COLOR", "0")
        .env_remove("CI")
        .status()
        .unwrap();
    assert!(!status.success(), "the spec fails by design");
    let dir = std::fs::read_dir(out)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.join("trace.zip").is_file())
        .unwrap_or_else(|| panic!("no trace.zip in {}", out.display()));
    (dir.join("trace.zip"), dir.join("video.webm"))
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Colour {
    White,
    Red,
    Blue,
    Green,
    Other,
}

fn colour([r, g, b]: [u8; 3]) -> Colour {
    let high = |v: u8| v > 200;
    let low = |v: u8| v < 60;
    match (r, g, b) {
        _ if high(r) && high(g) && high(b) => Colour::White,
        _ if high(r) && low(g) && low(b) => Colour::Red,
        _ if low(r) && low(g) && high(b) => Colour::Blue,
        _ if low(r) && high(g) && low(b) => Colour::Green,
        _ => Colour::Other,
    }
}

/// Every decoded frame of `video` with its time and the colour of the page at (300, 300).
fn colours(video: &Path) -> Vec<(f64, Colour)> {
    let output = Command::new("ffmpeg")
        .args(["-hide_banner", "-nostdin", "-i"])
        .arg(video)
        .args(["-vf", "crop=8:8:300:300,scale=1:1,showinfo"])
        .args([
            "-fps_mode",
            "passthrough",
            "-f",
            "rawvideo",
            "-pix_fmt",
            "rgb24",
            "-",
        ])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let log = String::from_utf8_lossy(&output.stderr);
    let times: Vec<f64> = log
        .lines()
        .filter(|l| l.contains("Parsed_showinfo"))
        .filter_map(|l| {
            l.split("pts_time:")
                .nth(1)?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .collect();
    let pixels: Vec<Colour> = output
        .stdout
        .chunks_exact(3)
        .map(|p| colour([p[0], p[1], p[2]]))
        .collect();
    assert_eq!(times.len(), pixels.len(), "{log}");
    times.into_iter().zip(pixels).collect()
}

/// When `colour` first shows.
fn first_shown(frames: &[(f64, Colour)], wanted: Colour) -> f64 {
    frames
        .iter()
        .find(|(_, c)| *c == wanted)
        .unwrap_or_else(|| panic!("{wanted:?} never shows: {frames:?}"))
        .0
}

/// The colour shown at `time`: the last frame at or before it.
fn shown_at(frames: &[(f64, Colour)], time: f64) -> Colour {
    frames
        .iter()
        .take_while(|(t, _)| *t <= time + 1e-6)
        .last()
        .map_or(Colour::Other, |f| f.1)
}

/// The three paints (the Evaluate steps), in order: red, blue, green.
fn paints(timeline: &Timeline) -> Vec<&Step> {
    let paints: Vec<&Step> = timeline
        .steps
        .iter()
        .filter(|s| !s.setup && s.title == "Evaluate")
        .collect();
    assert_eq!(paints.len(), 3, "{:#?}", timeline.steps);
    paints
}

/// A paint's change shows in `frames` between its start and end (give or take a frame).
fn assert_paints_match(timeline: &Timeline, frames: &[(f64, Colour)], what: &str) {
    let expected = [Colour::Red, Colour::Blue, Colour::Green];
    for (paint, colour) in paints(timeline).into_iter().zip(expected) {
        let shown = first_shown(frames, colour);
        let (start, end) = (paint.start.unwrap(), paint.end.unwrap());
        assert!(
            start - WITHIN <= shown && shown <= end + WITHIN,
            "{what}: {colour:?} shows at {shown:.3}, {} ran {start:.3}-{end:.3}",
            name_step(paint)
        );
    }
}

#[tokio::test]
async fn the_steps_fall_where_the_video_changes_and_the_screencast_matches_it() {
    let out = tempfile::tempdir().unwrap();
    let (trace, video) = run_playwright(out.path());
    let timeline = read_timeline(&trace).unwrap();
    assert_eq!(timeline.clock, Clock::Video);

    // Named in order, with the failing one.
    let own: Vec<String> = timeline
        .steps
        .iter()
        .filter(|s| !s.setup)
        .map(|s| format!("{} {}", s.number.unwrap(), s.title))
        .collect();
    assert_eq!(own[0], "1 paint red");
    assert_eq!(own[5], "6 paint blue and fail");
    assert_eq!(own[7], "8 Click locator('#go')");
    let failing = timeline.failing_step().unwrap();
    assert_eq!(failing.step.number, Some(11));
    assert_eq!(failing.within.unwrap().title, "paint blue and fail");
    assert!(failing
        .step
        .error
        .as_deref()
        .unwrap()
        .contains("toBeVisible"));

    // Playwright's own video changes colour during the paint that makes the change.
    let recorded = colours(&video);
    assert_eq!(recorded[0].1, Colour::White, "{recorded:?}");
    assert_paints_match(&timeline, &recorded, "Playwright's video");

    // The screencast video: the same colours at the same times.
    let made = out.path().join("screencast.webm");
    let screencast = write_screencast(&trace, &timeline, &made).await.unwrap();
    assert_eq!((screencast.width, screencast.height), (640, 400));
    assert_eq!(screencast.frames, timeline.video_frames().count());
    let cast = colours(&made);
    assert_paints_match(&timeline, &cast, "the screencast");
    // Exactly: each of its frames is at a trace frame's time (to the millisecond).
    let times: Vec<f64> = timeline.video_frames().map(|f| f.time).collect();
    for (shown, _) in &cast[..cast.len() - 1] {
        let nearest = times
            .iter()
            .map(|t| (t - shown).abs())
            .fold(f64::MAX, f64::min);
        assert!(nearest < 0.002, "{shown} is at no frame's time: {times:?}");
    }
    // At each wait after a paint (the page still for 0.8 s), both videos show its colour.
    let waits: Vec<&Step> = timeline
        .steps
        .iter()
        .filter(|s| !s.setup && s.title == "Wait for timeout")
        .collect();
    for (wait, colour) in waits[1..].iter().zip([Colour::Red, Colour::Blue]) {
        let middle = (wait.start.unwrap() + wait.end.unwrap()) / 2.0;
        assert_eq!(shown_at(&cast, middle), colour, "{}", name_step(wait));
        assert_eq!(shown_at(&recorded, middle), colour, "{}", name_step(wait));
    }
    // At the failing step the page is green, and the screencast runs to its end.
    let expect_at = failing.step.start.unwrap() + 0.5;
    assert_eq!(shown_at(&cast, expect_at), Colour::Green);
    let last = cast.last().unwrap().0;
    assert!(
        last + 0.05 >= failing.step.end.unwrap(),
        "{last} {failing:?}"
    );
    let probed = vaider_core::keyframes::duration_seconds(&made)
        .await
        .unwrap();
    assert!(
        (probed - screencast.duration).abs() < WITHIN,
        "{probed} {screencast:?}"
    );
    // Nothing of the unpacked frames is left beside it.
    let left: Vec<String> = std::fs::read_dir(out.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(
        !left.iter().any(|n| n.starts_with(".screencast")),
        "{left:?}"
    );
}

/// Without Playwright's ffmpeg there is no video, but the trace's frames make one that
/// shows each paint during the step that made it.
#[tokio::test]
async fn without_playwrights_ffmpeg_the_screencast_is_the_video() {
    let out = tempfile::tempdir().unwrap();
    let no_browsers = tempfile::tempdir().unwrap();
    let project = vaider_test_support::playwright::project_dir();
    let mut command = Command::new("node");
    command
        .env("PLAYWRIGHT_BROWSERS_PATH", no_browsers.path())
        .env("TIMELINE_VIDEO", "off");
    let (trace, video) = run_spec(&project, out.path(), command);
    assert!(!video.exists());
    let timeline = read_timeline(&trace).unwrap();
    assert_eq!(timeline.clock, Clock::Video);
    assert_eq!(timeline.failing_step().unwrap().step.number, Some(11));
    let made = out.path().join("screencast.webm");
    write_screencast(&trace, &timeline, &made).await.unwrap();
    let cast = colours(&made);
    assert_eq!(cast[0].1, Colour::White, "{cast:?}");
    assert_paints_match(&timeline, &cast, "the screencast without a video");
}

#[tokio::test]
async fn a_screencast_without_ffmpeg_or_frames_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/timeline.trace.zip");
    let timeline = read_timeline(&trace).unwrap();
    // nextest runs each test in its own process: the variable is this test's alone.
    std::env::set_var("VAIDER_FFMPEG", "/nonexistent/ffmpeg");
    let out = dir.path().join("v.webm");
    let err = write_screencast(&trace, &timeline, &out).await.unwrap_err();
    std::env::remove_var("VAIDER_FFMPEG");
    assert!(matches!(err, ScreencastError::NoFfmpeg), "{err}");
    assert!(err.to_string().contains("apt-get install ffmpeg"), "{err}");

    // Frames whose JPEGs are missing or are not JPEGs: no frames, no video, nothing left.
    let hostile = dir.path().join("hostile.zip");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&hostile).unwrap());
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("1-trace.trace", options).unwrap();
    use std::io::Write;
    for (i, file) in ["a.jpeg", "playlist.jpeg", "missing.jpeg"]
        .iter()
        .enumerate()
    {
        writeln!(zip, r#"{{"type":"screencast-frame","pageId":"p","file":"{file}","width":64,"height":64,"timestamp":{i}}}"#).unwrap();
    }
    zip.start_file("a.jpeg", options).unwrap();
    zip.write_all(b"GIF89a not a jpeg").unwrap();
    zip.start_file("playlist.jpeg", options).unwrap();
    zip.write_all(b"#EXTM3U\nfile:///etc/passwd\n").unwrap();
    zip.finish().unwrap();
    let timeline = read_timeline(&hostile).unwrap();
    assert_eq!(timeline.frames.len(), 3);
    let err = write_screencast(&hostile, &timeline, &out)
        .await
        .unwrap_err();
    assert!(matches!(err, ScreencastError::NoFrames), "{err}");
    assert!(!out.exists());
    let left: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(left.len(), 1, "only the zip: {left:?}");
}
