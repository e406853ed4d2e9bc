//! The kept frames as JPEG: encoded straight from the 4:2:0 planes (limited range to full)
//! on blocking threads while the stream is read, only for frames that can still be chosen.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::*;

/// JPEG quality of the kept frames: small text stays legible for the model.
pub(super) const JPEG_QUALITY: u8 = 90;
/// Frames being encoded at once. Reading waits for a free encoder, so memory stays bounded
/// even when every sampled frame is a change.
pub(super) const ENCODERS: usize = 2;

/// Writes frames as JPEG on blocking threads while the stream is read, and keeps only those
/// finally chosen.
pub(super) struct Encoder {
    dir: PathBuf,
    slots: Arc<Semaphore>,
    tasks: JoinSet<Result<(u64, PathBuf)>>,
    encoded: std::collections::BTreeSet<u64>,
    /// The shares of the changes encoded so far, smallest on top. At most `max_frames - 2`
    /// changes besides the first are chosen, the largest: a change smaller than all of the
    /// largest so far can never be chosen, so it is not encoded. (Shares are non-negative, so
    /// their bit patterns order like the numbers.)
    largest: BinaryHeap<Reverse<u64>>,
    room: usize,
}

impl Encoder {
    pub(super) fn new(dir: &Path, max_frames: usize) -> Encoder {
        Encoder {
            dir: dir.to_path_buf(),
            slots: Arc::new(Semaphore::new(ENCODERS)),
            tasks: JoinSet::new(),
            encoded: Default::default(),
            largest: BinaryHeap::new(),
            room: max_frames.max(2) - 2,
        }
    }

    /// Whether a change of this share can still be among the chosen ones.
    pub(super) fn may_choose(&mut self, share: f64) -> bool {
        if share.is_infinite() {
            return true; // the first frame
        }
        let bits = Reverse(share.to_bits());
        if self.largest.len() < self.room {
            self.largest.push(bits);
            return true;
        }
        match self.largest.peek() {
            Some(smallest) if bits < *smallest => {
                self.largest.pop();
                self.largest.push(bits);
                true
            }
            _ => false,
        }
    }

    pub(super) fn has(&self, index: u64) -> bool {
        self.encoded.contains(&index)
    }

    pub(super) async fn encode(&mut self, index: u64, at: f64, frame: Vec<u8>, geometry: Geometry) {
        // The semaphore is never closed, so acquiring only waits.
        let Ok(slot) = self.slots.clone().acquire_owned().await else {
            return;
        };
        let path = self
            .dir
            .join(format!("frame-{:08}ms.jpg", (at * 1000.0).round() as u64));
        self.encoded.insert(index);
        self.tasks.spawn_blocking(move || {
            let _slot = slot;
            write_jpeg(&path, &frame, geometry)?;
            Ok((index, path))
        });
    }

    /// Waits for every frame, removes those not `chosen` and returns the rest by index.
    pub(super) async fn finish(mut self, chosen: &[u64]) -> Result<BTreeMap<u64, PathBuf>> {
        let mut written = BTreeMap::new();
        let mut failure = None;
        while let Some(done) = self.tasks.join_next().await {
            match done {
                Ok(Ok((index, path))) => {
                    written.insert(index, path);
                }
                Ok(Err(e)) => failure = Some(e),
                Err(e) => failure = Some(VaiderError::internal("write a frame", e)),
            }
        }
        written.retain(|index, path| {
            let keep = failure.is_none() && chosen.contains(index);
            if !keep {
                let _ = std::fs::remove_file(path);
            }
            keep
        });
        match failure {
            Some(e) => Err(e),
            None => Ok(written),
        }
    }
}

