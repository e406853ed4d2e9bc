//! Keyframes: turns a video into the few still frames where the screen changes (plus the first
//! and the last), each with its timestamp, for providers that take images but no video. A
//! 1 fps sampler would send 60 near-identical frames of a minute-long screen recording; this
//! sends one per change, so the description still follows the timeline at a fraction of the cost.
//!
//! One ffmpeg pass decodes the video at `sample_fps` and streams the frames uncompressed
//! (YUV 4:2:0, as a Y4M stream) through a pipe. Vaider shrinks each to a tiny colour probe to
//! find the changes ([`change`]: sharp changes per pixel, pale ones over an area), and
//! JPEG-encodes only the frames that can still be chosen: encoding every sampled frame cost
//! more than decoding the video. A few frames are held at a time, whatever the video's size.
//!
//! Here: the scan's three doors (ffmpeg, a raw video read directly, or an animated GIF, APNG
//! or WebP decoded in Rust) and the choice of frames. Beside it: running ffmpeg and ffprobe
//! (`ffmpeg`) on inputs opened safely (`input`), reading a raw video (`raw`), decoding an
//! animation (`animated`), reading the
//! Y4M stream (`y4m`), measuring each sample (`measure`), the probe and its changes
//! (`change`), telling a blink from a change (`blinks`) and encoding the kept frames (`jpeg`).

use std::path::{Path, PathBuf};

use vaider_base::error::{Result, VaiderError};

mod animated;
mod blinks;
mod change;
mod ffmpeg;
mod input;
mod jpeg;
mod measure;
mod raw;
mod watch;
mod y4m;

pub use blinks::{Change, Ongoing};
pub use ffmpeg::{command as ffmpeg_command, duration_seconds};
use ffmpeg::{decode_with_ffmpeg, InputFacts};
use jpeg::Encoder;
use measure::{detector_geometry, measure_frames, Found};
use watch::Watching;
pub use watch::{Seen, Watcher};
use y4m::{FrameReader, Geometry};

/// How keyframes are chosen.
#[derive(Debug, Clone)]
pub struct KeyframeOptions {
    /// Frames a second looked at for changes; a change shorter than 1/fps may be missed.
    pub sample_fps: f64,
    /// Probe pixels (each the average of a box of the frame, 160x90 of them at most) that must
    /// differ sharply (over pixelmatch's default threshold) from the last kept frame to count
    /// as a change; a pale change over a large area counts whatever this is.
    pub min_changed_pixels: usize,
    /// Never more than this many frames (the biggest changes are kept, with first and last).
    pub max_frames: usize,
    /// Width of the frames sent to the model (never upscaled).
    pub max_width: u32,
}

impl Default for KeyframeOptions {
    fn default() -> Self {
        KeyframeOptions {
            sample_fps: 4.0,
            // A count, not a share of the screen: a changed character of 12 px type moves one
            // probe pixel clearly, a 12 px spinner a few. A blinking caret is a change too,
            // told apart by its repeating (`blinks`).
            min_changed_pixels: 1,
            max_frames: 30,
            max_width: 1280,
        }
    }
}

/// One chosen frame, written as JPEG.
#[derive(Debug, Clone, PartialEq)]
pub struct Keyframe {
    pub at_seconds: f64,
    pub path: PathBuf,
}

/// Finds where the screen changes, without writing any frame. Returns timestamps in seconds.
pub async fn change_points(video: &Path, options: &KeyframeOptions) -> Result<Vec<f64>> {
    let chosen = scan(video, options, None).await?;
    Ok(chosen.into_iter().map(|(at, _)| at).collect())
}

/// Chooses the frames and keeps each as `out_dir/frame-<ms>ms.jpg`, in one decoding pass.
pub async fn extract(
    video: &Path,
    out_dir: &Path,
    options: &KeyframeOptions,
) -> Result<Vec<Keyframe>> {
    std::fs::create_dir_all(out_dir)
        .map_err(|e| VaiderError::internal(format!("create {}", out_dir.display()), e))?;
    scan(video, options, Some(out_dir))
        .await?
        .into_iter()
        .map(|(at, path)| {
            let path = path.ok_or_else(|| {
                VaiderError::internal(
                    "take frames with ffmpeg",
                    format!("the frame at {at} s was chosen but not written"),
                )
            })?;
            Ok(Keyframe {
                at_seconds: at,
                path,
            })
        })
        .collect()
}

