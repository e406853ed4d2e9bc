//! A long compressed video scanned by several ffmpeg processes at once, each decoding one
//! chunk of the timeline from a keyframe: one ffmpeg decodes on one core (its own threads
//! mostly wait on each other), so on two cores two chunks at a time take about half as long.
//!
//! The samples are exactly those of one pass. A chunk starts at a sample boundary just after a
//! keyframe; ffmpeg seeks to that keyframe without dropping what comes before the boundary
//! (`-noaccurate_seek`), so its `fps=...:round=up:start_time=0` shows at each sample the last
//! frame at or before it, decoded from the same references as in one pass. Each chunk but the
//! first also decodes the sample before its start, which must equal the chunk before's last
//! one, byte for byte: when it does not (a seek that went elsewhere), or anything else goes
//! wrong, the video is scanned in one pass instead.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::io::AsyncReadExt;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use vaider_base::error::{Result, VaiderError};

use super::ffmpeg::{ffmpeg, ffprobe, InputFacts};
use super::measure::{detector_geometry, detector_scale, measure_frames, Found};
use super::y4m::{FrameReader, Geometry, FRAMES_AHEAD};
use super::KeyframeOptions;

/// Shorter chunks cost a process start and a partial group of pictures each for little gain.
const MIN_CHUNK_SECONDS: f64 = 8.0;
/// A long video is cut into about this many chunks (each at most `MAX_CHUNK_BYTES`): enough
/// for the cores to share the work evenly, few enough that starting ffmpeg costs little.
const CHUNKS: f64 = 8.0;
/// A chunk decoded ahead is held whole until the scan reaches it: at most this many bytes of
/// frames (40 s of 320x180 samples at 4 a second); a video whose keyframes are further apart
/// is scanned in one pass.
const MAX_CHUNK_BYTES: usize = 16 << 20;
/// Below this size a video scans in a fraction of a second: not worth asking ffprobe first.
const MIN_FILE_BYTES: u64 = 256 << 10;

/// One chunk: its samples, and the one before it (decoded again, to check the join).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Chunk {
    /// Index of the chunk's first sample (counting from the video's first).
    pub(super) first: u64,
    /// Samples, not counting the one before; none for the last chunk, which runs to the end.
    pub(super) samples: Option<u64>,
}

/// How to scan a video in chunks.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Plan {
    pub(super) chunks: Vec<Chunk>,
    /// Whether frames nothing refers to are skipped, as in one pass.
    pub(super) skip: bool,
}

/// What ffprobe says of the video stream, as far as chunks need.
#[derive(Debug, Default)]
struct Stream {
    /// H.264 or HEVC with B-frames: frames nothing refers to, skipped by the scan.
    skip: bool,
    /// Keyframes' times, from the start of the file.
    keyframes: Vec<f64>,
    /// The earliest frame's and the last frame's times, from the start of the file.
    first: Option<f64>,
    last: f64,
    /// Seconds per tick of the stream's timestamps (numerator, denominator).
    time_base: (u64, u64),
    size: (usize, usize),
}

/// The chunks to scan `video` in, or none when one pass is as good: a short or small video,
/// one core, keyframes too far apart, or timestamps that a seek could not hit exactly.
pub(super) async fn plan(video: &Path, options: &KeyframeOptions) -> Option<Plan> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let size = std::fs::metadata(video).map(|m| m.len()).unwrap_or(0);
    if cores < 2 || size < MIN_FILE_BYTES {
        return None;
    }
    let stream = probe(video).await?;
    let geometry = detector_geometry(Geometry {
        width: stream.size.0,
        height: stream.size.1,
    });
    let max_samples = (MAX_CHUNK_BYTES / geometry.frame_len().max(1)) as u64;
    // Half the longest allowed, so that a keyframe after the minimum still ends it in time.
    let longest = max_samples as f64 / options.sample_fps / 2.0;
    let min_seconds = (stream.last / CHUNKS).min(longest).max(MIN_CHUNK_SECONDS);
    let chunks = chunks_of(&stream, options.sample_fps, max_samples, min_seconds)?;
    Some(Plan {
        chunks,
        skip: stream.skip,
    })
}

