//! What counts as a screen change between two sampled frames. Each frame is shrunk to a small
//! colour probe (luma and both chroma planes, box-averaged: compression noise averages out),
//! and two probes differ when either test says so:
//!
//! - per pixel: at least a few probe pixels (an absolute count, not a share of the screen:
//!   a 12 px spinner or a changed digit is under 0.1 % of a 640x360 screen) moved by more
//!   than pixelmatch's default threshold (0.1 of its YIQ colour difference), as a changed
//!   word, a toast or a spinner does; a blinking caret counts too, and is told apart later by
//!   its repeating at one place (`keyframes::blinks`);
//! - per area: the screen, or one of a grid of regions, moved on average by a small colour
//!   difference, as a pale full-screen or panel colour change or a fade does. A per-pixel
//!   threshold cannot see those (white to pale blue is 0.089 per pixel), but over a large area
//!   a person sees them at once, and compression noise, which goes both ways, averages out.
//!
//! It also measures how much of the screen flickers between consecutive samples, so that a
//! noisy recording (where small changes cannot be told from noise) can be recognised, and
//! whether what changed has fine detail (text) that a frame must be sharp to show.

use super::Geometry;

/// The largest size of the probes changes are measured on: small enough to be cheap, large
/// enough that a changed word shows.
pub(super) const PROBE_WIDTH: usize = 160;
pub(super) const PROBE_HEIGHT: usize = 90;
/// pixelmatch's default per-pixel threshold, on its 0..1 scale of the YIQ colour difference.
const PIXEL_THRESHOLD: f32 = 0.1;
/// Fewer probe pixels than this over pixelmatch's threshold make a small change, which
/// counts only when its pixels moved clearly, by `STRONG_THRESHOLD`: a few pixels just over
/// the threshold along an edge are what a video encoder does as it sharpens a frame after a
/// change (0.13 measured on x264), where a glyph, a caret or a spinner moves its pixels by
/// 0.3 and more.
const FEW_PIXELS: usize = 14;
const STRONG_THRESHOLD: f32 = 0.2;
/// The mean colour difference over a region that counts as a change. About 2 % of white (5
/// levels of grey), far above what compression moves a region's mean by, and under what a
/// person notices on a large area.
const AREA_THRESHOLD: f32 = 0.02;
/// The regions the area test averages over: a 8x6 grid (each about 2 % of the screen), and the
/// whole screen.
const REGION_COLUMNS: usize = 8;
const REGION_ROWS: usize = 6;
/// A change is confined to a small spot when its changed probe pixels fit in a box of at most
/// this many probe pixels (0.25 % of the screen: 24x24 px at 640x360): a caret, a small
/// spinner, a digit.
pub(super) const SMALL_SPOT: usize = 36;
/// A probe cell of a frame has fine detail (text) when its rows go up and down by at least
/// this many luma levels a row on average, mostly in strokes (up and back down) rather than
/// in one step (a panel's edge).
const STROKE_LEVELS: u32 = 40;
/// A change has fine detail when at least this many probe cells of its new screen do: a word,
/// not a caret.
const DETAIL_CELLS: usize = 8;
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

    /// Whether the frame has fine detail (text, thin lines) in the probe cells of `spot`
    /// (the whole frame when none): detail a frame sent at a low resolution would blur.
    pub fn has_detail(&self, frame: &[u8], spot: Option<Spot>) -> bool {
        let (columns, rows) = (&self.luma.columns, &self.luma.rows);
        let spot = spot.unwrap_or(Spot {
            x0: 0,
            y0: 0,
            x1: columns.len(),
            y1: rows.len(),
        });
        let width = self.geometry.width;
        let mut cells = 0;
        for cell_rows in &rows[spot.y0..spot.y1.min(rows.len())] {
            for cell_columns in &columns[spot.x0..spot.x1.min(columns.len())] {
                let (mut moved, mut net) = (0u32, 0u32);
                // One pixel past the cell, so that a stroke on its edge is seen whole.
                let end = (cell_columns.end + 1).min(width);
                for row in cell_rows.clone() {
                    let pixels = &frame[row * width + cell_columns.start..row * width + end];
                    let mut row_net = 0i32;
                    for pair in pixels.windows(2) {
                        let step = i32::from(pair[1]) - i32::from(pair[0]);
                        moved += step.unsigned_abs();
                        row_net += step;
                    }
                    net += row_net.unsigned_abs();
                }
                let strokes = moved >= STROKE_LEVELS * cell_rows.len() as u32 && net * 2 <= moved;
                cells += usize::from(strokes);
                if cells >= DETAIL_CELLS {
                    return true;
                }
            }
        }
        false
    }
}

