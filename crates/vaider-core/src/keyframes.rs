//! Keyframes: turns a video into the few still frames where the screen changes (plus the first
//! and the last), each with its timestamp, for providers that take images but no video. A
//! 1 fps sampler would send 60 near-identical frames of a minute-long screen recording; this
//! sends one per change, so the description still follows the timeline at a fraction of the cost.
//!
//! ffmpeg decodes: once into tiny grey frames streamed through a pipe (memory stays flat
//! whatever the video's size) to find the changes, then once per chosen moment for a full
//! frame as PNG.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::io::AsyncReadExt;

use crate::error::{Result, VaiderError};

/// How keyframes are chosen.
#[derive(Debug, Clone)]
pub struct KeyframeOptions {
    /// Frames a second looked at for changes; a change shorter than 1/fps may be missed.
    pub sample_fps: f64,
    /// Share of the screen (0..1) that must differ from the last kept frame to count as a change.
    pub min_changed_share: f64,
    /// Never more than this many frames (the biggest changes are kept, with first and last).
    pub max_frames: usize,
    /// Width of the frames sent to the model (never upscaled).
    pub max_width: u32,
}

impl Default for KeyframeOptions {
    fn default() -> Self {
        KeyframeOptions {
            sample_fps: 4.0,
            min_changed_share: 0.004,
            max_frames: 30,
            max_width: 1280,
        }
    }
}

/// One chosen frame, written as PNG.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyframe {
    pub at_seconds: f64,
    pub path: PathBuf,
}

/// The size of the grey frames changes are measured on: small enough to be cheap, large enough
/// that a changed line of text shows.
const PROBE_WIDTH: usize = 160;
const PROBE_HEIGHT: usize = 90;
/// A pixel differs when its grey level moves by more than this (compression noise moves less).
const PIXEL_NOISE: u8 = 24;

/// Finds where the screen changes, without writing any frame. Returns timestamps in seconds.
pub async fn change_points(video: &Path, options: &KeyframeOptions) -> Result<Vec<f64>> {
    scan(video, options, None).await
}

/// Decodes the video once at `sample_fps`: tiny grey frames go through a pipe to find the
/// changes and, when `frames_dir` is given, every sampled frame is also written there as
/// `NNNNN.jpg` (numbered from 1) so the chosen ones need no second decoding pass.
async fn scan(
    video: &Path,
    options: &KeyframeOptions,
    frames_dir: Option<&Path>,
) -> Result<Vec<f64>> {
    let fps = options.sample_fps;
    let mut command = ffmpeg();
    command.args(["-nostdin", "-v", "error"]);
    if frames_dir.is_none() {
        // Detection alone tolerates the blockiness of skipping the deblocking filter.
        command.args(["-skip_loop_filter", "all"]);
    }
    command.arg("-i").arg(video).arg("-an");
    match frames_dir {
        None => {
            let filter =
                format!("fps={fps},scale={PROBE_WIDTH}:{PROBE_HEIGHT}:flags=area,format=gray");
            command.args(["-vf", &filter, "-f", "rawvideo", "-"]);
        }
        Some(dir) => {
            let graph = format!(
                "[0:v]fps={fps},split=2[a][b];[a]scale={PROBE_WIDTH}:{PROBE_HEIGHT}:flags=area,format=gray[probe];\
[b]scale='min({w},iw)':-2[full]",
                w = options.max_width
            );
            command
                .args([
                    "-filter_complex",
                    &graph,
                    "-map",
                    "[probe]",
                    "-f",
                    "rawvideo",
                    "pipe:1",
                ])
                .args(["-map", "[full]", "-q:v", "2"])
                .arg(dir.join("%05d.jpg"));
        }
    }
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(ffmpeg_error)?;
    let mut stdout = child
        .stdout
        .take()
        .ok_or_else(|| VaiderError::internal("read ffmpeg's frames", "no pipe"))?;
    let frame_len = PROBE_WIDTH * PROBE_HEIGHT;
    let mut frame = vec![0u8; frame_len];
    let mut kept: Option<Vec<u8>> = None;
    // (timestamp, changed share); the first frame counts as the largest change.
    let mut changes: Vec<(f64, f64)> = Vec::new();
    let mut index = 0usize;
    let mut last_at = 0.0;
    loop {
        match stdout.read_exact(&mut frame).await {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => return Err(VaiderError::internal("read ffmpeg's frames", e)),
        }
        let at = index as f64 / options.sample_fps;
        last_at = at;
        index += 1;
        let share = match &kept {
            None => f64::INFINITY,
            Some(previous) => changed_share(previous, &frame),
        };
        if share >= options.min_changed_share {
            changes.push((at, share));
            kept = Some(frame.clone());
        }
    }
    let output = child
        .wait_with_output()
        .await
        .map_err(|e| VaiderError::internal("run ffmpeg", e))?;
    if !output.status.success() || index == 0 {
        let reason = String::from_utf8_lossy(&output.stderr);
        return Err(VaiderError::InvalidPath {
            message: format!(
                "ffmpeg could not decode {} ({}). Check that the video plays; re-encode it if it does not.",
                video.display(),
                reason.lines().last().unwrap_or("no frames").trim()
            ),
        });
    }
    Ok(pick(changes, last_at, options.max_frames))
}