/// One 4:2:0 frame to a JPEG file. JPEG stores YCbCr too, so the planes go in as they are,
/// only stretched from video's limited range (Y 16-235) to JPEG's full range.
pub(super) fn write_jpeg(path: &Path, frame: &[u8], geometry: Geometry) -> Result<()> {
    let fail =
        |e: &dyn std::fmt::Display| VaiderError::internal(format!("write {}", path.display()), e);
    let image = Yuv420 {
        frame,
        geometry,
        luma: range_table(16.0, 219.0, 0.0),
        chroma: range_table(128.0, 224.0, 128.0),
    };
    if u16::try_from(geometry.width).is_err() || u16::try_from(geometry.height).is_err() {
        return Err(fail(&"the frame is over 65535 pixels a side"));
    }
    let file = std::fs::File::create(path).map_err(|e| fail(&e))?;
    let mut encoder = jpeg_encoder::Encoder::new(std::io::BufWriter::new(file), JPEG_QUALITY);
    encoder.set_sampling_factor(jpeg_encoder::SamplingFactor::F_2_2);
    encoder.encode_image(image).map_err(|e| fail(&e))
}

/// Maps a video level to JPEG's full range: `(v - offset) * 255 / span + centre`, clamped.
pub(super) fn range_table(offset: f32, span: f32, centre: f32) -> [u8; 256] {
    let mut table = [0u8; 256];
    for (v, out) in table.iter_mut().enumerate() {
        *out = ((v as f32 - offset) * 255.0 / span + centre)
            .round()
            .clamp(0.0, 255.0) as u8;
    }
    table
}

/// A frame from the Y4M stream, as the JPEG encoder reads it: row by row.
pub(super) struct Yuv420<'a> {
    frame: &'a [u8],
    geometry: Geometry,
    luma: [u8; 256],
    chroma: [u8; 256],
}

impl jpeg_encoder::ImageBuffer for Yuv420<'_> {
    fn get_jpeg_color_type(&self) -> jpeg_encoder::JpegColorType {
        jpeg_encoder::JpegColorType::Ycbcr
    }

    fn width(&self) -> u16 {
        self.geometry.width as u16
    }

    fn height(&self) -> u16 {
        self.geometry.height as u16
    }

    fn fill_buffers(&self, y: u16, buffers: &mut [Vec<u8>; 4]) {
        let g = self.geometry;
        let y = usize::from(y);
        let (luma, chroma) = self.frame.split_at(g.luma_len());
        let (u, v) = chroma.split_at(g.chroma_len());
        let start = (y / 2) * g.chroma_width();
        let (u, v) = (&u[start..], &v[start..]);
        let [y_out, cb_out, cr_out, _] = buffers;
        y_out.extend(
            luma[y * g.width..(y + 1) * g.width]
                .iter()
                .map(|&l| self.luma[usize::from(l)]),
        );
        // Each chroma sample covers two pixels of the row.
        for (plane, out) in [(u, cb_out), (v, cr_out)] {
            out.extend(
                plane[..g.chroma_width()]
                    .iter()
                    .flat_map(|&c| [self.chroma[usize::from(c)]; 2])
                    .take(g.width),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 4:2:0 frame of one colour, given as limited-range Y, U, V.
    fn flat_frame(geometry: Geometry, (y, u, v): (u8, u8, u8)) -> Vec<u8> {
        let mut frame = vec![y; geometry.luma_len()];
        frame.extend(std::iter::repeat_n(u, geometry.chroma_len()));
        frame.extend(std::iter::repeat_n(v, geometry.chroma_len()));
        frame
    }

    #[test]
    fn frames_become_jpegs_of_the_same_colours() {
        let dir = tempfile::tempdir().unwrap();
        let g = Geometry {
            width: 33,
            height: 17,
        };
        // Limited-range white, and BT.601 limited-range pure red.
        for ((y, u, v), want) in [
            ((235, 128, 128), [255, 255, 255]),
            ((81, 90, 240), [255, 0, 0]),
        ] {
            let path = dir.path().join("frame.jpg");
            write_jpeg(&path, &flat_frame(g, (y, u, v)), g).unwrap();
            let decoded = image::open(&path).unwrap().to_rgb8();
            assert_eq!(decoded.dimensions(), (33, 17));
            let pixel = decoded.get_pixel(16, 8).0;
            for (got, want) in pixel.iter().zip(want) {
                assert!(got.abs_diff(want) <= 6, "{pixel:?} for {want:?}");
            }
        }
    }
}
