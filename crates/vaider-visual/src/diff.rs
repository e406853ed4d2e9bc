//! The pixel diff: a port of pixelmatch 7.2 (mapbox/pixelmatch, `index.js`) whose counts are
//! equal to the npm package's: the YIQ colour delta, the anti-aliasing detector, the same
//! blending of transparent pixels, the same diff image. What is added around it: identical
//! rows and runs of identical pixels (compared four pixels at a time as raw words) skip all the
//! colour maths, differing pixels get it eight at a time in `f64` vector lanes (and the
//! anti-aliasing detector its eight neighbours at once), bit for bit the scalar result, the
//! faded background of the diff image is computed once per run of one colour,
//! bands of rows run on every core (each pixel's verdict reads only its neighbours in the two
//! inputs, so bands are independent and the result is the same as one thread's), images of
//! different sizes are compared instead of refused, and odiff's ignore regions are honoured.
//!
//! Here: the walk over bands, rows and runs. Beside it: the colour maths in lanes (`colour`),
//! the anti-aliasing detector (`anti_alias`) and the diff picture, held small (`picture`).

use std::sync::Mutex;

mod anti_alias;
mod colour;
mod picture;
use colour::{colour_delta, opaque_deltas, LANES};

use image::RgbaImage;

use crate::mask::{set_in_row, ChangedMask};
pub use picture::DiffPicture;
use picture::{DiffRow, DiffRows, Paint};

/// pixelmatch's default: the smallest colour difference that counts, from 0 to 1.
pub const DEFAULT_THRESHOLD: f64 = 0.1;

/// 35215 is the largest possible YIQ delta; pixelmatch squares the threshold against it.
const MAX_YIQ_DELTA: f64 = 35215.0;

/// Rows a thread takes at a time: small enough to share uneven work (a page changes in a few
/// places), large enough that taking work costs nothing next to diffing it.
const BAND_ROWS: usize = 32;

/// pixelmatch's `diffColor` default.
pub const DIFF_RED: [u8; 3] = [255, 0, 0];
/// pixelmatch's `aaColor` default.
pub const ANTI_ALIAS_YELLOW: [u8; 3] = [255, 255, 0];

/// A rectangle of the canvas whose pixels never count as changed (odiff's ignore regions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct IgnoreRegion {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

impl IgnoreRegion {
    /// The columns `[start, end)` of row `y` the region covers, if any.
    fn span_in_row(&self, y: usize) -> Option<(usize, usize)> {
        let (top, bottom) = (self.y as usize, self.y as usize + self.height as usize);
        let (left, right) = (self.x as usize, self.x as usize + self.width as usize);
        (y >= top && y < bottom && left < right).then_some((left, right))
    }
}

/// What semi-transparent pixels are blended onto before their colours are compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AlphaBackground {
    /// pixelmatch 7.2's default (`checkerboard: true`).
    #[default]
    Checkerboard,
    /// Plain white, as pixelmatch 7.0 and 7.1 did (`checkerboard: false`).
    White,
}

/// How the diff decides and draws; the defaults are pixelmatch's.
#[derive(Debug, Clone, PartialEq)]
pub struct DiffOptions {
    /// From 0 to 1; smaller is more sensitive. pixelmatch's default is 0.1.
    pub threshold: f64,
    /// Count anti-aliased pixels as changes too (pixelmatch's `includeAA`).
    pub include_anti_aliasing: bool,
    /// What transparent pixels are blended onto.
    pub background: AlphaBackground,
    /// Opacity of the faded before-image in the diff image (pixelmatch's `alpha`).
    pub faded_opacity: f64,
    /// Draw the diff image; without it the diff only counts and marks.
    pub draw_diff_image: bool,
    /// Changed pixels in the diff image (pixelmatch's `diffColor`).
    pub diff_colour: [u8; 3],
    /// Changed pixels that got darker, when set (pixelmatch's `diffColorAlt`).
    pub diff_colour_alt: Option<[u8; 3]>,
    /// Anti-aliased pixels in the diff image (pixelmatch's `aaColor`).
    pub anti_alias_colour: [u8; 3],
    /// Rectangles never counted (odiff's `--ignore`); drawn as unchanged.
    pub ignore: Vec<IgnoreRegion>,
}

impl Default for DiffOptions {
    fn default() -> Self {
        DiffOptions {
            threshold: DEFAULT_THRESHOLD,
            include_anti_aliasing: false,
            background: AlphaBackground::default(),
            faded_opacity: 0.1,
            draw_diff_image: true,
            diff_colour: DIFF_RED,
            diff_colour_alt: None,
            anti_alias_colour: ANTI_ALIAS_YELLOW,
            ignore: Vec::new(),
        }
    }
}

