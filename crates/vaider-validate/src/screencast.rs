//! A video made of a trace's screencast frames, for a test that has none: Playwright records
//! video with its own ffmpeg build, and without it there is no video while the trace still
//! holds every frame the page showed. Each frame is shown from its time until the next, on
//! the [`Timeline`]'s clock, so time t in this video is time t in the steps. The JPEGs are
//! unpacked through [`crate::trace_zip`]; the system ffmpeg (started as vaider-media starts
//! it, at a lower priority, stopped at a timeout) joins them into a WebM.
//!
//! VP8 in WebM: Debian's ffmpeg has libvpx; WebM is what Playwright's own videos are, so
//! everything downstream (the scan's WebM path, providers taking `video/webm`) treats both
//! alike; VP8 in realtime mode encodes faster than VP9 (about 90 changing 720p frames a
//! second on one core here) and, with no B-frames, every frame keeps its own time. The frames
//! keep their timestamps to the millisecond (variable frame rate): a state shown for 30 ms is
//! in the video, and an unchanging page costs one frame, not 25 a second.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::timeline::{Frame, Timeline};
use crate::trace_zip::TraceZipError;

/// A frame bigger than this is not a screencast JPEG (a 4K frame is under 2 MB).
const MAX_FRAME_BYTES: u64 = 16 * 1024 * 1024;
/// Frame bytes unpacked for one video, at most.
const MAX_UNPACKED_BYTES: u64 = 1024 * 1024 * 1024;
/// How long the last frame stays on screen, at least (Playwright's recorder: 1 s).
const LAST_FRAME_SECONDS: f64 = 1.0;
/// The longest stretch the video runs past its last frame to reach the last step's end.
const MAX_TAIL_SECONDS: f64 = 600.0;
/// The longest video made: a frame later than this is left out.
const MAX_SECONDS: f64 = 4.0 * 3600.0;

/// The video made.
#[derive(Debug, Clone, PartialEq)]
pub struct Screencast {
    pub path: PathBuf,
    /// Seconds.
    pub duration: f64,
    /// Frames in it (the trace's, less any that were not JPEGs).
    pub frames: usize,
    pub width: u32,
    pub height: u32,
}

