//! The scan's measure: each sampled frame (from ffmpeg's Y4M stream or read directly from a
//! raw video) shrunk to a probe and compared with the last change, giving every change, the
//! blinks, the flickering samples and the last frame. Also the size frames are shrunk to for
//! it, which ffmpeg's scale filter and the raw reader share.

use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use vaider_base::error::{Result, VaiderError};

use super::blinks::{Change, Ongoing, Runs};
use super::change::{self, Probe, Prober};
use super::jpeg::Encoder;
use super::watch::Watching;
use super::y4m::{stream_error, FrameReader, Geometry};
use super::{InputFacts, KeyframeOptions};

/// A sample flickers when more than this share of its probe moved a little since the sample
/// before (see [`change`]): noise, or motion everywhere.
const FLICKERING_SHARE: f64 = 0.25;

/// The changes one pass found, and the last frame (always chosen).
pub(super) struct Found {
    pub(super) input: InputFacts,
    /// Each change; the first frame counts as the largest.
    pub(super) changes: Vec<Change>,
    pub(super) ongoing: Vec<Ongoing>,
    pub(super) frames: u64,
    /// When the last sample was shown.
    pub(super) last_at: f64,
    /// The length the samples cover: `frames / sample_fps` for a video; an animation's
    /// decoder puts its own length here.
    pub(super) sampled_seconds: f64,
    /// Samples where more than `FLICKERING_SHARE` of the probe moved since the sample before.
    pub(super) flickering: u64,
    pub(super) last_frame: Vec<u8>,
    pub(super) geometry: Geometry,
    /// The watcher stopped the scan before the end of the video.
    pub(super) stopped: bool,
}

/// Reads ffmpeg's Y4M stream frame by frame, measures each against the last kept frame and
/// hands the changes that can still be chosen to the encoder.
pub(super) async fn read_frames(
    mut stream: impl AsyncBufRead + Unpin + Send + 'static,
    options: &KeyframeOptions,
    encoder: Option<&mut Encoder>,
    watching: Option<Watching<'_, '_>>,
) -> Result<Found> {
    let mut line = Vec::new();
    stream
        .read_until(b'\n', &mut line)
        .await
        .map_err(stream_error)?;
    // ffmpeg wrote nothing when it could not decode the video; it says why on stderr.
    let no_frames = || VaiderError::InvalidPath {
        message: "no frames".into(),
    };
    if line.is_empty() {
        return Err(no_frames());
    }
    let geometry = Geometry::from_header(&line)?;
    let incoming = FrameReader::start(stream, geometry.frame_len());
    measure_frames(geometry, incoming, options, encoder, watching).await
}

/// Measures each frame against the last kept frame and hands the changes that can still be
/// chosen to the encoder; tells the watcher, if any, what it has seen after each sample, and
/// stops when it asks.
pub(super) async fn measure_frames(
    geometry: Geometry,
    mut incoming: FrameReader,
    options: &KeyframeOptions,
    mut encoder: Option<&mut Encoder>,
    mut watching: Option<Watching<'_, '_>>,
) -> Result<Found> {
    let mut measure = Measure::new(geometry, options);
    let mut last_frame: Option<Vec<u8>> = None;
    let mut stopped = false;
    while let Some(sample) = incoming.next().await? {
        let index = measure.frames;
        let at = sample.at.unwrap_or(index as f64 / options.sample_fps);
        let frame = sample.pixels;
        // A sample that repeats the one before (a still screen, or a recorder that writes a
        // frame only on a change, sampled again) cannot be a change: its probe would equal
        // the one before, which was measured already.
        let share = match last_frame.as_ref() == Some(&frame) {
            true => measure.repeat(at),
            false => measure.sample(&frame, at),
        };
        if let (Some(share), Some(encoder)) = (share, encoder.as_deref_mut()) {
            if encoder.may_choose(share) {
                encoder.encode(index, at, frame.clone(), geometry).await;
            }
        }
        if let Some(previous) = last_frame.replace(frame) {
            incoming.recycle(previous);
        }
        if let Some(watching) = watching.as_mut() {
            let interval = 1.0 / options.sample_fps;
            let (samples, flickering) = (measure.frames, measure.flickering);
            if !watching.tell(samples, interval, &measure.changes, flickering) {
                stopped = true;
                break;
            }
        }
    }
    let last_frame = last_frame.ok_or_else(|| VaiderError::InvalidPath {
        message: "no frames".into(),
    })?;
    let mut found = measure.finish(last_frame, geometry);
    found.stopped = stopped;
    Ok(found)
}

