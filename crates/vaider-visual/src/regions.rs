//! The changed regions: what an agent reads as "3 things changed". Changed pixels that touch
//! (8-connected) form a region; regions a few pixels apart (the letters of one word, the parts
//! of one button) merge into one box; what is left with fewer changed pixels than the noise
//! tolerance (a 1-2 px speck of rendering noise) is dropped. Boxes are numbered from 1,
//! top to bottom, then left to right, the order the annotation labels them in.

use crate::mask::ChangedMask;

/// Changed boxes at most this many pixels apart merge into one.
pub const DEFAULT_MERGE_GAP: u32 = 8;

/// A region needs at least this many changed pixels to count: a 1 or 2 pixel speck is
/// rendering noise (font hinting, a cursor blink, a rounding in a gradient), 3 are kept so a
/// small real change (a full stop, a 2x2 dot) is not lost.
pub const DEFAULT_MIN_REGION_PIXELS: u64 = 3;

/// How changed pixels group into regions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionOptions {
    /// Boxes at most this many pixels apart (horizontally and vertically) merge.
    pub merge_gap: u32,
    /// The noise tolerance: a merged region with fewer changed pixels is dropped.
    pub min_region_pixels: u64,
}

impl Default for RegionOptions {
    fn default() -> Self {
        RegionOptions {
            merge_gap: DEFAULT_MERGE_GAP,
            min_region_pixels: DEFAULT_MIN_REGION_PIXELS,
        }
    }
}

/// One changed region: its number (from 1), its box and how many of its pixels changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Region {
    pub number: u32,
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
    pub changed_pixels: u64,
}

/// A box with inclusive edges, as it grows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Bounds {
    left: u32,
    top: u32,
    right: u32,
    bottom: u32,
    pixels: u64,
}

impl Bounds {
    fn at(x: u32, y: u32) -> Self {
        Bounds {
            left: x,
            top: y,
            right: x,
            bottom: y,
            pixels: 0,
        }
    }

    fn include(&mut self, x: u32, y: u32) {
        self.left = self.left.min(x);
        self.right = self.right.max(x);
        self.top = self.top.min(y);
        self.bottom = self.bottom.max(y);
        self.pixels += 1;
    }

    fn absorb(&mut self, other: &Bounds) {
        self.left = self.left.min(other.left);
        self.right = self.right.max(other.right);
        self.top = self.top.min(other.top);
        self.bottom = self.bottom.max(other.bottom);
        self.pixels += other.pixels;
    }

    /// Pixels strictly between the two boxes, across and down (0 when they overlap).
    fn is_within(&self, other: &Bounds, gap: u32) -> bool {
        let across = gap_between(self.left, self.right, other.left, other.right);
        let down = gap_between(self.top, self.bottom, other.top, other.bottom);
        across <= u64::from(gap) && down <= u64::from(gap)
    }
}

fn gap_between(start1: u32, end1: u32, start2: u32, end2: u32) -> u64 {
    if start2 > end1 {
        u64::from(start2 - end1 - 1)
    } else if start1 > end2 {
        u64::from(start1 - end2 - 1)
    } else {
        0
    }
}

/// The changed regions of a mask, numbered from 1 in reading order.
pub fn find_regions(mask: &ChangedMask, options: &RegionOptions) -> Vec<Region> {
    let merged = merge_close(connected_components(mask), options.merge_gap);
    let mut kept: Vec<Bounds> = merged
        .into_iter()
        .filter(|bounds| bounds.pixels >= options.min_region_pixels.max(1))
        .collect();
    kept.sort_by_key(|bounds| (bounds.top, bounds.left));
    kept.iter()
        .enumerate()
        .map(|(index, bounds)| Region {
            number: index as u32 + 1,
            x: bounds.left,
            y: bounds.top,
            width: bounds.right - bounds.left + 1,
            height: bounds.bottom - bounds.top + 1,
            changed_pixels: bounds.pixels,
        })
        .collect()
}

/// Boxes of the 8-connected groups of changed pixels, by a flood fill that clears what it
/// visits in a copy of the mask (so each pixel is visited once).
fn connected_components(mask: &ChangedMask) -> Vec<Bounds> {
    let mut unvisited = mask.clone();
    let mut components = Vec::new();
    let mut stack = Vec::new();
    for y in 0..mask.height() {
        for word_index in 0..unvisited.row(y).len() {
            loop {
                let word = unvisited.row(y).get(word_index).copied().unwrap_or(0);
                if word == 0 {
                    break;
                }
                let x = word_index as u32 * 64 + word.trailing_zeros();
                components.push(flood(&mut unvisited, x, y, &mut stack));
            }
        }
    }
    components
}