/// Why there is no screencast video.
#[derive(Debug, thiserror::Error)]
pub enum ScreencastError {
    #[error("the trace holds no screencast frame of the test's page (it opened none, or the trace was recorded with `screenshots: false`)")]
    NoFrames,
    #[error(transparent)]
    Trace(#[from] TraceZipError),
    #[error("ffmpeg is not installed, and the test's screencast is made into a video with it: install it (Debian/Ubuntu: `sudo apt-get install ffmpeg`; macOS: `brew install ffmpeg`)")]
    NoFfmpeg,
    #[error("ffmpeg could not make the screencast video: {0}")]
    Ffmpeg(String),
    #[error("ffmpeg took more than {0} s to make the screencast video and was stopped")]
    Timeout(u64),
    #[error("cannot write {path}: {source}", path = path.display())]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Writes the WebM of `timeline`'s first page's frames (read from `trace_zip`) at `out`.
/// It lasts until the last of the test's own steps ended, and at least a second past the
/// last frame.
pub async fn write_screencast(
    trace_zip: &Path,
    timeline: &Timeline,
    out: &Path,
) -> Result<Screencast, ScreencastError> {
    let frames: Vec<Frame> = timeline
        .video_frames()
        .filter(|f| f.time <= MAX_SECONDS)
        .cloned()
        .collect();
    let (width, height) = match frames.first() {
        Some(first) => (first.width, first.height),
        None => return Err(ScreencastError::NoFrames),
    };
    let folder = out.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(folder).map_err(io(folder))?;
    let work = tempfile::Builder::new()
        .prefix(".screencast-")
        .tempdir_in(folder)
        .map_err(io(folder))?;
    let unpacked = {
        let (zip, dir) = (trace_zip.to_path_buf(), work.path().to_path_buf());
        tokio::task::spawn_blocking(move || unpack(&zip, &frames, &dir))
            .await
            .map_err(|e| ScreencastError::Ffmpeg(format!("unpacking stopped: {e}")))??
    };
    let Some(last) = unpacked.last().map(|f| f.0) else {
        return Err(ScreencastError::NoFrames);
    };
    let end = video_end(timeline, last);
    let list = work.path().join("frames.ffconcat");
    let size = (width, height);
    std::fs::write(&list, concat_list(&unpacked, end, Timing::Exact)).map_err(io(&list))?;
    let exact = encode(&list, Timing::Exact, size, unpacked.len(), out).await;
    if let Err(ScreencastError::Ffmpeg(_)) = exact {
        // An ffmpeg older than 5.0 reads no `option` in a list: frames on 40 ms ticks.
        std::fs::write(&list, concat_list(&unpacked, end, Timing::Ticks)).map_err(io(&list))?;
        encode(&list, Timing::Ticks, size, unpacked.len(), out).await?;
    } else {
        exact?;
    }
    Ok(Screencast {
        path: out.to_path_buf(),
        duration: end,
        frames: unpacked.len(),
        width,
        height,
    })
}

/// The end: the last of the test's own steps' ends, but at least a second past the last
/// frame and at most ten minutes past it.
fn video_end(timeline: &Timeline, last_frame: f64) -> f64 {
    let steps_end = timeline
        .steps
        .iter()
        .filter(|s| !s.setup)
        .filter_map(|s| s.end)
        .fold(0.0, f64::max);
    steps_end
        .min(last_frame + MAX_TAIL_SECONDS)
        .max(last_frame + LAST_FRAME_SECONDS)
}

/// Unpacks each frame's JPEG into `dir` as `frame-000001.jpg`; a frame that is missing, too
/// big or not a JPEG is left out (the one before it lasts longer). (time, file name) each.
fn unpack(
    trace_zip: &Path,
    frames: &[Frame],
    dir: &Path,
) -> Result<Vec<(f64, String)>, ScreencastError> {
    let mut archive = crate::trace_zip::open(trace_zip)?;
    let mut kept = Vec::with_capacity(frames.len());
    let mut budget = MAX_UNPACKED_BYTES;
    for frame in frames {
        let name = format!("frame-{:06}.jpg", kept.len() + 1);
        let path = dir.join(&name);
        let mut written = 0;
        let read = archive.read_entry(&frame.entry, |entry| {
            written = copy_jpeg(entry, &path, budget.min(MAX_FRAME_BYTES))?;
            Ok(written)
        })?;
        if read {
            budget -= written;
            kept.push((frame.time, name));
        } else {
            let _ = std::fs::remove_file(&path);
        }
    }
    Ok(kept)
}

/// Copies a JPEG (it must start as one: ffmpeg is never handed another format to guess at)
/// of at most `limit` bytes; the bytes copied.
fn copy_jpeg(entry: &mut dyn Read, path: &Path, limit: u64) -> std::io::Result<u64> {
    let invalid = |why: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
    let mut head = [0u8; 3];
    entry.read_exact(&mut head)?;
    if head != [0xFF, 0xD8, 0xFF] {
        return Err(invalid("not a JPEG"));
    }
    let mut file = std::fs::File::create(path)?;
    file.write_all(&head)?;
    let rest = std::io::copy(&mut entry.take(limit), &mut file)?;
    if 3 + rest > limit {
        return Err(invalid("too big"));
    }
    Ok(3 + rest)
}

/// How precisely the frames keep their times.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Timing {
    /// To the millisecond: each JPEG is read at 1,000 frames a second (an `option` line,
    /// which ffmpeg reads from 5.0 on), so the joined stream's time base is 1/1000 s.
    Exact,
    /// On the 40 ms ticks of a JPEG's default 25 frames a second, as Playwright's own video.
    Ticks,
}

/// ffmpeg's concat list: each frame from its time until the next, the last until `end`.
/// Durations are differences of times rounded to the millisecond, so their sum never drifts
/// from the frames' own times.
fn concat_list(frames: &[(f64, String)], end: f64, timing: Timing) -> String {
    let ms = |t: f64| (t * 1000.0).round() as u64;
    let option = match timing {
        Timing::Exact => "option framerate 1000\n",
        Timing::Ticks => "",
    };
    let mut list = String::from("ffconcat version 1.0\n");
    for (index, (time, name)) in frames.iter().enumerate() {
        let next = frames.get(index + 1).map_or(end, |f| f.0);
        let shown = ms(next).saturating_sub(ms(*time)).max(1);
        let (seconds, millis) = (shown / 1000, shown % 1000);
        list.push_str(&format!(
            "file {name}\n{option}duration {seconds}.{millis:03}\n"
        ));
    }
    // The concat demuxer ignores the last duration unless the last file is named again.
    if let Some((_, name)) = frames.last() {
        list.push_str(&format!("file {name}\n{option}"));
    }
    list
}

/// Runs ffmpeg on the list, at a lower priority, stopped at a timeout that grows with the
/// frames (VP8 in realtime mode encodes well over 20 frames a second on one core).
async fn encode(
    list: &Path,
    timing: Timing,
    (width, height): (u32, u32),
    frames: usize,
    out: &Path,
) -> Result<(), ScreencastError> {
    let limit = 60 + frames as u64 / 20;
    let safe = match timing {
        Timing::Exact => "0",
        Timing::Ticks => "1",
    };
    let mut command = vaider_core::keyframes::ffmpeg_command();
    command
        .args(["-nostdin", "-hide_banner", "-loglevel", "error", "-y"])
        // The list is Vaider's, naming only the frames beside it; `-safe 0` only lets it set
        // their frame rate.
        .args(["-f", "concat", "-safe", safe, "-i"])
        .arg(list)
        .args(["-an", "-sn", "-dn", "-vf", &size_filter(width, height)])
        .args([
            "-fps_mode",
            "vfr",
            "-c:v",
            "libvpx",
            "-deadline",
            "realtime",
        ])
        .args(["-cpu-used", "8", "-crf", "10", "-b:v", "2M", "-f", "webm"])
        .arg(out)
        .stdin(std::process::Stdio::null());
    lower_priority(&mut command);
    let output = match tokio::time::timeout(Duration::from_secs(limit), command.output()).await {
        Err(_) => return Err(ScreencastError::Timeout(limit)),
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(ScreencastError::NoFfmpeg)
        }
        Ok(Err(e)) => return Err(ScreencastError::Ffmpeg(e.to_string())),
        Ok(Ok(output)) => output,
    };
    if output.status.success() {
        return Ok(());
    }
    let log = String::from_utf8_lossy(&output.stderr);
    let _ = std::fs::remove_file(out);
    Err(ScreencastError::Ffmpeg(crate::trace::cut(log.trim())))
}