/// Chunk boundaries at keyframes, each chunk `min_seconds` long at least and `max_samples`
/// at most.
fn chunks_of(stream: &Stream, fps: f64, max_samples: u64, min_seconds: f64) -> Option<Vec<Chunk>> {
    // The first sample must be at the first frame, as in one pass.
    if stream.first.is_none_or(|first| first.abs() > 1e-6) {
        return None;
    }
    let samples = (stream.last * fps).floor() as u64 + 1;
    let min = (min_seconds * fps).ceil() as u64;
    let mut starts = vec![0u64];
    for &keyframe in &stream.keyframes {
        // The sample before the chunk must show the keyframe or a later frame.
        let start = (keyframe * fps).ceil() as u64 + 1;
        let last = *starts.last()?;
        if start >= last + min && start + min / 2 <= samples && exact(start - 1, fps, stream) {
            starts.push(start);
        }
    }
    let mut chunks: Vec<Chunk> = starts
        .windows(2)
        .map(|w| Chunk {
            first: w[0],
            samples: Some(w[1] - w[0]),
        })
        .collect();
    chunks.push(Chunk {
        first: *starts.last()?,
        samples: None,
    });
    let longest = chunks
        .iter()
        .map(|c| c.samples.unwrap_or(samples.saturating_sub(c.first)))
        .max()?;
    (chunks.len() > 1 && longest <= max_samples).then_some(chunks)
}

/// Whether sample `index`'s time is a whole number of microseconds (ffmpeg's `-ss`) and of
/// the stream's ticks, so that a seek to it shifts every timestamp exactly.
fn exact(index: u64, fps: f64, stream: &Stream) -> bool {
    let seconds = index as f64 / fps;
    let (num, den) = stream.time_base;
    let whole = |x: f64| (x - x.round()).abs() < 1e-9;
    num > 0 && whole(seconds * 1e6) && whole(seconds * den as f64 / num as f64)
}

/// Asks ffprobe for the video stream's keyframes, time base, size and codec (reading its
/// packets, not decoding them).
async fn probe(video: &Path) -> Option<Stream> {
    let output = ffprobe()
        .args(["-v", "error", "-select_streams", "v:0", "-show_entries"])
        .arg("stream=codec_name,has_b_frames,width,height,time_base:format=start_time:packet=pts_time,flags")
        .args(["-of", "compact"])
        .arg(video)
        .stdin(Stdio::null())
        .output()
        .await
        .ok()?;
    if !output.status.success() {
        return None;
    }
    parse_probe(&String::from_utf8_lossy(&output.stdout))
}

/// Reads ffprobe's `packet|pts_time=8.333333|flags=K_`, `stream|width=...` and
/// `format|start_time=...` lines.
fn parse_probe(text: &str) -> Option<Stream> {
    let mut stream = Stream::default();
    let mut start = 0.0;
    let mut packets = Vec::new();
    for line in text.lines() {
        let mut fields = line.split('|');
        let section = fields.next()?;
        let field = |name: &str| {
            line.split('|')
                .find_map(|f| f.strip_prefix(name)?.strip_prefix('='))
        };
        match section {
            "packet" => {
                let at: f64 = field("pts_time")?.parse().ok()?;
                packets.push((at, field("flags")?.starts_with('K')));
            }
            "stream" => {
                let (num, den) = field("time_base")?.split_once('/')?;
                stream.time_base = (num.parse().ok()?, den.parse().ok()?);
                stream.size = (
                    field("width")?.parse().ok()?,
                    field("height")?.parse().ok()?,
                );
                let b_frames: u32 = field("has_b_frames")?.parse().ok()?;
                stream.skip = matches!(field("codec_name")?, "h264" | "hevc") && b_frames > 0;
            }
            "format" => start = field("start_time")?.parse().ok()?,
            _ => {}
        }
    }
    stream.first = packets.iter().map(|p| p.0 - start).min_by(f64::total_cmp);
    stream.last = packets.iter().map(|p| p.0 - start).max_by(f64::total_cmp)?;
    stream.keyframes = packets
        .iter()
        .filter(|p| p.1)
        .map(|p| p.0 - start)
        .collect();
    stream.keyframes.sort_by(f64::total_cmp);
    Some(stream)
}

