//! What counts as a screen change between two sampled frames. Each frame is shrunk to a small
//! colour probe (luma and both chroma planes, box-averaged: compression noise averages out),
//! and two probes differ when either test says so:
//!
//! - per pixel: enough probe pixels moved by more than pixelmatch's default threshold (0.1 of
//!   its YIQ colour difference), as a changed word, a toast or a spinner does;
//! - per area: the screen, or one of a grid of regions, moved on average by a small colour
//!   difference, as a pale full-screen or panel colour change or a fade does. A per-pixel
//!   threshold cannot see those (white to pale blue is 0.089 per pixel), but over a large area
//!   a person sees them at once, and compression noise, which goes both ways, averages out.
//!
//! It also measures how much of the screen flickers between consecutive samples, so that a
//! noisy recording (where small changes cannot be told from noise) can be recognised.

use super::Geometry;

/// The largest size of the probes changes are measured on: small enough to be cheap, large
/// enough that a changed word shows.
pub(super) const PROBE_WIDTH: usize = 160;
pub(super) const PROBE_HEIGHT: usize = 90;
/// pixelmatch's default per-pixel threshold, on its 0..1 scale of the YIQ colour difference.
const PIXEL_THRESHOLD: f32 = 0.1;
/// The mean colour difference over a region that counts as a change. About 2 % of white (5
/// levels of grey), far above what compression moves a region's mean by, and under what a
/// person notices on a large area.
const AREA_THRESHOLD: f32 = 0.02;
/// The regions the area test averages over: a 8x6 grid (each about 2 % of the screen), and the
/// whole screen.
const REGION_COLUMNS: usize = 8;
const REGION_ROWS: usize = 6;
/// A probe pixel flickers when it moves by more than this between consecutive samples, a
/// quarter of a changed pixel's threshold: compression noise on a still screen stays below.
const FLICKER_THRESHOLD: f32 = 0.03;

/// A frame shrunk to `PROBE_WIDTH` x `PROBE_HEIGHT` (or less): Y, U and V, each the average of
/// the frame's pixels under it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Probe {
    pub planes: [Vec<u8>; 3],
    pub width: usize,
    pub height: usize,
}

/// Shrinks frames to probes.
pub(super) struct Prober {
    luma: PlaneProber,
    chroma: PlaneProber,
    geometry: Geometry,
}

impl Prober {
    pub fn new(geometry: Geometry) -> Prober {
        // The same grid for all three planes: no finer than the half-size chroma planes.
        let width = PROBE_WIDTH.min(geometry.chroma_width());
        let height = PROBE_HEIGHT.min(geometry.chroma_height());
        Prober {
            luma: PlaneProber::new(geometry.width, geometry.height, width, height),
            chroma: PlaneProber::new(
                geometry.chroma_width(),
                geometry.chroma_height(),
                width,
                height,
            ),
            geometry,
        }
    }

    pub fn empty(&self) -> Probe {
        let len = self.luma.columns.len() * self.luma.rows.len();
        Probe {
            planes: [vec![0; len], vec![0; len], vec![0; len]],
            width: self.luma.columns.len(),
            height: self.luma.rows.len(),
        }
    }

    /// Fills `out` (from [`Prober::empty`]) with the probe of a 4:2:0 frame.
    pub fn probe(&self, frame: &[u8], out: &mut Probe) {
        let g = self.geometry;
        let (luma, chroma) = frame.split_at(g.luma_len());
        let (u, v) = chroma.split_at(g.chroma_len());
        let [py, pu, pv] = &mut out.planes;
        self.luma.probe(luma, py);
        self.chroma.probe(u, pu);
        self.chroma.probe(&v[..g.chroma_len()], pv);
    }
}

/// Shrinks one plane by averaging boxes of pixels (what ffmpeg's `scale=flags=area` does).
struct PlaneProber {
    width: usize,
    /// The plane's columns and rows each probe column and row averages: contiguous, so that
    /// summing them is a tight loop the compiler vectorises.
    columns: Vec<std::ops::Range<usize>>,
    rows: Vec<std::ops::Range<usize>>,
}

impl PlaneProber {
    fn new(width: usize, height: usize, columns: usize, rows: usize) -> PlaneProber {
        PlaneProber {
            width,
            columns: bins(width, columns),
            rows: bins(height, rows),
        }
    }

    fn probe(&self, plane: &[u8], out: &mut [u8]) {
        // Rows are first added up column by column (a loop the compiler vectorises), then
        // each probe pixel sums its columns of that total.
        let mut column_sums = vec![0u32; self.width];
        for (rows, out) in self
            .rows
            .iter()
            .zip(out.chunks_exact_mut(self.columns.len()))
        {
            column_sums.fill(0);
            for pixels in
                plane[rows.start * self.width..rows.end * self.width].chunks_exact(self.width)
            {
                for (sum, &value) in column_sums.iter_mut().zip(pixels) {
                    *sum += u32::from(value);
                }
            }
            let rows = rows.len() as u32;
            for (out, columns) in out.iter_mut().zip(&self.columns) {
                let sum: u32 = column_sums[columns.clone()].iter().sum();
                // Rounded, so that a flat colour keeps its level.
                let count = rows * columns.len() as u32;
                *out = ((sum + count / 2) / count) as u8;
            }
        }
    }
}