/// Every frame at the first frame's size (a frame of another size is fitted and padded),
/// sides made even for yuv420p by a line of padding, not by cutting the page.
fn size_filter(width: u32, height: u32) -> String {
    let (even_w, even_h) = (width.div_ceil(2) * 2, height.div_ceil(2) * 2);
    format!(
        "scale={width}:{height}:force_original_aspect_ratio=decrease,\
pad={even_w}:{even_h}:0:0:white,format=yuv420p"
    )
}

/// The screencast is made while the server answers others: it runs at nice 10.
fn lower_priority(command: &mut tokio::process::Command) {
    #[cfg(unix)]
    // SAFETY: between fork and exec only setpriority runs, a single async-signal-safe
    // syscall that touches no memory of the parent.
    unsafe {
        command.pre_exec(|| {
            libc::setpriority(libc::PRIO_PROCESS, 0, 10);
            Ok(())
        });
    }
    #[cfg(not(unix))]
    let _ = command;
}

fn io(path: &Path) -> impl Fn(std::io::Error) -> ScreencastError + '_ {
    move |source| ScreencastError::Io {
        path: path.to_path_buf(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_frame_lasts_until_the_next_and_the_last_until_the_end() {
        let frames = vec![
            (0.0, "frame-000001.jpg".to_string()),
            (0.9666, "frame-000002.jpg".to_string()),
            (2.0204, "frame-000003.jpg".to_string()),
        ];
        assert_eq!(
            concat_list(&frames, 3.5, Timing::Ticks),
            "ffconcat version 1.0\nfile frame-000001.jpg\nduration 0.967\n\
file frame-000002.jpg\nduration 1.053\nfile frame-000003.jpg\nduration 1.480\n\
file frame-000003.jpg\n"
        );
        let exact = concat_list(&frames, 3.5, Timing::Exact);
        assert!(exact.starts_with(
            "ffconcat version 1.0\nfile frame-000001.jpg\noption framerate 1000\nduration 0.967\n"
        ));
        assert!(exact.ends_with("file frame-000003.jpg\noption framerate 1000\n"));
    }

    /// The fallback for an ffmpeg before 5.0 makes a video too, its frames on 40 ms ticks.
    #[tokio::test]
    async fn without_exact_timing_the_frames_fall_on_ticks() {
        let trace = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/timeline.trace.zip");
        let timeline = crate::timeline::read_timeline(&trace).unwrap();
        let frames: Vec<Frame> = timeline.video_frames().cloned().collect();
        let dir = tempfile::tempdir().unwrap();
        let unpacked = unpack(&trace, &frames, dir.path()).unwrap();
        assert_eq!(unpacked.len(), frames.len());
        let list = dir.path().join("frames.ffconcat");
        let end = video_end(&timeline, unpacked.last().unwrap().0);
        std::fs::write(&list, concat_list(&unpacked, end, Timing::Ticks)).unwrap();
        let out = dir.path().join("out.webm");
        encode(&list, Timing::Ticks, (640, 400), unpacked.len(), &out)
            .await
            .unwrap();
        let probe = std::process::Command::new("ffprobe")
            .args(["-v", "error", "-select_streams", "v", "-show_entries"])
            .args(["frame=pts_time", "-of", "csv=p=0"])
            .arg(&out)
            .output()
            .unwrap();
        let times: Vec<f64> = String::from_utf8_lossy(&probe.stdout)
            .lines()
            .filter_map(|l| l.trim().trim_end_matches(',').parse().ok())
            .collect();
        assert!(times.len() >= 3, "{times:?}");
        for time in &times {
            let ticks = time / 0.04;
            assert!((ticks - ticks.round()).abs() < 0.01, "{times:?}");
        }
        // Each frame on the first tick at or after its time, or the nearest.
        for ((time, _), shown) in unpacked.iter().zip(&times) {
            assert!(
                (shown - time).abs() <= 0.04 + 1e-9,
                "{time} shown at {shown}"
            );
        }
    }

    #[test]
    fn odd_sides_are_padded_not_cut() {
        assert_eq!(
            size_filter(641, 400),
            "scale=641:400:force_original_aspect_ratio=decrease,pad=642:400:0:0:white,format=yuv420p"
        );
    }
}