/// The scan of `video` in `chunks`, as many decoding at a time as there are cores, ahead of
/// the measure. Any error means: scan it in one pass.
pub(super) async fn decode(video: &Path, options: &KeyframeOptions, plan: Plan) -> Result<Found> {
    let mut decoding = Decoding {
        video: video.to_path_buf(),
        fps: options.sample_fps,
        skip: plan.skip,
        waiting: plan.chunks.into(),
        running: VecDeque::new(),
    };
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    for _ in 0..workers {
        decoding.start_next();
    }
    let (first, log) = decoding
        .next()
        .await
        .ok_or_else(|| chunk_error("no chunk"))??;
    let (geometry, frames) = y4m_frames(&first)?;
    let (sender, receiver) = mpsc::channel(FRAMES_AHEAD);
    let task = tokio::spawn(async move {
        if let Err(e) = send_frames(frames, geometry, decoding, &sender).await {
            let _ = sender.send(Err(e)).await;
        }
    });
    let (spare, _) = mpsc::unbounded_channel();
    let incoming = FrameReader {
        frames: receiver,
        spare,
        task,
    };
    let mut found = measure_frames(geometry, incoming, options, None).await?;
    found.input = InputFacts::from_log(&log);
    Ok(found)
}

/// Sends the first chunk's frames, then each next chunk's after checking that its sample
/// before equals the last frame sent.
async fn send_frames(
    first: Vec<Vec<u8>>,
    geometry: Geometry,
    mut decoding: Decoding,
    sender: &mpsc::Sender<Result<Vec<u8>>>,
) -> Result<()> {
    let mut last = first.last().cloned();
    for frame in first {
        sender
            .send(Ok(frame))
            .await
            .map_err(|_| chunk_error("stopped"))?;
    }
    while let Some(chunk) = decoding.next().await {
        let (bytes, _) = chunk?;
        let (chunk_geometry, mut frames) = y4m_frames(&bytes)?;
        drop(bytes);
        if chunk_geometry != geometry || frames.is_empty() || last.as_ref() != Some(&frames[0]) {
            return Err(chunk_error("a chunk does not join the one before"));
        }
        frames.remove(0);
        last = frames.last().cloned().or(last);
        for frame in frames {
            sender
                .send(Ok(frame))
                .await
                .map_err(|_| chunk_error("stopped"))?;
        }
    }
    Ok(())
}

/// A chunk's whole Y4M stream and ffmpeg's log.
type Decoded = Result<(Vec<u8>, String)>;

/// The chunks waiting and those being decoded, in order.
struct Decoding {
    video: PathBuf,
    fps: f64,
    skip: bool,
    waiting: VecDeque<Chunk>,
    running: VecDeque<JoinHandle<Decoded>>,
}

impl Decoding {
    fn start_next(&mut self) {
        if let Some(chunk) = self.waiting.pop_front() {
            let command = chunk_command(&self.video, self.fps, chunk, self.skip);
            self.running.push_back(tokio::spawn(run(command)));
        }
    }

    /// The next chunk's Y4M stream and ffmpeg's log, once decoded; another chunk starts.
    async fn next(&mut self) -> Option<Decoded> {
        let running = self.running.pop_front()?;
        let decoded = running
            .await
            .unwrap_or_else(|e| Err(chunk_error(&e.to_string())));
        // Only now: as many ffmpeg at a time as cores, and as many chunks held.
        self.start_next();
        Some(decoded)
    }
}