/// Keeps the first frame, the last, and the largest changes in between, in time order.
fn pick(mut changes: Vec<(f64, f64)>, last_at: f64, max_frames: usize) -> Vec<f64> {
    let max_frames = max_frames.max(2);
    if changes.len() + 1 > max_frames {
        let first = changes.remove(0);
        changes.sort_by(|a, b| b.1.total_cmp(&a.1));
        changes.truncate(max_frames - 2);
        changes.push(first);
        changes.sort_by(|a, b| a.0.total_cmp(&b.0));
    }
    let mut times: Vec<f64> = changes.into_iter().map(|(t, _)| t).collect();
    // The final screen is what a test ends on: always include it.
    if times.last().is_none_or(|t| (last_at - t).abs() > 1e-6) {
        times.push(last_at);
    }
    times
}

/// The share of probe pixels that differ by more than the noise level.
fn changed_share(a: &[u8], b: &[u8]) -> f64 {
    let changed = a
        .iter()
        .zip(b)
        .filter(|(x, y)| x.abs_diff(**y) > PIXEL_NOISE)
        .count();
    changed as f64 / a.len().max(1) as f64
}

/// Chooses the frames and keeps each as `out_dir/frame-<ms>.jpg`, in one decoding pass.
pub async fn extract(
    video: &Path,
    out_dir: &Path,
    options: &KeyframeOptions,
) -> Result<Vec<Keyframe>> {
    let all = out_dir.join(".sampled");
    std::fs::create_dir_all(&all)
        .map_err(|e| VaiderError::internal(format!("create {}", all.display()), e))?;
    let times = scan(video, options, Some(&all)).await;
    let mut frames = Vec::new();
    if let Ok(times) = &times {
        for at in times {
            let index = (at * options.sample_fps).round() as u64;
            let from = all.join(format!("{:05}.jpg", index + 1));
            let to = out_dir.join(format!("frame-{:08}ms.jpg", (at * 1000.0).round() as u64));
            if std::fs::rename(&from, &to).is_ok() {
                frames.push(Keyframe {
                    at_seconds: *at,
                    path: to,
                });
            }
        }
    }
    // The frames not chosen go; only the chosen ones stay with the interaction.
    let _ = std::fs::remove_dir_all(&all);
    times?;
    if frames.is_empty() {
        return Err(VaiderError::internal(
            "take frames with ffmpeg",
            "no frame was written",
        ));
    }
    Ok(frames)
}

/// `mm:ss.s`, as the model is told each frame's time.
pub fn timestamp(seconds: f64) -> String {
    let whole = seconds.max(0.0);
    let minutes = (whole / 60.0).floor() as u64;
    format!("{minutes:02}:{:04.1}", whole - minutes as f64 * 60.0)
}

/// ffmpeg from PATH, or `VAIDER_FFMPEG`. Killed if the analysis is dropped (timeout).
fn ffmpeg() -> tokio::process::Command {
    let program = std::env::var_os("VAIDER_FFMPEG").unwrap_or_else(|| "ffmpeg".into());
    let mut command = tokio::process::Command::new(program);
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
    use super::*;

    #[test]
    fn picking_keeps_first_last_and_biggest_changes_in_order() {
        let changes = vec![
            (0.0, f64::INFINITY),
            (1.0, 0.01),
            (2.0, 0.5),
            (3.0, 0.02),
            (4.0, 0.3),
        ];
        assert_eq!(pick(changes.clone(), 6.0, 4), vec![0.0, 2.0, 4.0, 6.0]);
        assert_eq!(pick(changes, 4.0, 10), vec![0.0, 1.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn timestamps_read_as_minutes_and_seconds() {
        assert_eq!(timestamp(0.0), "00:00.0");
        assert_eq!(timestamp(75.25), "01:15.2");
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

    #[test]
    fn noise_is_not_a_change() {
        let a = vec![100u8; 100];
        let mut b = a.clone();
        b[0] = 110; // compression noise
        assert_eq!(changed_share(&a, &b), 0.0);
        b[1] = 200; // a real change
        assert_eq!(changed_share(&a, &b), 0.01);
    }
}