/// The two sizes, when the images differ in size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeChange {
    pub before: (u32, u32),
    pub after: (u32, u32),
}

/// The result of diffing two images.
///
/// Images of different sizes are laid on one canvas as wide as the wider and as tall as the
/// taller, both at the top left. The overlap is diffed as pixelmatch would diff the two
/// cropped images; every pixel that is in one image but not in the other counts as changed
/// (it appeared or disappeared). Canvas pixels in neither image are not counted.
#[derive(Debug, Clone)]
pub struct PixelDiff {
    /// pixelmatch's count, plus the pixels outside the overlap when the sizes differ.
    pub changed_pixels: u64,
    /// Pixels of the canvas: the denominator of the changed share.
    pub canvas_pixels: u64,
    /// Which canvas pixels changed.
    pub mask: ChangedMask,
    /// pixelmatch's picture: the faded before-image, changes in red, anti-aliasing in yellow.
    pub diff_image: Option<DiffPicture>,
    /// Set when the two images differ in size.
    pub size_changed: Option<SizeChange>,
}

/// Diffs `before` against `after`; never fails, whatever the sizes.
pub fn diff_images(before: &RgbaImage, after: &RgbaImage, options: &DiffOptions) -> PixelDiff {
    let layout = Layout::new(before.dimensions(), after.dimensions());
    let mut mask = ChangedMask::new(layout.canvas_width as u32, layout.canvas_height as u32);
    let colours = [
        options.diff_colour,
        options.diff_colour_alt.unwrap_or(options.diff_colour),
        options.anti_alias_colour,
    ];
    let mut diff_image = options
        .draw_diff_image
        .then(|| DiffPicture::new(layout.canvas_width, layout.canvas_height, colours));
    let size_changed = (before.dimensions() != after.dimensions()).then_some(SizeChange {
        before: before.dimensions(),
        after: after.dimensions(),
    });
    let canvas_pixels = (layout.canvas_width * layout.canvas_height) as u64;
    if canvas_pixels == 0 {
        return PixelDiff {
            changed_pixels: 0,
            canvas_pixels,
            mask,
            diff_image,
            size_changed,
        };
    }
    let comparer = Comparer {
        before: Pixels::of(before),
        after: Pixels::of(after),
        layout,
        max_delta: MAX_YIQ_DELTA * options.threshold * options.threshold,
        include_anti_aliasing: options.include_anti_aliasing,
        background: options.background,
        faded_opacity: options.faded_opacity,
        words_per_row: mask.words_per_row(),
        ignore: &options.ignore,
    };
    let changed_pixels = comparer.run(&mut mask, diff_image.as_mut());
    PixelDiff {
        changed_pixels,
        canvas_pixels,
        mask,
        diff_image,
        size_changed,
    }
}

/// Where the two images sit on the shared canvas.
#[derive(Debug, Clone, Copy)]
struct Layout {
    before: (usize, usize),
    after: (usize, usize),
    canvas_width: usize,
    canvas_height: usize,
    /// The overlap, diffed as pixelmatch diffs two images of this size.
    width: usize,
    height: usize,
}

impl Layout {
    fn new(before: (u32, u32), after: (u32, u32)) -> Self {
        let before = (before.0 as usize, before.1 as usize);
        let after = (after.0 as usize, after.1 as usize);
        Layout {
            before,
            after,
            canvas_width: before.0.max(after.0),
            canvas_height: before.1.max(after.1),
            width: before.0.min(after.0),
            height: before.1.min(after.1),
        }
    }

    fn in_before(&self, x: usize, y: usize) -> bool {
        x < self.before.0 && y < self.before.1
    }

    fn in_after(&self, x: usize, y: usize) -> bool {
        x < self.after.0 && y < self.after.1
    }
}

/// An image's RGBA bytes read as pixels; reads outside give transparent black, never a panic.
#[derive(Clone, Copy)]
struct Pixels<'a> {
    bytes: &'a [u8],
    /// Pixels a row of this image holds (the image's own width, not the overlap's).
    stride: usize,
}

impl<'a> Pixels<'a> {
    fn of(image: &'a RgbaImage) -> Self {
        Pixels {
            bytes: image.as_raw(),
            stride: image.width() as usize,
        }
    }

