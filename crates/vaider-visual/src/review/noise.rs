//! Noise learned, not hand-tuned: the same screen captured several times (or a test's
//! retries) differs only where the screen changes on its own (a clock, a spinner, an ad).
//! Every capture is compared with the first; the changed regions of all of them, merged, are
//! proposed as ignore regions with that reason, and kept with the baseline once approved.

use image::RgbaImage;

use super::baselines::IgnoredArea;
use crate::{diff_images, find_regions, DiffOptions, RegionOptions};

/// A learned box grows by this many pixels on each side: a clock's digits move a little.
const MARGIN: u32 = 4;

/// The regions that differ between captures of the same screen, merged, with the reason.
pub fn learn_noise(captures: &[RgbaImage]) -> Vec<IgnoredArea> {
    let Some(first) = captures.first() else {
        return Vec::new();
    };
    let mut boxes: Vec<(u32, u32, u32, u32)> = Vec::new();
    for other in &captures[1..] {
        let diff = diff_images(first, other, &DiffOptions::default());
        for r in find_regions(&diff.mask, &RegionOptions::default()) {
            let (w, h) = first.dimensions();
            let left = r.x.saturating_sub(MARGIN);
            let top = r.y.saturating_sub(MARGIN);
            let right = (r.x + r.width + MARGIN).min(w);
            let bottom = (r.y + r.height + MARGIN).min(h);
            boxes.push((left, top, right, bottom));
        }
    }
    let reason = format!(
        "differed between {} captures of the same screen",
        captures.len()
    );
    merge(boxes)
        .into_iter()
        .map(|(left, top, right, bottom)| IgnoredArea {
            x: left,
            y: top,
            width: right - left,
            height: bottom - top,
            reason: reason.clone(),
        })
        .collect()
}

/// Boxes that overlap or touch become one, until none do.
fn merge(mut boxes: Vec<(u32, u32, u32, u32)>) -> Vec<(u32, u32, u32, u32)> {
    let touch = |a: &(u32, u32, u32, u32), b: &(u32, u32, u32, u32)| {
        a.0 <= b.2 && b.0 <= a.2 && a.1 <= b.3 && b.1 <= a.3
    };
    let mut merged = true;
    while merged {
        merged = false;
        'outer: for i in 0..boxes.len() {
            for j in i + 1..boxes.len() {
                if touch(&boxes[i], &boxes[j]) {
                    let b = boxes.swap_remove(j);
                    let a = &mut boxes[i];
                    *a = (a.0.min(b.0), a.1.min(b.1), a.2.max(b.2), a.3.max(b.3));
                    merged = true;
                    break 'outer;
                }
            }
        }
    }
    boxes.sort_by_key(|b| (b.1, b.0));
    boxes
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgba;

    fn screen(clock: u8) -> RgbaImage {
        let mut image = RgbaImage::from_pixel(100, 60, Rgba([250, 250, 250, 255]));
        for y in 10..20 {
            for x in 70..70 + u32::from(clock % 5) * 4 + 5 {
                image.put_pixel(x, y, Rgba([0, 0, 0, 255]));
            }
        }
        image
    }

    #[test]
    fn the_part_that_changes_on_its_own_is_proposed_once() {
        let captures: Vec<RgbaImage> = (0..5).map(screen).collect();
        let learned = learn_noise(&captures);
        assert_eq!(learned.len(), 1, "{learned:?}");
        let area = &learned[0];
        assert!(area.x <= 75 && area.x + area.width >= 90, "{area:?}");
        assert!(area.y <= 10 && area.y + area.height >= 20, "{area:?}");
        assert!(area.reason.contains("5 captures"));
        assert!(learn_noise(&[screen(1), screen(1)]).is_empty());
        assert!(learn_noise(&[]).is_empty());
    }
}