/// One ffmpeg pass: every change, the number of samples and the last frame; changes that can
/// still be chosen go to `encoder` as they are found; `watcher` is told what the scan has seen
/// after each sample, and may stop it.
async fn decode(
    video: &Path,
    options: &KeyframeOptions,
    encoder: Option<&mut Encoder>,
    watcher: Option<&mut Watcher<'_>>,
) -> Result<Found> {
    // An animation is decoded here, frame by frame at its own times, never by ffmpeg.
    let path = video.to_path_buf();
    let animated = tokio::task::spawn_blocking(move || animated::AnimatedImage::open(&path))
        .await
        .map_err(|e| VaiderError::internal("open the animation", e))??;
    if let Some(animation) = animated {
        let full = animation.geometry();
        let out = match encoder {
            Some(_) => kept_geometry(full, options.max_width),
            None => detector_geometry(full),
        };
        let (input, all) = (animation.facts(), animation.reads_all());
        let incoming = animation.start(out);
        let mut found = measure_frames(out, incoming, options, encoder, None).await?;
        // The length the frames cover: all of the animation, or up to the last one read.
        found.sampled_seconds = match (all, input.duration) {
            (true, Some(whole)) => whole,
            _ => found.last_at,
        };
        found.input = input;
        return Ok(found);
    }
    // A scan of a raw video reads the sampled frames itself (`raw`); frames to write, and
    // every other video, go through ffmpeg.
    if encoder.is_none() {
        let path = video.to_path_buf();
        let opened = tokio::task::spawn_blocking(move || raw::RawVideo::open(&path)).await;
        if let Ok(Some(raw)) = opened {
            let input = raw.facts();
            let geometry = detector_geometry(raw.geometry());
            let incoming = raw.start(options.sample_fps, geometry);
            // The header said all there is to know of the input.
            let watching = watcher.map(|watcher| Watching {
                watcher,
                input: tokio::sync::watch::channel(input).1,
            });
            let mut found = measure_frames(geometry, incoming, options, None, watching).await?;
            found.input = input;
            return Ok(found);
        }
    }
    decode_with_ffmpeg(video, options, encoder, watcher).await
}

/// The size kept frames are written at: `max_width` wide at most, the height in proportion
/// and even, as ffmpeg's `scale=min(max_width,iw):-2` makes them.
fn kept_geometry(full: Geometry, max_width: u32) -> Geometry {
    let max_width = (max_width as usize).max(2);
    if full.width <= max_width {
        return full;
    }
    let height = full.height as f64 * max_width as f64 / full.width as f64;
    Geometry {
        width: max_width,
        height: ((height / 2.0).round() as usize * 2).max(2),
    }
}

/// Every change the detector finds in a video (none dropped, unlike the keyframes), for
/// planning what a model that takes video is sent.
#[derive(Debug, Clone, PartialEq)]
pub struct Timeline {
    /// Sample times (seconds) where the screen differs from the last change; the first frame
    /// (0 s) always counts. The repeats of a small spot that keeps changing are left out
    /// (see `ongoing`).
    pub changes: Vec<f64>,
    /// For each change, whether what changed has fine detail (text) that a frame must be
    /// sharp to show; for the first frame, whether the screen has any.
    pub detail: Vec<bool>,
    /// Small spots that kept changing (a blinking caret, a spinner): each is a change where
    /// it starts (unless it blinks) and where it stops, not at every repeat.
    pub ongoing: Vec<Ongoing>,
    /// Seconds between two samples: a change is seen at most this late.
    pub interval: f64,
    /// Samples decoded.
    pub samples: u64,
    /// Samples where much of the screen moved a little since the sample before (noise, or
    /// motion everywhere): when most do, changes cannot be told from noise.
    pub flickering_samples: u64,
    /// Samples decoded times the interval: the video's length as the detector saw it.
    pub sampled_seconds: f64,
    /// The container's duration, as ffmpeg read it; none for a WebM written live.
    pub duration: Option<f64>,
    /// The video has a sound track.
    pub has_audio: bool,
    pub width: u32,
    pub height: u32,
}

/// Finds every change in one decoding pass, writing no frame.
pub async fn timeline(video: &Path, options: &KeyframeOptions) -> Result<Timeline> {
    let found = decode(video, options, None, None).await?;
    Ok(timeline_of(found, options))
}

/// [`timeline`], telling `watcher` what the scan has seen after each sample. None when the
/// watcher stopped the scan before the end.
pub async fn watched_timeline(
    video: &Path,
    options: &KeyframeOptions,
    watcher: &mut Watcher<'_>,
) -> Result<Option<Timeline>> {
    let found = decode(video, options, None, Some(watcher)).await?;
    Ok((!found.stopped).then(|| timeline_of(found, options)))
}