    /// The pixel as one word: equal words are equal pixels, as pixelmatch's `Uint32Array`.
    #[inline]
    fn word(&self, x: usize, y: usize) -> u32 {
        u32::from_ne_bytes(self.rgba(x, y))
    }

    #[inline]
    fn rgba(&self, x: usize, y: usize) -> [u8; 4] {
        let at = (y * self.stride + x) * 4;
        self.bytes
            .get(at..at + 4)
            .and_then(|bytes| bytes.try_into().ok())
            .unwrap_or([0; 4])
    }

    /// The 3x3 pixels around (`x`, `y`), column by column as pixelmatch visits them (the
    /// centre is the fifth), when the pixel is not on an edge of the `width` x `height` overlap.
    #[inline]
    fn around(&self, x: usize, y: usize, width: usize, height: usize) -> Option<[[u8; 4]; 9]> {
        if x == 0 || y == 0 || x + 1 >= width || y + 1 >= height {
            return None;
        }
        let mut around = [[0; 4]; 9];
        for dy in 0..3 {
            let start = ((y + dy - 1) * self.stride + x - 1) * 4;
            let row = self.bytes.get(start..start + 12)?;
            for dx in 0..3 {
                around[dx * 3 + dy] = row[dx * 4..dx * 4 + 4].try_into().ok()?;
            }
        }
        Some(around)
    }

    /// The first `width` pixels of row `y`, as bytes.
    fn row(&self, y: usize, width: usize) -> &'a [u8] {
        let start = y * self.stride * 4;
        self.bytes.get(start..start + width * 4).unwrap_or(&[])
    }
}

/// One row of the overlap in both images, as bytes.
struct Row<'a> {
    y: usize,
    before: &'a [u8],
    after: &'a [u8],
}

/// One band of canvas rows: its first row, its mask words and its rows of the diff picture.
type Band<'m, 'd> = (usize, &'m mut [u64], Option<DiffRows<'d>>);

struct Comparer<'a> {
    before: Pixels<'a>,
    after: Pixels<'a>,
    layout: Layout,
    max_delta: f64,
    include_anti_aliasing: bool,
    background: AlphaBackground,
    faded_opacity: f64,
    words_per_row: usize,
    ignore: &'a [IgnoreRegion],
}