/// A box of probe pixels: columns `x0..x1`, rows `y0..y1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Spot {
    pub x0: usize,
    pub y0: usize,
    pub x1: usize,
    pub y1: usize,
}

impl Spot {
    fn pixel(x: usize, y: usize) -> Spot {
        Spot {
            x0: x,
            y0: y,
            x1: x + 1,
            y1: y + 1,
        }
    }

    pub fn area(self) -> usize {
        (self.x1 - self.x0) * (self.y1 - self.y0)
    }

    pub fn union(self, other: Spot) -> Spot {
        Spot {
            x0: self.x0.min(other.x0),
            y0: self.y0.min(other.y0),
            x1: self.x1.max(other.x1),
            y1: self.y1.max(other.y1),
        }
    }

    /// Whether the two boxes overlap or touch.
    pub fn meets(self, other: Spot) -> bool {
        self.x0 <= other.x1 && other.x0 <= self.x1 && self.y0 <= other.y1 && other.y0 <= self.y1
    }

    /// Whether the boxes are at most one pixel apart.
    fn near(self, other: Spot) -> bool {
        self.x0 <= other.x1 + 1
            && other.x0 <= self.x1 + 1
            && self.y0 <= other.y1 + 1
            && other.y0 <= self.y1 + 1
    }

    pub fn is_small(self) -> bool {
        self.area() <= SMALL_SPOT
    }
}

/// Shrinks one plane by averaging boxes of pixels (what ffmpeg's `scale=flags=area` does).
pub(super) struct PlaneProber {
    pub(super) width: usize,
    /// The plane's columns and rows each probe column and row averages: contiguous, so that
    /// summing them is a tight loop the compiler vectorises.
    pub(super) columns: Vec<std::ops::Range<usize>>,
    pub(super) rows: Vec<std::ops::Range<usize>>,
}

impl PlaneProber {
    pub(super) fn new(width: usize, height: usize, columns: usize, rows: usize) -> PlaneProber {
        PlaneProber {
            width,
            columns: bins(width, columns),
            rows: bins(height, rows),
        }
    }