/// `count` contiguous ranges splitting `0..length` evenly.
fn bins(length: usize, count: usize) -> Vec<std::ops::Range<usize>> {
    let count = count.min(length).max(1);
    (0..count)
        .map(|i| i * length / count..(i + 1) * length / count)
        .collect()
}

/// pixelmatch's YIQ colour difference between two video colours, from their Y, U and V
/// differences (limited-range BT.601, what ffmpeg's yuv420p holds), squared and on its 0..1
/// scale: pixelmatch's `threshold` is compared with its square root.
pub(super) fn yiq_delta(dy: f32, du: f32, dv: f32) -> f32 {
    let r = 1.164 * dy + 1.596 * dv;
    let g = 1.164 * dy - 0.392 * du - 0.813 * dv;
    let b = 1.164 * dy + 2.017 * du;
    let y = r * 0.298_895_3 + g * 0.586_622_5 + b * 0.114_482_23;
    let i = r * 0.595_978 - g * 0.274_176_1 - b * 0.321_801_9;
    let q = r * 0.211_470_17 - g * 0.522_617_1 + b * 0.311_146_94;
    (0.5053 * y * y + 0.299 * i * i + 0.1957 * q * q) / 35215.0
}

/// How two probes differ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Difference {
    /// The share of the screen that changed (0..1): the probe pixels over pixelmatch's
    /// threshold, when there are at least `min_pixels_share` of them, else the regions whose
    /// mean colour moved; 0 when nothing changed.
    pub changed: f64,
    /// The share of probe pixels that moved by more than the flicker level.
    pub flicker: f64,
}