fn flood(unvisited: &mut ChangedMask, x: u32, y: u32, stack: &mut Vec<(u32, u32)>) -> Bounds {
    let mut bounds = Bounds::at(x, y);
    unvisited.clear(x, y);
    stack.push((x, y));
    while let Some((x, y)) = stack.pop() {
        bounds.include(x, y);
        for ny in y.saturating_sub(1)..=y.saturating_add(1) {
            for nx in x.saturating_sub(1)..=x.saturating_add(1) {
                if unvisited.is_changed(nx, ny) {
                    unvisited.clear(nx, ny);
                    stack.push((nx, ny));
                }
            }
        }
    }
    bounds
}

/// Merges boxes within `gap` of each other until no two are: a merged box can reach a box
/// that neither part reached, hence the passes.
fn merge_close(mut boxes: Vec<Bounds>, gap: u32) -> Vec<Bounds> {
    loop {
        boxes.sort_by_key(|bounds| (bounds.top, bounds.left));
        let mut merged_any = false;
        let mut alive = vec![true; boxes.len()];
        for i in 0..boxes.len() {
            if !alive[i] {
                continue;
            }
            let mut current = boxes[i];
            for j in i + 1..boxes.len() {
                // Sorted by top: nothing further down can be within reach.
                if u64::from(boxes[j].top) > u64::from(current.bottom) + u64::from(gap) + 1 {
                    break;
                }
                if alive[j] && current.is_within(&boxes[j], gap) {
                    current.absorb(&boxes[j]);
                    alive[j] = false;
                    merged_any = true;
                }
            }
            boxes[i] = current;
        }
        let mut flags = alive.into_iter();
        boxes.retain(|_| flags.next().unwrap_or(false));
        if !merged_any {
            return boxes;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask_with(width: u32, height: u32, blocks: &[(u32, u32, u32, u32)]) -> ChangedMask {
        let mut mask = ChangedMask::new(width, height);
        for &(left, top, w, h) in blocks {
            for y in top..top + h {
                for x in left..left + w {
                    mask.set_changed(x, y);
                }
            }
        }
        mask
    }

    #[test]
    fn no_changes_no_regions() {
        assert!(find_regions(&ChangedMask::new(50, 50), &RegionOptions::default()).is_empty());
        assert!(find_regions(&ChangedMask::new(0, 0), &RegionOptions::default()).is_empty());
    }

    #[test]
    fn diagonal_neighbours_are_one_region() {
        let mask = mask_with(20, 20, &[(2, 2, 1, 1), (3, 3, 1, 1), (4, 4, 1, 1)]);
        let options = RegionOptions {
            merge_gap: 0,
            min_region_pixels: 1,
        };
        let regions = find_regions(&mask, &options);
        assert_eq!(regions.len(), 1);
        assert_eq!(
            (
                regions[0].x,
                regions[0].y,
                regions[0].width,
                regions[0].height
            ),
            (2, 2, 3, 3)
        );
        assert_eq!(regions[0].changed_pixels, 3);
    }

    #[test]
    fn close_boxes_merge_and_far_ones_do_not() {
        // Two blocks 5 px apart merge; one 40 px away stays alone.
        let mask = mask_with(
            200,
            100,
            &[(10, 10, 10, 10), (25, 12, 10, 10), (80, 60, 10, 10)],
        );
        let regions = find_regions(&mask, &RegionOptions::default());
        assert_eq!(regions.len(), 2);
        assert_eq!(
            (
                regions[0].x,
                regions[0].y,
                regions[0].width,
                regions[0].height
            ),
            (10, 10, 25, 12)
        );
        assert_eq!(regions[0].changed_pixels, 200);
        assert_eq!((regions[1].number, regions[1].x, regions[1].y), (2, 80, 60));
    }

    #[test]
    fn merging_repeats_until_stable() {
        // The top-left block first reaches the bar below it; only the grown box reaches the
        // block at the top right, which the first pass had already passed by.
        let mask = mask_with(300, 300, &[(0, 0, 4, 4), (50, 2, 4, 4), (0, 10, 61, 3)]);
        let regions = find_regions(&mask, &RegionOptions::default());
        assert_eq!(regions.len(), 1, "{regions:?}");
    }

    #[test]
    fn regions_are_numbered_in_reading_order() {
        let mask = mask_with(
            300,
            300,
            &[(200, 10, 5, 5), (10, 10, 5, 5), (10, 200, 5, 5)],
        );
        let regions = find_regions(&mask, &RegionOptions::default());
        let order: Vec<_> = regions.iter().map(|r| (r.number, r.x, r.y)).collect();
        assert_eq!(order, vec![(1, 10, 10), (2, 200, 10), (3, 10, 200)]);
    }

    #[test]
    fn noise_specks_are_dropped_and_real_changes_kept() {
        let mask = mask_with(100, 100, &[(5, 5, 1, 1), (50, 5, 2, 1), (40, 40, 10, 10)]);
        let regions = find_regions(&mask, &RegionOptions::default());
        assert_eq!(regions.len(), 1);
        assert_eq!(
            (regions[0].x, regions[0].y, regions[0].changed_pixels),
            (40, 40, 100)
        );
    }
}