fn timeline_of(found: Found, options: &KeyframeOptions) -> Timeline {
    Timeline {
        changes: found.changes.iter().map(|c| c.at).collect(),
        detail: found.changes.iter().map(|c| c.detail).collect(),
        ongoing: found.ongoing,
        interval: 1.0 / options.sample_fps,
        samples: found.frames,
        flickering_samples: found.flickering,
        sampled_seconds: found.sampled_seconds,
        duration: found.input.duration,
        has_audio: found.input.has_audio,
        // The video's own size, which decides how its clips are sent; the frames scanned
        // were shrunk to the detector's size.
        width: found
            .input
            .size
            .map_or(found.geometry.width as u32, |s| s.0),
        height: found
            .input
            .size
            .map_or(found.geometry.height as u32, |s| s.1),
    }
}

/// Decodes the video once at `sample_fps`, finds the changes and, when `out_dir` is given,
/// keeps the chosen frames there. Returns each chosen time with its file, if one was written.
async fn scan(
    video: &Path,
    options: &KeyframeOptions,
    out_dir: Option<&Path>,
) -> Result<Vec<(f64, Option<PathBuf>)>> {
    let mut encoder = out_dir.map(|dir| Encoder::new(dir, options.max_frames));
    let found = match decode(video, options, encoder.as_mut(), None).await {
        Ok(found) => found,
        Err(e) => {
            if let Some(encoder) = encoder {
                let _ = encoder.finish(&[]).await;
            }
            return Err(e);
        }
    };
    let last_index = found.frames - 1;
    let last_at = found.last_at;
    // The sample shown at a chosen time: a change's, or the last.
    let index_of = |at: f64| {
        found
            .changes
            .iter()
            .find(|c| (c.at - at).abs() < 1e-9)
            .map_or(last_index, |c| c.index)
    };
    // Only the changes the encoder kept can be chosen (it turned away the smallest while
    // the repeats of a blink, removed since, still counted).
    let changes = found
        .changes
        .iter()
        .filter(|c| encoder.as_ref().is_none_or(|e| e.has(c.index)))
        .map(|c| (c.at, c.share))
        .collect();
    let times = pick(changes, last_at, options.max_frames);
    let Some(mut encoder) = encoder else {
        return Ok(times.into_iter().map(|at| (at, None)).collect());
    };
    let chosen: Vec<u64> = times.iter().map(|t| index_of(*t)).collect();
    // The final screen is always chosen; it was encoded only if it was a change.
    if !encoder.has(last_index) {
        encoder
            .encode(last_index, last_at, found.last_frame, found.geometry)
            .await;
    }
    let mut written = encoder.finish(&chosen).await?;
    Ok(times
        .into_iter()
        .zip(chosen)
        .map(|(at, index)| (at, written.remove(&index)))
        .collect())
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

/// `mm:ss.s`, as the model is told each frame's time; `mm:ss.ss` when the hundredths matter
/// (samples are a quarter of a second apart: 01:15.25 is not 01:15.2).
pub fn timestamp(seconds: f64) -> String {
    let total = (seconds.max(0.0) * 100.0).round() as u64;
    let (minutes, hundredths) = (total / 6000, total % 6000);
    if hundredths % 10 == 0 {
        format!("{minutes:02}:{:04.1}", hundredths as f64 / 100.0)
    } else {
        format!("{minutes:02}:{:05.2}", hundredths as f64 / 100.0)
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
        assert_eq!(timestamp(75.25), "01:15.25");
        assert_eq!(timestamp(75.5), "01:15.5");
        assert_eq!(timestamp(59.999), "01:00.0");
    }

    /// A video made by ffmpeg from lavfi filters; `codec` args after the filter.
    fn make_video(dir: &Path, name: &str, source: &str, filter: &str, codec: &[&str]) -> PathBuf {
        let path = dir.join(name);
        let status = std::process::Command::new("ffmpeg")
            .args([
                "-v", "error", "-y", "-f", "lavfi", "-i", source, "-vf", filter,
            ])
            .args(codec)
            .arg(&path)
            .status()
            .expect("ffmpeg (scripts/test.sh installs it)");
        assert!(status.success());
        path
    }

    /// Whatever the codec (VP9 has no frames to skip, H.264 with B-frames does) and size, the
    /// changes are found at their moments and exactly the chosen frames are kept.
    #[tokio::test]
    async fn changes_are_found_in_vp9_and_odd_sizes_too() {
        let dir = tempfile::tempdir().unwrap();
        // Between samples: each is found at the first sample that shows it.
        let filter = "drawbox=enable='gte(t,1.6)':x=10:y=10:w=90:h=40:color=black:t=fill,\
drawbox=enable='gte(t,3.2)':x=120:y=80:w=60:h=60:color=red:t=fill";
        let vp9 = make_video(
            dir.path(),
            "changes.webm",
            "color=c=white:s=241x161:r=25:d=4",
            filter,
            &["-c:v", "libvpx-vp9", "-deadline", "realtime", "-b:v", "1M"],
        );
        let h264 = make_video(
            dir.path(),
            "changes.mp4",
            "color=c=white:s=320x180:r=30:d=4",
            filter,
            &["-c:v", "libx264", "-pix_fmt", "yuv420p"],
        );
        assert!(!ffmpeg::has_unreferenced_frames(&vp9).await);
        assert!(ffmpeg::has_unreferenced_frames(&h264).await);
        for video in [vp9, h264] {
            let out = dir
                .path()
                .join(video.file_name().unwrap())
                .with_extension("frames");
            let frames = extract(&video, &out, &KeyframeOptions::default())
                .await
                .unwrap();
            let times: Vec<f64> = frames.iter().map(|f| f.at_seconds).collect();
            assert_eq!(times, vec![0.0, 1.75, 3.25, 3.75], "{}", video.display());
            let mut files: Vec<PathBuf> = std::fs::read_dir(&out)
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            files.sort();
            assert_eq!(
                files,
                frames.iter().map(|f| f.path.clone()).collect::<Vec<_>>()
            );
            // The frame after the first change shows it: black where the box is.
            let after = image::open(&frames[1].path).unwrap().to_rgb8();
            assert!(
                after.get_pixel(50, 30).0.iter().all(|&c| c < 40),
                "{}",
                video.display()
            );
            assert!(
                after.get_pixel(200, 30).0.iter().all(|&c| c > 215),
                "{}",
                video.display()
            );
        }
    }

    /// A recorder that writes a frame only when the screen changes (as Playwright's does)
    /// gives samples that repeat the one before; they are counted, and the changes around
    /// them, a return to an earlier screen included, are found at their moments.
    #[tokio::test]
    async fn repeated_samples_of_a_sparse_recording_count_and_hide_no_change() {
        let dir = tempfile::tempdir().unwrap();
        let filter = "drawbox=enable='between(t,1.6,3.2)':x=10:y=10:w=90:h=40:color=black:t=fill,\
mpdecimate";
        let video = make_video(
            dir.path(),
            "sparse.webm",
            "color=c=white:s=320x180:r=25:d=5",
            filter,
            &[
                "-fps_mode",
                "vfr",
                "-c:v",
                "libvpx-vp9",
                "-deadline",
                "realtime",
            ],
        );
        let packets = std::process::Command::new("ffprobe")
            .args(["-v", "error", "-select_streams", "v:0", "-count_packets"])
            .args(["-show_entries", "stream=nb_read_packets", "-of", "csv=p=0"])
            .arg(&video)
            .output()
            .expect("ffprobe (scripts/test.sh installs it)");
        let frames: u64 = String::from_utf8_lossy(&packets.stdout)
            .trim()
            .parse()
            .unwrap();
        let timeline = timeline(&video, &KeyframeOptions::default()).await.unwrap();
        // The recording ends at its last frame (3.24 s): 14 samples from 3 frames.
        assert_eq!((frames, timeline.samples), (3, 14));
        assert_eq!(timeline.changes, vec![0.0, 1.75, 3.25]);
    }

    /// With more changes than frames allowed, the frames written on the way are exactly the
    /// ones chosen: the largest changes, with the first and last.
    #[tokio::test]
    async fn only_the_largest_changes_are_kept_when_there_are_too_many() {
        let dir = tempfile::tempdir().unwrap();
        // Boxes of mixed sizes appear side by side, one every half second.
        let sizes = [20, 60, 30, 90, 40, 120, 25, 70];
        let mut x = 10;
        let filter: Vec<String> = sizes
            .iter()
            .enumerate()
            .map(|(i, side)| {
                let draw = format!(
                    "drawbox=enable='gte(t,{})':x={x}:y=10:w={side}:h={side}:color=black:t=fill",
                    0.5 * (i + 1) as f64,
                );
                x += side + 10;
                draw
            })
            .collect();
        let video = make_video(
            dir.path(),
            "many.mp4",
            "color=c=white:s=640x180:r=20:d=5",
            &filter.join(","),
            &["-c:v", "libx264", "-pix_fmt", "yuv420p"],
        );
        let options = KeyframeOptions {
            max_frames: 5,
            ..KeyframeOptions::default()
        };
        let all = change_points(
            &video,
            &KeyframeOptions {
                max_frames: 100,
                ..options.clone()
            },
        )
        .await
        .unwrap();
        assert_eq!(all.len(), sizes.len() + 2, "{all:?}");
        let out = dir.path().join("frames");
        let frames = extract(&video, &out, &options).await.unwrap();
        let times: Vec<f64> = frames.iter().map(|f| f.at_seconds).collect();
        // The three largest boxes (120, 90, 70 px) appear at 3, 2 and 4 s.
        assert_eq!(times, vec![0.0, 2.0, 3.0, 4.0, 4.75]);
        assert_eq!(std::fs::read_dir(&out).unwrap().count(), 5);
    }

    /// A raw recording's scan reads its sampled frames itself, and finds what ffmpeg's finds:
    /// the same samples, changes, length, sound and size, in AVI (at an odd size and rate,
    /// with sound) and in Y4M. Anything else goes to ffmpeg.
    #[tokio::test]
    async fn a_raw_video_is_scanned_without_ffmpeg_and_finds_what_ffmpeg_finds() {
        let dir = tempfile::tempdir().unwrap();
        // A panel from 1.6 s on, and a toast shown for less than a sample's interval.
        let filter = "drawbox=enable='gte(t,1.6)':x=10:y=10:w=90:h=40:color=black:t=fill,\
drawbox=enable='between(t,2.9,3.1)':x=120:y=80:w=60:h=60:color=red:t=fill";
        let raw = ["-c:v", "rawvideo", "-pix_fmt", "yuv420p"];
        let with_sound = dir.path().join("sound.avi");
        let status = std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
            .arg("color=c=white:s=320x180:r=30:d=4")
            .args(["-f", "lavfi", "-i", "sine=d=4", "-vf", filter])
            .args(raw)
            .args(["-c:a", "pcm_s16le"])
            .arg(&with_sound)
            .status()
            .unwrap();
        assert!(status.success());
        let videos = [
            make_video(
                dir.path(),
                "raw.avi",
                "color=c=white:s=1280x720:r=30:d=4.1",
                filter,
                &raw,
            ),
            make_video(
                dir.path(),
                "odd.avi",
                "color=c=white:s=641x359:r=24000/1001:d=3.9",
                filter,
                &raw,
            ),
            make_video(
                dir.path(),
                "raw.y4m",
                "color=c=white:s=320x240:r=25:d=4",
                filter,
                &["-pix_fmt", "yuv420p"],
            ),
            with_sound,
        ];
        let options = KeyframeOptions::default();
        for video in &videos {
            let name = video.display();
            assert!(raw::RawVideo::open(video).is_some(), "{name}");
            let direct = decode(video, &options, None, None).await.unwrap();
            let by_ffmpeg = decode_with_ffmpeg(video, &options, None, None)
                .await
                .unwrap();
            let times = |found: &Found| found.changes.iter().map(|c| c.at).collect::<Vec<_>>();
            assert_eq!(times(&direct), vec![0.0, 1.75, 3.0, 3.25], "{name}");
            assert_eq!(times(&direct), times(&by_ffmpeg), "{name}");
            assert_eq!(direct.frames, by_ffmpeg.frames, "{name}");
            assert_eq!(direct.geometry, by_ffmpeg.geometry, "{name}");
            let (a, b) = (direct.input, by_ffmpeg.input);
            assert_eq!((a.size, a.has_audio), (b.size, b.has_audio), "{name}");
            let (a, b) = (a.duration.unwrap(), b.duration.unwrap());
            assert!((a - b).abs() < 0.05, "{name}: {a} s against {b} s");
        }
        assert!(
            decode(&videos[3], &options, None, None)
                .await
                .unwrap()
                .input
                .has_audio
        );
        let compressed = make_video(
            dir.path(),
            "mpeg4.avi",
            "color=c=white:s=320x180:r=30:d=1",
            filter,
            &["-c:v", "mpeg4"],
        );
        assert!(raw::RawVideo::open(&compressed).is_none());
    }
}