impl Drop for Decoding {
    fn drop(&mut self) {
        // A scan given up (an error, a timeout) stops the chunks' ffmpeg (killed on drop).
        for running in &self.running {
            running.abort();
        }
    }
}

/// ffmpeg's command line for one chunk: one pass's, from the sample before the chunk (seeking
/// to the keyframe before it) and stopping after its last sample.
fn chunk_command(video: &Path, fps: f64, chunk: Chunk, skip: bool) -> tokio::process::Command {
    let mut command = ffmpeg();
    command.args(["-nostdin", "-hide_banner", "-nostats", "-v", "info"]);
    if skip {
        command.args(["-skip_frame", "noref"]);
    }
    command.args(["-threads", "1"]);
    let mut samples = chunk.samples;
    let mut filter = format!("fps={fps}:round=up");
    if chunk.first > 0 {
        let before = (chunk.first - 1) as f64 / fps;
        command.args(["-noaccurate_seek", "-ss", &before.to_string()]);
        filter.push_str(":start_time=0");
        samples = samples.map(|n| n + 1);
    }
    command.arg("-i").arg(video).args([
        "-an",
        "-sn",
        "-dn",
        "-vf",
        &format!("{filter},{}", detector_scale()),
    ]);
    if let Some(samples) = samples {
        command.args(["-frames:v", &samples.to_string()]);
    }
    command.args(["-pix_fmt", "yuv420p", "-f", "yuv4mpegpipe", "pipe:1"]);
    command
}

/// Runs one chunk's ffmpeg to the end: its whole Y4M stream, and its log.
async fn run(mut command: tokio::process::Command) -> Decoded {
    let mut child = command
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| chunk_error(&e.to_string()))?;
    let (Some(mut stdout), Some(mut stderr)) = (child.stdout.take(), child.stderr.take()) else {
        return Err(chunk_error("no pipe"));
    };
    let (mut bytes, mut log) = (Vec::new(), String::new());
    let (read, _) = tokio::join!(
        stdout.read_to_end(&mut bytes),
        stderr.read_to_string(&mut log)
    );
    let decoded = child.wait().await.is_ok_and(|status| status.success());
    match read {
        Ok(_) if decoded => Ok((bytes, log)),
        _ => Err(chunk_error("ffmpeg failed on a chunk")),
    }
}

/// The frames of a whole Y4M stream, and their size.
fn y4m_frames(bytes: &[u8]) -> Result<(Geometry, Vec<Vec<u8>>)> {
    let bad = || chunk_error("a chunk's Y4M stream is cut short");
    let header_end = bytes.iter().position(|&b| b == b'\n').ok_or_else(bad)? + 1;
    let geometry = Geometry::from_header(&bytes[..header_end])?;
    let mut rest = &bytes[header_end..];
    let mut frames = Vec::new();
    while !rest.is_empty() {
        let marker = rest.iter().position(|&b| b == b'\n').ok_or_else(bad)? + 1;
        if !rest.starts_with(b"FRAME") || rest.len() < marker + geometry.frame_len() {
            return Err(bad());
        }
        let end = marker + geometry.frame_len();
        frames.push(rest[marker..end].to_vec());
        rest = &rest[end..];
    }
    Ok((geometry, frames))
}

fn chunk_error(why: &str) -> VaiderError {
    VaiderError::internal("scan a video in chunks", why.to_string())
}

#[cfg(test)]
mod tests {
    use super::super::{decode_with_ffmpeg, pick};
    use super::*;

