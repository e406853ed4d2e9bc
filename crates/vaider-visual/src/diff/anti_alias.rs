//! pixelmatch's anti-aliasing detector (`antialiased` and `hasManySiblings`): whether a
//! differing pixel is an edge's anti-aliasing, drawn in yellow and not counted. An opaque 3x3
//! block (a screenshot's pixels are) is read once and its eight brightness deltas computed
//! together; any other goes pixel by pixel, in pixelmatch's order, with the same verdicts.

use super::colour::{brightness_delta, opaque_brightness_deltas, NEIGHBOURS};
use super::{Comparer, Pixels};

impl Comparer<'_> {
    /// pixelmatch's `antialiased`: after V. Vysniauskas's "Anti-aliased Pixel and Intensity
    /// Slope Detector" (2009). The neighbour order (x outer, y inner) decides ties, so it stays.
    pub(super) fn anti_aliased(&self, image: Pixels, x1: usize, y1: usize) -> bool {
        let (width, height) = (self.layout.width, self.layout.height);
        if let Some(around) = image.around(x1, y1, width, height) {
            if around.iter().all(|pixel| pixel[3] == 255) {
                return self.anti_aliased_opaque(&around, x1, y1);
            }
        }
        self.anti_aliased_one_by_one(image, x1, y1)
    }

    /// `anti_aliased` pixel by pixel, as pixelmatch does it: on the edges and by transparency.
    fn anti_aliased_one_by_one(&self, image: Pixels, x1: usize, y1: usize) -> bool {
        let (width, height) = (self.layout.width, self.layout.height);
        let (x0, y0) = (x1.saturating_sub(1), y1.saturating_sub(1));
        let (x2, y2) = ((x1 + 1).min(width - 1), (y1 + 1).min(height - 1));
        let k = (y1 * width + x1) * 4;
        let centre = image.rgba(x1, y1);
        let mut zeroes = u32::from(x1 == x0 || x1 == x2 || y1 == y0 || y1 == y2);
        let (mut min, mut max) = (0.0, 0.0);
        let (mut darkest, mut brightest) = ((0, 0), (0, 0));
        for x in x0..=x2 {
            for y in y0..=y2 {
                if x == x1 && y == y1 {
                    continue;
                }
                let delta = brightness_delta(centre, image.rgba(x, y), k, self.background);
                if delta == 0.0 {
                    zeroes += 1;
                    // More than two equal neighbours: certainly not anti-aliasing.
                    if zeroes > 2 {
                        return false;
                    }
                } else if delta < min {
                    min = delta;
                    darkest = (x, y);
                } else if delta > max {
                    max = delta;
                    brightest = (x, y);
                }
            }
        }
        // Anti-aliasing sits between a darker and a brighter neighbour.
        if min == 0.0 || max == 0.0 {
            return false;
        }
        // ...and one of them is a solid area (3+ equal neighbours) in both images.
        let solid = |(x, y)| {
            self.has_many_siblings(self.before, x, y) && self.has_many_siblings(self.after, x, y)
        };
        solid(darkest) || solid(brightest)
    }

    /// `anti_aliased` for an inner pixel whose neighbours are all opaque (nearly every pixel
    /// of a screenshot): the eight brightness deltas in vector lanes, then pixelmatch's scan
    /// over them in its order. Deltas it would not have computed (it stops at the third equal
    /// neighbour) change nothing: the scan stops at the same place.
    fn anti_aliased_opaque(&self, around: &[[u8; 4]; 9], x1: usize, y1: usize) -> bool {
        let deltas = opaque_brightness_deltas(around);
        // pixelmatch's scan, without its branches: it gives up at the third equal neighbour
        // wherever it comes; its running minimum starts at 0 and takes a delta only when
        // strictly lower, so it ends at the lowest negative delta, first met (likewise the
        // maximum), and a zero is never taken.
        let zeroes = deltas.iter().filter(|&&delta| delta == 0.0).count();
        if zeroes > 2 {
            return false;
        }
        let min = deltas.iter().fold(0.0f64, |min, &delta| min.min(delta));
        let max = deltas.iter().fold(0.0f64, |max, &delta| max.max(delta));
        if min == 0.0 || max == 0.0 {
            return false;
        }
        let first = |value: f64| deltas.iter().position(|&delta| delta == value).unwrap_or(0);
        let (darkest, brightest) = (first(min), first(max));
        let solid = |neighbour: usize| {
            let (dx, dy) = NEIGHBOURS[neighbour];
            let (x, y) = (x1 + dx - 1, y1 + dy - 1);
            self.has_many_siblings(self.before, x, y) && self.has_many_siblings(self.after, x, y)
        };
        solid(darkest) || solid(brightest)
    }

    /// pixelmatch's `hasManySiblings`: 3+ neighbours of exactly the same colour.
    fn has_many_siblings(&self, image: Pixels, x1: usize, y1: usize) -> bool {
        let (width, height) = (self.layout.width, self.layout.height);
        if let Some(around) = image.around(x1, y1, width, height) {
            // The centre is among the nine: three equal neighbours make four equal pixels.
            let centre = around[4];
            return around.iter().filter(|&&pixel| pixel == centre).count() > 3;
        }
        self.has_many_siblings_one_by_one(image, x1, y1)
    }

    /// `has_many_siblings` neighbour by neighbour, as pixelmatch does it: on the edges.
    fn has_many_siblings_one_by_one(&self, image: Pixels, x1: usize, y1: usize) -> bool {
        let (width, height) = (self.layout.width, self.layout.height);
        let (x0, y0) = (x1.saturating_sub(1), y1.saturating_sub(1));
        let (x2, y2) = ((x1 + 1).min(width - 1), (y1 + 1).min(height - 1));
        let value = image.word(x1, y1);
        let mut zeroes = u32::from(x1 == x0 || x1 == x2 || y1 == y0 || y1 == y2);
        for x in x0..=x2 {
            for y in y0..=y2 {
                if x == x1 && y == y1 {
                    continue;
                }
                zeroes += u32::from(value == image.word(x, y));
                if zeroes > 2 {
                    return true;
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use image::{Rgba, RgbaImage};

    use super::super::{AlphaBackground, Layout};
    use super::*;

    /// A noisy image with flat patches (so some pixels have many siblings, and edges between
    /// patches look anti-aliased), a few pixels semi-transparent.
    fn patchy(width: u32, height: u32, seed: u64) -> RgbaImage {
        let mut state = seed;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) as u32
        };
        RgbaImage::from_fn(width, height, |x, y| {
            let patch = ((x / 3 + y / 4) % 4) as u8;
            let noisy = next() % 3 == 0;
            let value = if noisy { next() as u8 } else { 40 + patch * 60 };
            let alpha = if next() % 40 == 0 { 128 } else { 255 };
            Rgba([value, value / 2 + patch, 255 - value, alpha])
        })
    }

    /// The 3x3 shortcuts (lanes for the brightness deltas, a block for the siblings) give the
    /// one-by-one verdicts of pixelmatch's order at every pixel, edges included.
    #[test]
    fn anti_aliasing_shortcuts_give_the_one_by_one_verdicts() {
        let (before, after) = (patchy(29, 23, 1), patchy(29, 23, 2));
        let comparer = Comparer {
            before: Pixels::of(&before),
            after: Pixels::of(&after),
            layout: Layout::new(before.dimensions(), after.dimensions()),
            max_delta: 0.0,
            include_anti_aliasing: false,
            background: AlphaBackground::Checkerboard,
            faded_opacity: 0.1,
            words_per_row: 1,
            ignore: &[],
        };
        let (mut anti_aliased, mut siblings) = (0, 0);
        for image in [comparer.before, comparer.after] {
            for y in 0..23 {
                for x in 0..29 {
                    let verdict = comparer.anti_aliased(image, x, y);
                    assert_eq!(
                        verdict,
                        comparer.anti_aliased_one_by_one(image, x, y),
                        "({x}, {y})"
                    );
                    let many = comparer.has_many_siblings(image, x, y);
                    let one_by_one = comparer.has_many_siblings_one_by_one(image, x, y);
                    assert_eq!(many, one_by_one, "siblings of ({x}, {y})");
                    anti_aliased += usize::from(verdict);
                    siblings += usize::from(many);
                }
            }
        }
        // Both verdicts occur, so the comparison means something.
        assert!(
            anti_aliased > 10 && anti_aliased < 2 * 29 * 23 - 10,
            "{anti_aliased}"
        );
        assert!(siblings > 10 && siblings < 2 * 29 * 23 - 10, "{siblings}");
    }
}
