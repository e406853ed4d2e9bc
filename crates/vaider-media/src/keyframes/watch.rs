//! What a scan has seen so far, told after each sample to whoever watches it (the sampling
//! plan, which can tell from the first samples that a recording never stands still), who may
//! stop the scan there: a scan whose outcome is already known need not decode the rest.

use std::ops::ControlFlow;

use super::blinks::Change;
use super::ffmpeg::InputFacts;

/// The scan so far, after a sample.
#[derive(Debug, Clone, Copy)]
pub struct Seen<'a> {
    /// Samples read so far.
    pub samples: u64,
    /// Seconds between two samples.
    pub interval: f64,
    /// Every change so far; the first frame counts. Those not `lasting` may still be left
    /// out when the scan ends (the repeats of a blinking caret or a spinner).
    pub changes: &'a [Change],
    /// Samples so far where much of the screen moved a little since the sample before.
    pub flickering: u64,
    /// The video's length, once known (ffmpeg tells it before the first frame; a WebM
    /// written live has none).
    pub duration: Option<f64>,
    pub has_audio: bool,
    /// The video's own frame size, once known.
    pub size: Option<(u32, u32)>,
}

impl Seen<'_> {
    /// Seconds of the video scanned: the samples read times the interval.
    pub fn seconds(&self) -> f64 {
        self.samples as f64 * self.interval
    }
}

/// Told what the scan has seen after each sample; `Break` stops the scan there.
pub type Watcher<'a> = dyn FnMut(&Seen<'_>) -> ControlFlow<()> + Send + 'a;

/// What the input is known to be while the scan goes: fixed for a raw video (its header says
/// all), filled in from ffmpeg's log as it comes otherwise.
pub(super) type InputSoFar = tokio::sync::watch::Receiver<InputFacts>;

/// A watcher and what is known of the input, handed down to the scan's measure.
pub(super) struct Watching<'w, 'a> {
    pub(super) watcher: &'w mut Watcher<'a>,
    pub(super) input: InputSoFar,
}

impl Watching<'_, '_> {
    /// Tells the watcher what the scan has seen; whether it wants the scan to go on.
    pub(super) fn tell(
        &mut self,
        samples: u64,
        interval: f64,
        changes: &[Change],
        flickering: u64,
    ) -> bool {
        let input = *self.input.borrow();
        let seen = Seen {
            samples,
            interval,
            changes,
            flickering,
            duration: input.duration,
            has_audio: input.has_audio,
            size: input.size,
        };
        (self.watcher)(&seen).is_continue()
    }
}
