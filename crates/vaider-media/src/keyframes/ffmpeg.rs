//! Running ffmpeg and ffprobe: the one ffmpeg pass that decodes a video for the scan (its
//! command line, its log and its failures), what ffmpeg says of its input (length, sound,
//! size), and the few questions asked of ffprobe (codec, duration). Every input is opened as
//! [`super::input`] says: local files only, with the demuxer of its checked container.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, BufReader};

use vaider_base::error::{Result, VaiderError};

use super::input::input_for;
use super::jpeg::Encoder;
use super::measure::{detector_scale, read_frames, Found};
use super::watch::{Watcher, Watching};
use super::KeyframeOptions;

/// [`decode`](super::decode) by ffmpeg, whatever the video.
pub(super) async fn decode_with_ffmpeg(
    video: &Path,
    options: &KeyframeOptions,
    encoder: Option<&mut Encoder>,
    watcher: Option<&mut Watcher<'_>>,
) -> Result<Found> {
    let Some(input) = input_for(video).options().map(<[_]>::to_vec) else {
        return Err(VaiderError::InvalidPath {
            message: format!(
                "{} is not a video Vaider reads (a playlist or list of other files is never followed); pass the video itself.",
                video.display()
            ),
        });
    };
    let mut command = scan_command(video, &input, options, encoder.is_some()).await;
    if watcher.is_some() {
        below_the_upload(&mut command);
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(ffmpeg_error)?;
    let (Some(stdout), Some(stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(VaiderError::internal("read ffmpeg's frames", "no pipe"));
    };
    // Read alongside the frames, so that a chatty ffmpeg never blocks on a full pipe; what
    // it says of its input (length, size) is passed on as soon as it says it.
    let (facts, input) = tokio::sync::watch::channel(InputFacts::default());
    let errors = tokio::spawn(read_log(stderr, facts));
    // The reader owns the pipe: if reading stops early, ffmpeg sees the pipe close and exits.
    let stream = BufReader::with_capacity(1 << 20, stdout);
    let watching = watcher.map(|watcher| Watching { watcher, input });
    let read = read_frames(stream, options, encoder, watching).await;
    if matches!(&read, Ok(found) if found.stopped) {
        // Stopped on purpose: what ffmpeg would decode next is not wanted.
        let _ = child.kill().await;
        let log = errors.await.unwrap_or_default();
        return read.map(|mut found| {
            found.input = InputFacts::from_log(&log);
            found
        });
    }
    let decoded = child.wait().await.is_ok_and(|status| status.success());
    let log = errors.await.unwrap_or_default();
    outcome(video, read, decoded, &log)
}

/// A watched scan runs beside an upload, which on a fast link (loopback, a LAN) is bound by the
/// CPU: ffmpeg decodes at a lower priority (nice 10 above Vaider's), so that it takes only the
/// CPU the upload leaves and never slows it.
fn below_the_upload(command: &mut tokio::process::Command) {
    #[cfg(unix)]
    // SAFETY: `nice` is a plain system call, safe between fork and exec; its failure (a limit
    // on priorities) only leaves ffmpeg at Vaider's.
    unsafe {
        command.pre_exec(|| {
            libc::nice(10);
            Ok(())
        });
    }
}

/// ffmpeg's log, whole, once it ends; what it says of its input is sent to `facts` line by
/// line until its output's description starts ("Stream mapping").
async fn read_log(
    stderr: tokio::process::ChildStderr,
    facts: tokio::sync::watch::Sender<InputFacts>,
) -> String {
    let mut lines = BufReader::new(stderr);
    let mut log = Vec::new();
    let mut describing = true;
    loop {
        match lines.read_until(b'\n', &mut log).await {
            Ok(0) | Err(_) => break,
            Ok(_) if describing => {
                let text = String::from_utf8_lossy(&log);
                describing = !text.contains("Stream mapping");
                let now = InputFacts::from_log(&text);
                facts.send_if_modified(|known| std::mem::replace(known, now) != now);
            }
            Ok(_) => {}
        }
    }
    String::from_utf8_lossy(&log).into_owned()
}

/// ffmpeg's command line for one pass: the video decoded at `sample_fps`, shrunk to the
/// detector's size (or, for frames to write, to `max_width`), as a Y4M stream on stdout.
async fn scan_command(
    video: &Path,
    input: &[std::ffi::OsString],
    options: &KeyframeOptions,
    writes_frames: bool,
) -> tokio::process::Command {
    let mut command = ffmpeg();
    // At `info`, ffmpeg describes its input (duration, streams) before decoding: the length
    // and the sound track come for free, with no ffprobe to start.
    command.args(["-nostdin", "-hide_banner", "-nostats", "-v", "info"]);
    // WebM holds only VP8, VP9 and AV1, which have no such frames: no need to ask ffprobe
    // (which takes longer to start than a short recording takes to scan).
    if !is_webm(video) && has_unreferenced_frames(video).await {
        // Frames that no other frame refers to (B-frames, here) need not be decoded at all,
        // which halves the decoding time. The frame shown for a sample is then at most a frame
        // or two older than its time: far less than the sampling interval. With frames
        // skipped, ffmpeg's frame threads mostly wait on each other (on 2 cores its default of
        // 3 threads took 2.0 s where 1 took 1.2), so one core is left to Vaider instead, for
        // reading and measuring the frames.
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        command.args(["-skip_frame", "noref"]);
        command.args(["-threads", &cores.saturating_sub(1).max(1).to_string()]);
    }
    // `round=up`: each sample shows the last frame at or before its time, so a change is
    // found at the first sample that shows it, and a frame the model is sent at that time
    // shows it too (by default ffmpeg takes the nearest frame, up to half an interval later).
    let scale = match writes_frames {
        true => format!("scale='min({},iw)':-2:flags=area", options.max_width),
        false => detector_scale(),
    };
    let filter = format!("fps={}:round=up,{scale}", options.sample_fps);
    command
        .args(input)
        .arg("-i")
        .arg(video)
        .args(["-an", "-sn", "-dn", "-vf", &filter])
        .args(["-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", "pipe:1"]);
    command
}

/// What a pass comes to: the frames read, with what ffmpeg said of its input, or why it could
/// not decode the video (a video that fails to decode is the caller's, not an internal error).
fn outcome(video: &Path, read: Result<Found>, decoded: bool, log: &str) -> Result<Found> {
    match read {
        Ok(mut found) if decoded => {
            found.input = InputFacts::from_log(log);
            Ok(found)
        }
        Err(e) if decoded && !matches!(e, VaiderError::InvalidPath { .. }) => Err(e),
        _ => Err(VaiderError::InvalidPath {
            message: format!(
                "ffmpeg could not decode {} ({}). Check that the video plays; re-encode it if it does not.",
                video.display(),
                failure_line(log)
            ),
        }),
    }
}

/// What ffmpeg said of its input before decoding it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub(super) struct InputFacts {
    /// The container's duration; none for a WebM written live.
    pub(super) duration: Option<f64>,
    pub(super) has_audio: bool,
    /// The video's own frame size (a scan decodes it shrunk, at the detector's size).
    pub(super) size: Option<(u32, u32)>,
}

impl InputFacts {
    /// Reads `Duration: 00:01:00.00, ...` and `Stream #0:1: Audio: ...` from ffmpeg's
    /// description of input #0 (what it says of its output comes after "Stream mapping").
    pub(super) fn from_log(log: &str) -> InputFacts {
        let mut facts = InputFacts::default();
        for line in log.lines().take_while(|l| !l.starts_with("Stream mapping")) {
            let line = line.trim();
            if let Some(rest) = line.strip_prefix("Duration: ") {
                facts.duration = rest.split(',').next().and_then(clock_seconds);
            } else if line.starts_with("Stream #0:") && line.contains(": Audio:") {
                facts.has_audio = true;
            } else if line.starts_with("Stream #0:") && line.contains(": Video:") {
                facts.size = facts.size.or_else(|| frame_size(line));
            }
        }
        facts
    }
}

/// The `1280x720` of a video stream's description (`Video: vp8, yuv420p, 1280x720, ...`).
fn frame_size(line: &str) -> Option<(u32, u32)> {
    line.split([',', ' ', '[']).find_map(|word| {
        let (w, h) = word.split_once('x')?;
        Some((w.parse().ok()?, h.parse().ok()?)).filter(|&(w, h)| w > 0 && h > 0)
    })
}

/// "00:01:02.50" in seconds.
fn clock_seconds(text: &str) -> Option<f64> {
    let mut seconds = 0.0;
    for part in text.trim().split(':') {
        seconds = seconds * 60.0 + part.parse::<f64>().ok()?;
    }
    (seconds.is_finite() && seconds > 0.0).then_some(seconds)
}

/// The line of ffmpeg's log that says why it failed: the last one that is not the
/// description of its input.
fn failure_line(log: &str) -> &str {
    log.lines()
        .rev()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("no frames")
}

/// Whether the file is WebM by its EBML header's DocType.
fn is_webm(video: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 64];
    let Ok(read) = std::fs::File::open(video).and_then(|mut f| f.read(&mut head)) else {
        return false;
    };
    let head = &head[..read];
    head.starts_with(&[0x1A, 0x45, 0xDF, 0xA3])
        && head
            .windows(6)
            .any(|w| w == [0x42, 0x82, 0x84, b'w', b'e', b'b'])
}