    pub(super) fn probe(&self, plane: &[u8], out: &mut [u8]) {
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
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Difference {
    /// The share of the screen that changed (0..1): the probe pixels over pixelmatch's
    /// threshold, when there are `FEW_PIXELS` of them or `min_pixels` moved clearly, else the
    /// regions whose mean colour moved; 0 when nothing changed.
    pub changed: f64,
    /// The box around the probe pixels over pixelmatch's threshold, when they count.
    pub spot: Option<Spot>,
    /// The same pixels in boxes of pixels near each other (a caret's blink and a spinner's
    /// turn in the same sample are two spots); one box when there are too many to sort.
    pub spots: Vec<Spot>,
    /// The share of probe pixels that moved by more than the flicker level.
    pub flicker: f64,
}

/// Whether two probes look the same inside `spot`: no probe pixel there moved by more than
/// pixelmatch's threshold.
pub(super) fn same_within(a: &Probe, b: &Probe, spot: Spot) -> bool {
    let limit = PIXEL_THRESHOLD * PIXEL_THRESHOLD;
    (spot.y0..spot.y1.min(a.height)).all(|row| {
        (spot.x0..spot.x1.min(a.width)).all(|x| {
            let at = row * a.width + x;
            let d = [0, 1, 2].map(|p| f32::from(b.planes[p][at]) - f32::from(a.planes[p][at]));
            yiq_delta(d[0], d[1], d[2]) <= limit
        })
    })
}

/// Changed pixels sorted into spots at most: more make a large change, one spot.
const MAX_SORTED: usize = 4 * SMALL_SPOT;

/// Boxes of pixels, merging those that touch or are one pixel apart.
fn clusters(pixels: Vec<Spot>) -> Vec<Spot> {
    let mut boxes: Vec<Spot> = Vec::new();
    for pixel in pixels {
        let mut merged = pixel;
        // Whatever the new pixel joins, joins it and each other.
        boxes.retain(|b| {
            let near = b.near(merged);
            if near {
                merged = merged.union(*b);
            }
            !near
        });
        boxes.push(merged);
    }
    // A merged box may now reach one kept before it.
    let mut merged_any = true;
    while merged_any {
        merged_any = false;
        let mut i = 0;
        while i < boxes.len() {
            if let Some(j) = (i + 1..boxes.len()).find(|&j| boxes[i].near(boxes[j])) {
                let other = boxes.remove(j);
                boxes[i] = boxes[i].union(other);
                merged_any = true;
            } else {
                i += 1;
            }
        }
    }
    boxes
}

/// Compares two probes of the same size.
pub(super) fn difference(a: &Probe, b: &Probe, min_pixels: usize) -> Difference {
    let (width, height) = (a.width, a.height);
    let region_columns = bins(width, REGION_COLUMNS);
    let region_rows = bins(height, REGION_ROWS);
    let mut tally = Tally::new(region_columns.len() * region_rows.len());
    for (ry, rows) in region_rows.iter().enumerate() {
        for row in rows.clone() {
            for (rx, columns) in region_columns.iter().enumerate() {
                let region = ry * region_columns.len() + rx;
                let span = row * width + columns.start..row * width + columns.end;
                // A stretch that did not move adds nothing: compared a slice at a time.
                if (0..3).all(|p| a.planes[p][span.clone()] == b.planes[p][span.clone()]) {
                    continue;
                }
                for at in span {
                    let d =
                        [0, 1, 2].map(|p| i32::from(b.planes[p][at]) - i32::from(a.planes[p][at]));
                    tally.add(region, d, Spot::pixel(at % width, row));
                }
            }
        }
    }
    let len = (width * height).max(1) as f64;
    let counts = tally.over >= FEW_PIXELS || tally.strong >= min_pixels.max(1);
    let pixels = if counts { tally.over as f64 / len } else { 0.0 };
    let area = moved_area(&tally.sums, &region_rows, &region_columns, len);
    let spot = tally.spot.filter(|_| counts);
    Difference {
        // Sharp pixels measure a change more finely than whole regions do (which matters
        // when the largest changes are chosen): regions count when no pixel is sharp.
        changed: if pixels > 0.0 { pixels } else { area },
        spot,
        spots: match spot {
            None => Vec::new(),
            Some(all) if tally.pixels_over.len() > MAX_SORTED => vec![all],
            Some(_) => clusters(tally.pixels_over),
        },
        flicker: tally.flickering as f64 / len,
    }
}

/// What one pass over two probes counts: each region's signed Y, U, V sums, the pixels over
/// each threshold, and where the sharp ones are.
struct Tally {
    sums: Vec<[i64; 3]>,
    over: usize,
    strong: usize,
    flickering: usize,
    spot: Option<Spot>,
    pixels_over: Vec<Spot>,
}

impl Tally {
    fn new(regions: usize) -> Self {
        Tally {
            sums: vec![[0i64; 3]; regions],
            over: 0,
            strong: 0,
            flickering: 0,
            spot: None,
            pixels_over: Vec::new(),
        }
    }

    /// One pixel's Y, U, V difference `d`, in `region`, at `pixel`.
    #[inline]
    fn add(&mut self, region: usize, d: [i32; 3], pixel: Spot) {
        // Most of a screen stays put between samples: an unmoved pixel adds nothing to any
        // sum or count, so it skips the colour maths (most of the scan's time, measured).
        if d == [0; 3] {
            return;
        }
        for (sum, d) in self.sums[region].iter_mut().zip(d) {
            *sum += i64::from(d);
        }
        let delta = yiq_delta(d[0] as f32, d[1] as f32, d[2] as f32);
        self.flickering += usize::from(delta > FLICKER_THRESHOLD * FLICKER_THRESHOLD);
        if delta > PIXEL_THRESHOLD * PIXEL_THRESHOLD {
            self.over += 1;
            self.strong += usize::from(delta > STRONG_THRESHOLD * STRONG_THRESHOLD);
            self.spot = Some(self.spot.map_or(pixel, |s| s.union(pixel)));
            if self.pixels_over.len() <= MAX_SORTED {
                self.pixels_over.push(pixel);
            }
        }
    }
}

/// The share of the frame in regions whose mean colour moved; the whole frame when no region
/// moved but the frame's mean did (a slow fade everywhere).
fn moved_area(
    sums: &[[i64; 3]],
    region_rows: &[std::ops::Range<usize>],
    region_columns: &[std::ops::Range<usize>],
    len: f64,
) -> f64 {
    let area_limit = AREA_THRESHOLD * AREA_THRESHOLD;
    let mean_moved = |sum: &[i64; 3], count: usize| {
        let mean = sum.map(|s| s as f32 / count.max(1) as f32);
        yiq_delta(mean[0], mean[1], mean[2]) > area_limit
    };
    let (mut whole, mut area, mut pixels) = ([0i64; 3], 0usize, 0usize);
    for (ry, rows) in region_rows.iter().enumerate() {
        for (rx, columns) in region_columns.iter().enumerate() {
            let sum = &sums[ry * region_columns.len() + rx];
            for (w, s) in whole.iter_mut().zip(sum) {
                *w += s;
            }
            pixels += rows.len() * columns.len();
            if mean_moved(sum, rows.len() * columns.len()) {
                area += rows.len() * columns.len();
            }
        }
    }
    let area = area as f64 / len;
    if area == 0.0 && mean_moved(&whole, pixels) {
        return 1.0;
    }
    area
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
        let d = difference(&white, &pale, 2);
        assert_eq!(d.changed, 1.0);
        // Noise of +-10 levels everywhere, alternating: no mean moves, nothing changes, but
        // it flickers.
        let mut noisy = white.clone();
        for (i, y) in noisy.planes[0].iter_mut().enumerate() {
            *y = if i % 2 == 0 { *y - 10 } else { *y + 10 };
        }
        let d = difference(&white, &noisy, 2);
        assert_eq!(d.changed, 0.0);
        assert!(d.flicker > 0.9, "{d:?}");
    }

    #[test]
    fn a_small_sharp_change_counts_from_a_few_pixels_with_its_spot() {
        let white = flat(160, 90, yuv(255.0, 255.0, 255.0));
        let mut word = white.clone();
        // A dark word over 30 probe pixels.
        for row in 40..43 {
            word.planes[0][row * 160 + 70..row * 160 + 80].fill(60);
        }
        let d = difference(&white, &word, 2);
        assert!(d.changed >= 30.0 / 14400.0, "{d:?}");
        assert_eq!(
            d.spot,
            Some(Spot {
                x0: 70,
                y0: 40,
                x1: 80,
                y1: 43
            })
        );
        assert!(d.spot.unwrap().is_small());
        // A 12 px spinner at 640x360: 3x3 probe pixels, far under 0.1 % of the screen.
        let mut spinner = white.clone();
        for row in 40..43 {
            spinner.planes[0][row * 160 + 70..row * 160 + 73].fill(60);
        }
        assert!(difference(&white, &spinner, 2).changed > 0.0);
        // One pixel moved clearly is a change at the floor of one (a character of 12 px type),
        // not at two; a few pixels along an edge just over the threshold (0.13), as an
        // encoder sharpening a frame moves them, are none.
        let mut stray = white.clone();
        stray.planes[0][40 * 160 + 70] = 60;
        let d = difference(&white, &stray, 2);
        assert_eq!((d.changed, d.spot), (0.0, None));
        assert!(difference(&white, &stray, 1).changed > 0.0);
        let mut sharpened = white.clone();
        sharpened.planes[0][40 * 160 + 70..40 * 160 + 74].fill(235 - 30);
        assert_eq!(difference(&white, &sharpened, 1).changed, 0.0);
    }

    #[test]
    fn text_has_detail_and_a_flat_panel_has_none() {
        let g = Geometry {
            width: 640,
            height: 360,
        };
        let prober = Prober::new(g);
        let mut frame = vec![235u8; g.luma_len()];
        frame.extend(vec![128u8; 2 * g.chroma_len()]);
        assert!(!prober.has_detail(&frame, None));
        // A flat dark panel: edges, no strokes.
        let mut panel = frame.clone();
        for row in panel[..g.luma_len()]
            .chunks_exact_mut(640)
            .skip(60)
            .take(150)
        {
            row[20..190].fill(40);
        }
        assert!(!prober.has_detail(&panel, None));
        // "Text": 2 px strokes every 5 px along a line 12 px high.
        let mut text = frame.clone();
        for row in text[..g.luma_len()]
            .chunks_exact_mut(640)
            .skip(300)
            .take(12)
        {
            for x in (40..200).step_by(5) {
                row[x..x + 2].fill(40);
            }
        }
        assert!(prober.has_detail(&text, None));
        let elsewhere = Spot {
            x0: 0,
            y0: 0,
            x1: 40,
            y1: 40,
        };
        assert!(!prober.has_detail(&text, Some(elsewhere)));
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
        let d = difference(&white, &panel, 2);
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