/// The scan so far: the probes of the sample before and of the last change, and what was
/// found.
struct Measure<'a> {
    options: &'a KeyframeOptions,
    prober: Prober,
    probe: Probe,
    before: Probe,
    kept: Option<Probe>,
    changes: Vec<Change>,
    runs: Runs,
    frames: u64,
    last_at: f64,
    flickering: u64,
}

impl<'a> Measure<'a> {
    fn new(geometry: Geometry, options: &'a KeyframeOptions) -> Self {
        let prober = Prober::new(geometry);
        Measure {
            options,
            probe: prober.empty(),
            before: prober.empty(),
            prober,
            kept: None,
            changes: Vec::new(),
            runs: Runs::default(),
            frames: 0,
            last_at: 0.0,
            flickering: 0,
        }
    }

    /// Measures the next sample, shown from `at`; returns its share when it is a change.
    fn sample(&mut self, frame: &[u8], at: f64) -> Option<f64> {
        let index = self.frames;
        self.frames += 1;
        self.last_at = at;
        let min_pixels = self.options.min_changed_pixels;
        std::mem::swap(&mut self.probe, &mut self.before);
        self.prober.probe(frame, &mut self.probe);
        if index > 0 {
            let flicker = change::difference(&self.before, &self.probe, min_pixels).flicker;
            self.flickering += u64::from(flicker > FLICKERING_SHARE);
        }
        // Against the last change, not the sample before: a slow fade adds up to a change.
        let Some(kept) = &mut self.kept else {
            let detail = self.prober.has_detail(frame, None);
            self.changes.push(Change {
                index,
                at,
                share: f64::INFINITY,
                detail,
                lasting: true,
            });
            self.kept = Some(self.probe.clone());
            return Some(f64::INFINITY);
        };
        let d = change::difference(kept, &self.probe, min_pixels);
        if d.changed <= 0.0 {
            return None;
        }
        // A pale change over an area (no sharp pixel) has no detail to read.
        let detail = d
            .spot
            .is_some_and(|s| self.prober.has_detail(frame, Some(s)));
        self.runs
            .note(self.changes.len(), at, &d.spots, &self.probe, kept);
        // The runs leave out only changes made of small spots alone (see `Runs::note`).
        let lasting = d.spots.is_empty() || !d.spots.iter().all(|s| s.is_small());
        self.changes.push(Change {
            index,
            at,
            share: d.changed,
            detail,
            lasting,
        });
        kept.clone_from(&self.probe);
        Some(d.changed)
    }

    /// A sample equal to the one before: counted, and nothing else (its probe, its flicker
    /// and its difference from the last change are the sample before's, which was no change
    /// against it, or became the last change).
    fn repeat(&mut self, at: f64) -> Option<f64> {
        self.frames += 1;
        self.last_at = at;
        None
    }

    fn finish(mut self, last_frame: Vec<u8>, geometry: Geometry) -> Found {
        let ongoing = self.runs.collapse(&mut self.changes, self.last_at);
        Found {
            input: InputFacts::default(),
            changes: self.changes,
            ongoing,
            frames: self.frames,
            last_at: self.last_at,
            sampled_seconds: self.frames as f64 / self.options.sample_fps,
            flickering: self.flickering,
            last_frame,
            geometry,
            stopped: false,
        }
    }
}

/// The scale filter for a scan that writes no frame: the detector measures probes of at most
/// `PROBE_WIDTH` x `PROBE_HEIGHT` box-averaged pixels, so frames need only twice that in each
/// direction (the chroma planes are half size) and are shrunk by ffmpeg as they are decoded.
/// A 1280x720 frame goes down the pipe as 320x180, a sixteenth of the bytes to copy and
/// measure. Never upscaled; the aspect ratio is kept, so the probe's grid is the same.
pub(super) fn detector_scale() -> String {
    let (w, h) = (2 * change::PROBE_WIDTH, 2 * change::PROBE_HEIGHT);
    let factor = format!("min(1,max({w}/iw,{h}/ih))");
    // `fast_bilinear` would alias (skip pixels); `area` averages them, as the probe does.
    format!("scale='min(iw,2*ceil(iw*{factor}/2))':'min(ih,2*ceil(ih*{factor}/2))':flags=area")
}

/// The size [`detector_scale`] shrinks a frame of `from` to.
pub(super) fn detector_geometry(from: Geometry) -> Geometry {
    let (iw, ih) = (from.width as f64, from.height as f64);
    let (w, h) = (
        (2 * change::PROBE_WIDTH) as f64,
        (2 * change::PROBE_HEIGHT) as f64,
    );
    let factor = (w / iw).max(h / ih).min(1.0);
    let side = |length: f64| length.min(2.0 * (length * factor / 2.0).ceil()) as usize;
    Geometry {
        width: side(iw),
        height: side(ih),
    }
}