/// Whether the video's codec marks frames that nothing refers to, so that they can be skipped:
/// H.264 and HEVC with B-frames. Asked of ffprobe; when in doubt, every frame is decoded.
pub(super) async fn has_unreferenced_frames(video: &Path) -> bool {
    let Some(input) = input_for(video).options().map(<[_]>::to_vec) else {
        return false;
    };
    let output = ffprobe()
        .args(input)
        .args(["-v", "error", "-select_streams", "v:0"])
        .args([
            "-show_entries",
            "stream=codec_name,has_b_frames",
            "-of",
            "csv=p=0",
        ])
        .arg(video)
        .stdin(Stdio::null())
        .output()
        .await;
    let Ok(output) = output else { return false };
    let text = String::from_utf8_lossy(&output.stdout);
    let mut fields = text.trim().split(',');
    let codec = fields.next().unwrap_or_default();
    let b_frames: u32 = fields.next().and_then(|n| n.parse().ok()).unwrap_or(0);
    output.status.success() && matches!(codec, "h264" | "hevc") && b_frames > 0
}

/// A video's length in seconds, asked of ffprobe: the container's duration, else (a WebM
/// written live, which has none) the last video packet's time. None without ffprobe.
pub async fn duration_seconds(video: &Path) -> Option<f64> {
    let container = ffprobe_text(video, &["-show_entries", "format=duration"]).await;
    if let Some(seconds) = container.as_deref().and_then(parse_seconds) {
        return Some(seconds);
    }
    let packets = ffprobe_text(
        video,
        &["-select_streams", "v:0", "-show_entries", "packet=pts_time"],
    )
    .await?;
    packets
        .lines()
        .filter_map(parse_seconds)
        .max_by(f64::total_cmp)
}