/// Compares two probes of the same size.
pub(super) fn difference(a: &Probe, b: &Probe, min_pixels_share: f64) -> Difference {
    let (width, height) = (a.width, a.height);
    let region_columns = bins(width, REGION_COLUMNS);
    let region_rows = bins(height, REGION_ROWS);
    // Signed sums of the Y, U, V differences of each region.
    let mut sums = vec![[0i64; 3]; region_columns.len() * region_rows.len()];
    let (mut over, mut flickering) = (0usize, 0usize);
    let pixel_limit = PIXEL_THRESHOLD * PIXEL_THRESHOLD;
    let flicker_limit = FLICKER_THRESHOLD * FLICKER_THRESHOLD;
    for (ry, rows) in region_rows.iter().enumerate() {
        for row in rows.clone() {
            for (rx, columns) in region_columns.iter().enumerate() {
                let sum = &mut sums[ry * region_columns.len() + rx];
                for at in row * width + columns.start..row * width + columns.end {
                    let d =
                        [0, 1, 2].map(|p| i32::from(b.planes[p][at]) - i32::from(a.planes[p][at]));
                    for (sum, d) in sum.iter_mut().zip(d) {
                        *sum += i64::from(d);
                    }
                    let delta = yiq_delta(d[0] as f32, d[1] as f32, d[2] as f32);
                    flickering += usize::from(delta > flicker_limit);
                    over += usize::from(delta > pixel_limit);
                }
            }
        }
    }
    let len = (width * height).max(1) as f64;
    let pixels = over as f64 / len;
    let pixels = if pixels >= min_pixels_share {
        pixels
    } else {
        0.0
    };
    let area_limit = AREA_THRESHOLD * AREA_THRESHOLD;
    let mean_moved = |sum: &[i64; 3], count: usize| {
        let mean = sum.map(|s| s as f32 / count.max(1) as f32);
        yiq_delta(mean[0], mean[1], mean[2]) > area_limit
    };
    let mut whole = [0i64; 3];
    let mut area = 0usize;
    for (ry, rows) in region_rows.iter().enumerate() {
        for (rx, columns) in region_columns.iter().enumerate() {
            let sum = &sums[ry * region_columns.len() + rx];
            for (w, s) in whole.iter_mut().zip(sum) {
                *w += s;
            }
            if mean_moved(sum, rows.len() * columns.len()) {
                area += rows.len() * columns.len();
            }
        }
    }
    let mut area = area as f64 / len;
    if area == 0.0 && mean_moved(&whole, width * height) {
        area = 1.0;
    }
    Difference {
        // Sharp pixels measure a change more finely than whole regions do (which matters
        // when the largest changes are chosen): regions count when no pixel is sharp.
        changed: if pixels > 0.0 { pixels } else { area },
        flicker: flickering as f64 / len,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(width: usize, height: usize, (y, u, v): (u8, u8, u8)) -> Probe {
        let len = width * height;
        Probe {
            planes: [vec![y; len], vec![u; len], vec![v; len]],
            width,
            height,
        }
    }

    /// RGB to limited-range BT.601 Y, U, V, as ffmpeg converts a lavfi colour.
    fn yuv(r: f32, g: f32, b: f32) -> (u8, u8, u8) {
        let y = 16.0 + 0.257 * r + 0.504 * g + 0.098 * b;
        let u = 128.0 - 0.148 * r - 0.291 * g + 0.439 * b;
        let v = 128.0 + 0.439 * r - 0.368 * g - 0.071 * b;
        (y.round() as u8, u.round() as u8, v.round() as u8)
    }

    #[test]
    fn the_colour_difference_is_pixelmatchs() {
        // White against black: 0.966 for pixelmatch (its scale's 1 is a larger difference
        // than any two grey levels).
        let (wy, wu, wv) = yuv(255.0, 255.0, 255.0);
        let (by, bu, bv) = yuv(0.0, 0.0, 0.0);
        let d = yiq_delta(
            f32::from(wy) - f32::from(by),
            f32::from(wu) - f32::from(bu),
            f32::from(wv) - f32::from(bv),
        );
        assert!((d.sqrt() - 0.966).abs() < 0.01, "{}", d.sqrt());
        // White to the pale blue #dfecff: 0.089 for pixelmatch (computed with its formula).
        let (py, pu, pv) = yuv(223.0, 236.0, 255.0);
        let d = yiq_delta(
            f32::from(py) - f32::from(wy),
            f32::from(pu) - f32::from(wu),
            f32::from(pv) - f32::from(wv),
        );
        assert!((d.sqrt() - 0.089).abs() < 0.01, "{}", d.sqrt());
    }

    #[test]
    fn a_pale_full_screen_change_is_a_change_and_noise_is_not() {
        let white = flat(160, 90, yuv(255.0, 255.0, 255.0));
        // Pale blue, 0.089 per pixel: under pixelmatch's threshold, but everywhere.
        let pale = flat(160, 90, yuv(223.0, 236.0, 255.0));
        let d = difference(&white, &pale, 0.001);
        assert_eq!(d.changed, 1.0);
        // Noise of +-10 levels everywhere, alternating: no mean moves, nothing changes, but
        // it flickers.
        let mut noisy = white.clone();
        for (i, y) in noisy.planes[0].iter_mut().enumerate() {
            *y = if i % 2 == 0 { *y - 10 } else { *y + 10 };
        }
        let d = difference(&white, &noisy, 0.001);
        assert_eq!(d.changed, 0.0);
        assert!(d.flicker > 0.9, "{d:?}");
    }

    #[test]
    fn a_small_sharp_change_counts_when_it_is_large_enough() {
        let white = flat(160, 90, yuv(255.0, 255.0, 255.0));
        let mut word = white.clone();
        // A dark word over 30 probe pixels.
        for row in 40..43 {
            word.planes[0][row * 160 + 70..row * 160 + 80].fill(60);
        }
        let d = difference(&white, &word, 0.001);
        assert!(d.changed >= 30.0 / 14400.0, "{d:?}");
        // A caret: 4 probe pixels, under the floor and too small to move a region's mean.
        let mut caret = white.clone();
        for row in 40..44 {
            caret.planes[0][row * 160 + 70] = 60;
        }
        assert_eq!(difference(&white, &caret, 0.001).changed, 0.0);
    }

    #[test]
    fn a_pale_panel_is_a_change_of_its_regions() {
        let white = flat(160, 90, yuv(255.0, 255.0, 255.0));
        let mut panel = white.clone();
        let (y, u, v) = yuv(239.0, 245.0, 255.0); // 0.045 from white
        for row in 15..60 {
            for plane in 0..3 {
                panel.planes[plane][row * 160 + 20..row * 160 + 80].fill([y, u, v][plane]);
            }
        }
        let d = difference(&white, &panel, 0.001);
        assert!(d.changed > 0.05 && d.changed < 0.5, "{d:?}");
    }

    #[test]
    fn probes_average_the_pixels_under_them() {
        // Left half black, right half white, on a size that does not divide evenly.
        let g = Geometry {
            width: 661,
            height: 373,
        };
        let mut frame = vec![128u8; g.frame_len()];
        for row in frame[..g.luma_len()].chunks_exact_mut(g.width) {
            row[..g.width / 2].fill(0);
            row[g.width / 2..].fill(255);
        }
        let prober = Prober::new(g);
        let mut probe = prober.empty();
        assert_eq!((probe.width, probe.height), (PROBE_WIDTH, PROBE_HEIGHT));
        prober.probe(&frame, &mut probe);
        for row in probe.planes[0].chunks_exact(PROBE_WIDTH) {
            assert_eq!(row[0], 0);
            assert_eq!(row[PROBE_WIDTH - 1], 255);
            // The column on the edge mixes both.
            assert!(row.windows(2).all(|w| w[0] <= w[1]));
        }
        assert!(probe.planes[1].iter().all(|&c| c == 128));
        // Frames smaller than twice the probe are measured at their chroma planes' size.
        let tiny = Prober::new(Geometry {
            width: 40,
            height: 30,
        });
        let tiny = tiny.empty();
        assert_eq!((tiny.width, tiny.height), (20, 15));
    }
}