    fn shared_media(name: &str) -> PathBuf {
        Path::new(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/media"
        ))
        .join(name)
    }

    /// A long screen-like recording: panels appearing, a blinking caret and a small animated
    /// inset (a video in the page), with a keyframe every 2 s.
    fn long_recording(dir: &Path, name: &str, codec: &[&str]) -> PathBuf {
        let mut filter = String::from(
            "[0:v][1:v]overlay=x=500:y=20,drawbox=enable='lt(mod(t,1),0.5)':x=300:y=30:w=2:h=14:color=black:t=fill",
        );
        for (i, at) in [3.0, 7.3, 12.6, 18.1, 22.9].iter().enumerate() {
            let x = 20 + 110 * i;
            filter.push_str(&format!(
                ",drawbox=enable='gte(t,{at})':x={x}:y=150:w=90:h=120:color=0x{:06x}:t=fill",
                0x2060a0 + i * 0x181008
            ));
        }
        let path = dir.join(name);
        let status = std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-f", "lavfi", "-i"])
            .arg("color=c=white:s=640x360:r=30:d=26")
            .args(["-f", "lavfi", "-i", "testsrc2=s=120x68:r=30:d=26"])
            .args(["-filter_complex", &filter, "-g", "60"])
            .args(codec)
            .arg(&path)
            .status()
            .unwrap();
        assert!(status.success());
        path
    }

    /// The chunked scan of `video` (in `plan`) and one pass find the same samples, changes,
    /// blinks, last frame and input, so the same keyframes are chosen.
    async fn assert_same_as_one_pass(video: &Path, plan: Plan) {
        let name = video.display();
        assert!(plan.chunks.len() > 1, "{name}: {plan:?}");
        let options = KeyframeOptions::default();
        let chunked = decode(video, &options, plan).await.unwrap();
        let one = decode_with_ffmpeg(video, &options, None).await.unwrap();
        assert_eq!(chunked.changes, one.changes, "{name}");
        assert_eq!(chunked.ongoing, one.ongoing, "{name}");
        assert_eq!(
            (chunked.frames, chunked.flickering),
            (one.frames, one.flickering),
            "{name}"
        );
        assert!(chunked.last_frame == one.last_frame, "{name}");
        assert_eq!(chunked.geometry, one.geometry, "{name}");
        assert_eq!(chunked.input, one.input, "{name}");
        let chosen = |found: &Found| {
            let changes = found.changes.iter().map(|c| (c.at, c.share)).collect();
            pick(changes, (found.frames - 1) as f64 / 4.0, 5)
        };
        assert_eq!(chosen(&chunked), chosen(&one), "{name}");
    }

    /// The shared WebM (VP9, frames only where the page changed) has a single keyframe: it is
    /// re-encoded as VP8, as Playwright records, with a keyframe every second to be cut at.
    #[tokio::test]
    async fn real_recordings_in_small_chunks_find_what_one_pass_finds() {
        let dir = tempfile::tempdir().unwrap();
        let vp8 = dir.path().join("login-flow-vp8.webm");
        let status = std::process::Command::new("ffmpeg")
            .args(["-v", "error", "-y", "-i"])
            .arg(shared_media("login-flow.webm"))
            .args(["-c:v", "libvpx", "-deadline", "realtime", "-b:v", "1M"])
            .args(["-force_key_frames", "expr:gte(t,n_forced)"])
            .arg(&vp8)
            .status()
            .unwrap();
        assert!(status.success());
        for video in [shared_media("login-flow.mp4"), vp8] {
            let stream = probe(&video).await.unwrap();
            let chunks = chunks_of(&stream, 4.0, u64::MAX, 1.0).unwrap();
            let plan = Plan {
                chunks,
                skip: stream.skip,
            };
            assert_eq!(plan.skip, video.extension().unwrap() == "mp4");
            assert_same_as_one_pass(&video, plan).await;
        }
    }

    #[tokio::test]
    async fn a_long_recording_is_planned_in_chunks_that_find_what_one_pass_finds() {
        let dir = tempfile::tempdir().unwrap();
        let h264 = [
            "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p",
        ];
        let vp8 = [
            "-c:v",
            "libvpx",
            "-deadline",
            "realtime",
            "-cpu-used",
            "8",
            "-b:v",
            "1M",
        ];
        for video in [
            long_recording(dir.path(), "long.mp4", &h264),
            long_recording(dir.path(), "long.webm", &vp8),
        ] {
            let plan = plan(&video, &KeyframeOptions::default()).await;
            let plan = plan.unwrap_or_else(|| panic!("{} not in chunks", video.display()));
            assert_same_as_one_pass(&video, plan).await;
        }
    }

    #[tokio::test]
    async fn a_chunk_that_does_not_join_the_one_before_fails_the_chunked_scan() {
        let video = shared_media("login-flow.mp4");
        let stream = probe(&video).await.unwrap();
        let mut chunks = chunks_of(&stream, 4.0, u64::MAX, 1.0).unwrap();
        // The first chunk stops three samples short: its last frame (sample 11) is not the
        // second's sample before (14), the frame the screen settles on.
        assert_eq!(chunks[1].first, 15);
        chunks[0].samples = Some(12);
        let plan = Plan {
            chunks,
            skip: stream.skip,
        };
        let options = KeyframeOptions::default();
        assert!(decode(&video, &options, plan).await.is_err());
    }

    fn stream(keyframes: &[f64], last: f64) -> Stream {
        Stream {
            keyframes: keyframes.to_vec(),
            first: Some(0.0),
            last,
            time_base: (1, 1000),
            ..Stream::default()
        }
    }

    #[test]
    fn chunks_start_just_after_keyframes_at_least_the_minimum_apart() {
        let keyframes = [0.0, 4.27, 8.53, 12.8, 17.07, 21.33, 25.6];
        let chunks = chunks_of(&stream(&keyframes, 30.0), 4.0, u64::MAX, 8.0).unwrap();
        let starts: Vec<u64> = chunks.iter().map(|c| c.first).collect();
        // 8.53 s is sample 34.12: the sample before the chunk (35) is after the keyframe.
        // The last chunk may be half the minimum (4 s here).
        assert_eq!(starts, vec![0, 36, 70, 104]);
        assert_eq!(chunks[0].samples, Some(36));
        assert_eq!(chunks[1].samples, Some(34));
        assert_eq!(chunks[3].samples, None);
        // Too short, keyframes too sparse for the memory allowed, or a first frame after 0.
        assert!(chunks_of(&stream(&keyframes, 10.0), 4.0, u64::MAX, 8.0).is_none());
        assert!(chunks_of(&stream(&[0.0], 30.0), 4.0, u64::MAX, 8.0).is_none());
        assert!(chunks_of(&stream(&keyframes, 30.0), 4.0, 30, 8.0).is_none());
        let late = Stream {
            first: Some(0.5),
            ..stream(&keyframes, 30.0)
        };
        assert!(chunks_of(&late, 4.0, u64::MAX, 8.0).is_none());
        // In ticks of 1/30 s, a chunk can only start after a whole or half second.
        let coarse = Stream {
            time_base: (1, 30),
            ..stream(&keyframes, 30.0)
        };
        let chunks = chunks_of(&coarse, 4.0, u64::MAX, 8.0).unwrap();
        let starts: Vec<u64> = chunks.iter().map(|c| c.first).collect();
        assert_eq!(starts, vec![0, 53, 87]);
    }

    #[test]
    fn ffprobes_packets_give_keyframes_time_base_and_codec() {
        let text = "packet|pts_time=0.033000|flags=K_\npacket|pts_time=0.066000|flags=__\n\
packet|pts_time=4.033000|flags=K_\npacket|pts_time=9.999000|flags=__\n\
stream|codec_name=h264|width=1280|height=720|has_b_frames=2|time_base=1/15360\n\
format|start_time=0.033000\n";
        let stream = parse_probe(text).unwrap();
        assert_eq!(stream.keyframes, vec![0.0, 4.0]);
        assert_eq!(stream.first, Some(0.0));
        assert!((stream.last - 9.966).abs() < 1e-9);
        assert_eq!(stream.time_base, (1, 15360));
        assert_eq!(stream.size, (1280, 720));
        assert!(stream.skip);
    }
}