async fn ffprobe_text(video: &Path, entries: &[&str]) -> Option<String> {
    let input = input_for(video).options()?.to_vec();
    let output = ffprobe()
        .args(input)
        .args(["-v", "error"])
        .args(entries)
        .args(["-of", "csv=p=0"])
        .arg(video)
        .stdin(Stdio::null())
        .output()
        .await
        .ok()?;
    output
        .status
        .success()
        .then(|| String::from_utf8_lossy(&output.stdout).into_owned())
}

fn parse_seconds(text: &str) -> Option<f64> {
    let seconds: f64 = text.trim().trim_end_matches(',').parse().ok()?;
    (seconds.is_finite() && seconds > 0.0).then_some(seconds)
}

/// ffmpeg as Vaider starts it everywhere, for a caller that makes a video rather than
/// reading one (a trace's screencast): from `VAIDER_FFMPEG` or PATH, with the tools'
/// environment, killed when dropped.
pub fn command() -> tokio::process::Command {
    ffmpeg()
}

/// ffmpeg from PATH, or `VAIDER_FFMPEG`. Killed if the analysis is dropped (timeout).
fn ffmpeg() -> tokio::process::Command {
    let program = std::env::var_os("VAIDER_FFMPEG").unwrap_or_else(|| "ffmpeg".into());
    let mut command = vaider_base::child_env::async_command(program);
    command.kill_on_drop(true);
    command
}

/// ffprobe beside the ffmpeg in use (`VAIDER_FFMPEG`), or from PATH.
fn ffprobe() -> tokio::process::Command {
    let program = match std::env::var_os("VAIDER_FFMPEG") {
        Some(ffmpeg) => {
            let ffmpeg = PathBuf::from(ffmpeg);
            let name = ffmpeg
                .file_name()
                .map(|n| n.to_string_lossy().replacen("ffmpeg", "ffprobe", 1))
                .unwrap_or_else(|| "ffprobe".into());
            ffmpeg.with_file_name(name).into_os_string()
        }
        None => "ffprobe".into(),
    };
    let mut command = vaider_base::child_env::async_command(program);
    command.kill_on_drop(true);
    command
}