impl Comparer<'_> {
    /// Diffs every band on every core and returns the changed count.
    fn run(&self, mask: &mut ChangedMask, diff_image: Option<&mut DiffPicture>) -> u64 {
        let diff_bands: Box<dyn Iterator<Item = Option<DiffRows>>> = match diff_image {
            Some(picture) => Box::new(picture.bands_mut(BAND_ROWS).map(Some)),
            None => Box::new(std::iter::repeat_with(|| None)),
        };
        let bands: Vec<Band> = mask
            .row_bands_mut(BAND_ROWS)
            .zip(diff_bands)
            .enumerate()
            .map(|(index, (mask, diff))| (index * BAND_ROWS, mask, diff))
            .collect();
        let queue = Mutex::new(bands.into_iter());
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        std::thread::scope(|scope| {
            // A thread the system refuses is no failure: the calling thread works the queue too.
            let helpers: Vec<_> = (1..threads)
                .filter_map(|_| {
                    std::thread::Builder::new()
                        .spawn_scoped(scope, || self.work(&queue))
                        .ok()
                })
                .collect();
            let mine = self.work(&queue);
            helpers.into_iter().fold(mine, |total, helper| {
                total
                    + helper
                        .join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
        })
    }

    /// Takes bands off the queue until it is empty.
    fn work(&self, queue: &Mutex<std::vec::IntoIter<Band>>) -> u64 {
        let mut changed = 0;
        loop {
            // A poisoned queue means another thread panicked; that panic is re-raised at join.
            let Some((first_row, mask, diff)) =
                queue.lock().ok().and_then(|mut bands| bands.next())
            else {
                return changed;
            };
            changed += self.diff_band(first_row, mask, diff);
        }
    }

    fn diff_band(&self, first_row: usize, mask: &mut [u64], mut diff: Option<DiffRows>) -> u64 {
        let mut changed = 0;
        for (offset, mask_row) in mask.chunks_mut(self.words_per_row.max(1)).enumerate() {
            let y = first_row + offset;
            let mut diff_row = diff.as_mut().and_then(|band| band.row(offset));
            changed += self.diff_row(y, mask_row, diff_row.as_mut());
        }
        changed
    }

    fn diff_row(&self, y: usize, mask_row: &mut [u64], mut diff_row: Option<&mut DiffRow>) -> u64 {
        let overlap_end = if y < self.layout.height {
            self.layout.width
        } else {
            0
        };
        let ignored = self.ignored_spans(y);
        let mut changed = 0;
        if overlap_end > 0 {
            changed += self.diff_overlap_row(y, mask_row, diff_row.as_deref_mut(), &ignored);
        }
        for x in overlap_end..self.layout.canvas_width {
            let in_before = self.layout.in_before(x, y);
            let paint = if in_before != self.layout.in_after(x, y) && !is_ignored(&ignored, x) {
                set_in_row(mask_row, x);
                changed += 1;
                Paint::Changed
            } else {
                // White: pixelmatch's faded grey of nothing.
                Paint::Faded
            };
            draw(diff_row.as_deref_mut(), x, paint, 255);
        }
        changed
    }

    /// The ignore regions' column spans in row `y`.
    fn ignored_spans(&self, y: usize) -> Vec<(usize, usize)> {
        self.ignore
            .iter()
            .filter_map(|region| region.span_in_row(y))
            .collect()
    }

    /// pixelmatch's main loop over one row of the overlap: runs of identical pixels are found
    /// four pixels (16 bytes) at a time and only faded; a differing pixel gets the colour maths.
    fn diff_overlap_row(
        &self,
        y: usize,
        mask_row: &mut [u64],
        mut diff: Option<&mut DiffRow>,
        ignored: &[(usize, usize)],
    ) -> u64 {
        let width = self.layout.width;
        let (before_row, after_row) = (self.before.row(y, width), self.after.row(y, width));
        if before_row == after_row {
            self.fade_run(diff, before_row, 0, width);
            return 0;
        }
        let mut changed = 0;
        let mut x = 0;
        while x < width {
            let run_start = x;
            x = equal_run_end(before_row, after_row, x, width);
            self.fade_run(diff.as_deref_mut(), before_row, run_start, x);
            if x >= width {
                break;
            }
            // A change seldom comes alone: the next pixels get the colour maths together.
            let end = (x + LANES).min(width);
            let row = Row {
                y,
                before: before_row,
                after: after_row,
            };
            changed += self.diff_chunk(&row, x..end, mask_row, diff.as_deref_mut(), ignored);
            x = end;
        }
        changed
    }

    /// Up to `LANES` pixels from the first that differs: their colour deltas in vector lanes
    /// when all are opaque (a screenshot's pixels are), else one by one with the blending.
    /// Pixels among them that are equal get a delta of 0, as pixelmatch's equal-word test
    /// would give them: both only draw the faded pixel.
    fn diff_chunk(
        &self,
        row: &Row,
        columns: std::ops::Range<usize>,
        mask_row: &mut [u64],
        mut diff: Option<&mut DiffRow>,
        ignored: &[(usize, usize)],
    ) -> u64 {
        let bytes = columns.start * 4..columns.end * 4;
        let (before, after) = (
            row.before.get(bytes.clone()).unwrap_or(&[]),
            row.after.get(bytes).unwrap_or(&[]),
        );
        let lanes = opaque_deltas(before, after);
        let mut changed = 0;
        for (lane, x) in columns.enumerate() {
            let delta = match &lanes {
                Some(deltas) => deltas[lane],
                None => {
                    let (a, b) = (self.before.rgba(x, row.y), self.after.rgba(x, row.y));
                    let k = (row.y * self.layout.width + x) * 4;
                    colour_delta(a, b, k, self.background)
                }
            };
            changed += self.diff_pixel(x, row.y, delta, mask_row, diff.as_deref_mut(), ignored);
        }
        changed
    }

    /// One pixel given its colour delta: counted, anti-aliasing, or under the threshold.
    fn diff_pixel(
        &self,
        x: usize,
        y: usize,
        delta: f64,
        mask_row: &mut [u64],
        diff: Option<&mut DiffRow>,
        ignored: &[(usize, usize)],
    ) -> u64 {
        if delta.abs() <= self.max_delta || is_ignored(ignored, x) {
            self.draw_faded(diff, x, y);
            0
        } else if !self.include_anti_aliasing
            && (self.anti_aliased(self.before, x, y) || self.anti_aliased(self.after, x, y))
        {
            draw(diff, x, Paint::AntiAliased, 0);
            0
        } else {
            // pixelmatch: a negative delta is a pixel that got darker.
            let paint = if delta < 0.0 {
                Paint::Darker
            } else {
                Paint::Changed
            };
            draw(diff, x, paint, 0);
            set_in_row(mask_row, x);
            1
        }
    }

    /// Draws the faded before-image for pixels `[from, to)` of a row; a run of one colour (most
    /// of a page) costs one computation.
    fn fade_run(&self, diff: Option<&mut DiffRow>, before_row: &[u8], from: usize, to: usize) {
        let Some(diff) = diff else { return };
        let (Some(out), Some(pixels)) = (diff.greys(from, to), before_row.get(from * 4..to * 4))
        else {
            return;
        };
        let mut last: Option<([u8; 4], u8)> = None;
        for (out, pixel) in out.iter_mut().zip(pixels.chunks_exact(4)) {
            let rgba = [pixel[0], pixel[1], pixel[2], pixel[3]];
            let value = match last {
                Some((seen, value)) if seen == rgba => value,
                _ => {
                    let value = self.faded(rgba);
                    last = Some((rgba, value));
                    value
                }
            };
            *out = value;
        }
    }

    /// pixelmatch's `drawGrayPixel` for one pixel.
    fn draw_faded(&self, diff: Option<&mut DiffRow>, x: usize, y: usize) {
        if diff.is_some() {
            let value = self.faded(self.before.rgba(x, y));
            draw(diff, x, Paint::Faded, value);
        }
    }

    /// pixelmatch's `drawGrayPixel` value: the before-pixel's brightness, faded towards white.
    #[inline]
    fn faded(&self, [r, g, b, a]: [u8; 4]) -> u8 {
        let brightness =
            f64::from(r) * 0.29889531 + f64::from(g) * 0.58662247 + f64::from(b) * 0.11448223;
        let value = 255.0 + (brightness - 255.0) * self.faded_opacity * f64::from(a) / 255.0;
        // JavaScript's Uint8Array store truncates; `as` does too (and saturates, never wraps).
        value as u8
    }
}

/// The first column at or after `x` where the two rows differ (or `width`), comparing 16 bytes
/// at a time: the raw-word test that lets identical pixels skip the colour maths.
#[inline]
fn equal_run_end(before: &[u8], after: &[u8], mut x: usize, width: usize) -> usize {
    // The rows hold `width` pixels by construction; never read past them all the same.
    let width = width.min(before.len() / 4).min(after.len() / 4);
    while x + 4 <= width {
        let (a, b) = (&before[x * 4..x * 4 + 16], &after[x * 4..x * 4 + 16]);
        let a = u128::from_ne_bytes(a.try_into().unwrap_or([0; 16]));
        let b = u128::from_ne_bytes(b.try_into().unwrap_or([0; 16]));
        if a != b {
            break;
        }
        x += 4;
    }
    while x < width && before[x * 4..x * 4 + 4] == after[x * 4..x * 4 + 4] {
        x += 1;
    }
    x
}

/// Whether column `x` is in one of the row's ignored spans.
#[inline]
fn is_ignored(spans: &[(usize, usize)], x: usize) -> bool {
    spans.iter().any(|&(start, end)| x >= start && x < end)
}

/// Pixel `x` of the diff picture's row in `paint` (a faded pixel in its grey `value`).
fn draw(diff_row: Option<&mut DiffRow>, x: usize, paint: Paint, value: u8) {
    if let Some(row) = diff_row {
        row.draw(x, paint, value);
    }
}

#[cfg(test)]
mod tests {
    use image::Rgba;

    use super::colour::background_at;
    use super::*;

    fn filled(width: u32, height: u32, colour: [u8; 4]) -> RgbaImage {
        RgbaImage::from_pixel(width, height, Rgba(colour))
    }

    #[test]
    fn identical_images_have_no_changes() {
        let image = filled(40, 30, [10, 200, 30, 255]);
        let diff = diff_images(&image, &image.clone(), &DiffOptions::default());
        assert_eq!(diff.changed_pixels, 0);
        assert_eq!(diff.mask.count(), 0);
        assert_eq!(diff.size_changed, None);
        let drawn = diff.diff_image.expect("asked for the diff image");
        assert_eq!((drawn.width(), drawn.height()), (40, 30));
    }

    #[test]
    fn a_solid_block_of_new_colour_counts_every_pixel() {
        let before = filled(50, 50, [255; 4]);
        let mut after = before.clone();
        for y in 10..20 {
            for x in 10..20 {
                after.put_pixel(x, y, Rgba([0, 0, 0, 255]));
            }
        }
        let diff = diff_images(&before, &after, &DiffOptions::default());
        assert_eq!(diff.changed_pixels, 100);
        assert!(diff.mask.is_changed(10, 10) && diff.mask.is_changed(19, 19));
        assert!(!diff.mask.is_changed(20, 20));
        let drawn = diff.diff_image.expect("asked for the diff image").to_rgb();
        assert_eq!(drawn.get_pixel(15, 15).0, DIFF_RED);
        assert_eq!(drawn.get_pixel(0, 0).0, [255; 3]);
    }

    #[test]
    fn different_sizes_compare_the_overlap_and_count_the_rest() {
        let before = filled(20, 10, [0, 0, 255, 255]);
        let after = filled(10, 30, [0, 0, 255, 255]);
        let diff = diff_images(&before, &after, &DiffOptions::default());
        assert_eq!(
            diff.size_changed,
            Some(SizeChange {
                before: (20, 10),
                after: (10, 30)
            })
        );
        // 10x10 is only in before, 10x20 only in after; the 10x20 corner is in neither.
        assert_eq!(diff.changed_pixels, 100 + 200);
        assert_eq!(diff.canvas_pixels, 20 * 30);
        assert!(diff.mask.is_changed(15, 5) && diff.mask.is_changed(5, 25));
        assert!(!diff.mask.is_changed(15, 25) && !diff.mask.is_changed(5, 5));
    }

    #[test]
    fn empty_and_one_pixel_images_do_not_panic() {
        let empty = RgbaImage::new(0, 0);
        let dot = filled(1, 1, [1, 2, 3, 4]);
        assert_eq!(
            diff_images(&empty, &empty, &DiffOptions::default()).changed_pixels,
            0
        );
        assert_eq!(
            diff_images(&empty, &dot, &DiffOptions::default()).changed_pixels,
            1
        );
        let other_dot = filled(1, 1, [250, 2, 3, 255]);
        assert_eq!(
            diff_images(&dot, &other_dot, &DiffOptions::default()).changed_pixels,
            1
        );
        let line = filled(1, 5, [0, 0, 0, 255]);
        let other_line = filled(1, 5, [255, 255, 255, 255]);
        assert_eq!(
            diff_images(&line, &other_line, &DiffOptions::default()).changed_pixels,
            5
        );
    }

    /// The lanes give `colour_delta`'s very bits, for any chunk length and any place of a
    /// pixel in it; a chunk with a pixel that is not opaque is refused, to be blended one by one.
    #[test]
    fn lane_deltas_are_the_scalar_deltas_bit_for_bit() {
        let mut state = 7u64;
        let mut byte = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // Edges of the range half the time, anything the rest.
            let edges = [0, 1, 2, 127, 128, 253, 254, 255];
            let value = (state >> 33) as usize;
            match value % 2 {
                0 => edges[(value >> 1) % edges.len()],
                _ => (value >> 8) as u8,
            }
        };
        let mut checked = 0;
        for round in 0..20_000 {
            let pixels = 1 + round % LANES;
            let mut before = Vec::new();
            let mut after = Vec::new();
            for _ in 0..pixels {
                before.extend([byte(), byte(), byte(), 255]);
                after.extend([byte(), byte(), byte(), 255]);
            }
            let deltas = opaque_deltas(&before, &after).expect("all opaque");
            for (lane, (a, b)) in before.chunks(4).zip(after.chunks(4)).enumerate() {
                let a: [u8; 4] = a.try_into().expect("a pixel");
                let b: [u8; 4] = b.try_into().expect("a pixel");
                let scalar = colour_delta(a, b, lane * 4, AlphaBackground::Checkerboard);
                assert_eq!(
                    deltas[lane].to_bits(),
                    scalar.to_bits(),
                    "{a:?} against {b:?}"
                );
                checked += 1;
            }
            // Any pixel below full opacity, in either image, sends the chunk to the scalar path.
            let lane = round % pixels;
            let mut translucent = after.clone();
            translucent[lane * 4 + 3] = 254;
            assert_eq!(opaque_deltas(&before, &translucent), None);
            assert_eq!(opaque_deltas(&translucent, &before), None);
        }
        assert!(checked > 80_000);
    }

    #[test]
    fn the_checkerboard_red_is_always_48_as_in_pixelmatch() {
        for k in (0..4000).step_by(4) {
            assert_eq!(background_at(k, AlphaBackground::Checkerboard)[0], 48);
        }
        assert_eq!(background_at(8, AlphaBackground::White), [255; 3]);
    }
}