fn ffmpeg_error(e: std::io::Error) -> VaiderError {
    if e.kind() == std::io::ErrorKind::NotFound {
        VaiderError::InvalidRequest(
            "ffmpeg is needed to turn the video into frames for a provider that takes no video, and it is not installed. \
Install it (Debian/Ubuntu: `sudo apt-get install ffmpeg`; macOS: `brew install ffmpeg`; Windows: `winget install ffmpeg`), \
or use a provider that takes video (Gemini)."
                .to_string(),
        )
    } else {
        VaiderError::internal("run ffmpeg", e)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{change_points, extract};
    use super::*;

    #[test]
    fn the_length_and_sound_come_from_ffmpegs_description_of_its_input() {
        let log = "Input #0, matroska,webm, from 'a.webm':\n  Duration: 00:01:02.50, start: 0.000000, bitrate: 62 kb/s\n  Stream #0:0: Video: vp8, yuv420p, 800x450\n  Stream #0:1: Audio: opus, 48000 Hz\nStream mapping:\n  Stream #0:1 -> #0:1 (opus -> pcm): Audio: pcm\n";
        let facts = InputFacts::from_log(log);
        assert_eq!(facts.duration, Some(62.5));
        assert!(facts.has_audio);
        let silent = log.replace("  Stream #0:1: Audio: opus, 48000 Hz\n", "");
        assert!(
            !InputFacts::from_log(&silent).has_audio,
            "the output's audio does not count"
        );
        let live = log.replace("00:01:02.50", "N/A");
        assert_eq!(InputFacts::from_log(&live).duration, None);
        assert_eq!(facts.size, Some((800, 450)), "the video's own size");
    }

    #[tokio::test]
    async fn a_missing_ffmpeg_says_how_to_install_it() {
        // Only this test sets the variable; nextest runs each test in its own process.
        std::env::set_var("VAIDER_FFMPEG", "/nonexistent/ffmpeg");
        let err = change_points(Path::new("/tmp/x.mp4"), &KeyframeOptions::default())
            .await
            .unwrap_err()
            .to_string();
        std::env::remove_var("VAIDER_FFMPEG");
        assert!(
            err.contains("apt-get install ffmpeg") && err.contains("brew install ffmpeg"),
            "{err}"
        );
    }
    /// A list naming another local video (ffmpeg's concat format), and an HLS playlist
    /// naming one by a file: URL: ffmpeg left to guess would play the other video.
    #[tokio::test]
    async fn a_playlist_naming_other_files_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let other = dir.path().join("other.webm");
        let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/media");
        std::fs::copy(shared.join("login-flow.webm"), &other).unwrap();
        let concat = dir.path().join("list.mp4");
        std::fs::write(&concat, "ffconcat version 1.0\nfile other.webm\n").unwrap();
        let hls = dir.path().join("playlist.webm");
        let playlist = format!(
            "#EXTM3U\n#EXT-X-TARGETDURATION:10\n#EXTINF:5.0,\nfile://{}\n#EXT-X-ENDLIST\n",
            other.display()
        );
        std::fs::write(&hls, playlist).unwrap();
        for list in [&concat, &hls] {
            let err = change_points(list, &KeyframeOptions::default())
                .await
                .unwrap_err();
            assert!(err.to_string().contains("never followed"), "{err}");
            assert_eq!(duration_seconds(list).await, None);
            assert!(!has_unreferenced_frames(list).await);
        }
        // The video itself still reads.
        assert!(change_points(&other, &KeyframeOptions::default())
            .await
            .is_ok());
        assert!(duration_seconds(&other).await.is_some());
    }

    #[tokio::test]
    async fn a_file_ffmpeg_cannot_decode_is_refused_and_leaves_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let video = dir.path().join("broken.mp4");
        std::fs::write(&video, b"\x00\x00\x00\x18ftypmp42 but nothing more").unwrap();
        let out = dir.path().join("frames");
        let err = extract(&video, &out, &KeyframeOptions::default())
            .await
            .unwrap_err();
        assert!(matches!(err, VaiderError::InvalidPath { .. }), "{err}");
        assert!(err.to_string().contains("could not decode"), "{err}");
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0);
    }
}
