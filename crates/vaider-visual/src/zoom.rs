//! The "zoom" pass: close-ups of the changed regions, cut from the two screenshots' own pixels
//! and magnified, for the vision model. A model is shown a whole screenshot shrunk to its
//! input size (a full page of 3446x10728 becomes about 250x768), where a changed word is a
//! smudge; in a close-up it reads the word. One sheet holds every close-up, a row per region
//! (its numbered tag, BEFORE, AFTER), so the model gets one more image, not one per region.

use image::imageops::{self, FilterType};
use image::{Rgb, RgbImage, RgbaImage};

use crate::annotate::{draw_tag, fill, over_white, region_colour, tag_size};
use crate::regions::Region;

/// At most this many regions get a close-up: the largest, so a sheet stays one image a model
/// takes whole. The prompt says which regions are shown.
pub const MAX_CLOSE_UPS: usize = 6;
/// A close-up is magnified until its longer side is about this long...
const TARGET_SIDE: u32 = 384;
/// ...but never more than this, so a 2-pixel change is not a blur of huge squares...
const MAX_MAGNIFY: u32 = 4;
/// ...and one larger than this is shrunk to it (it is then still sharper than the overview).
const MAX_SIDE: u32 = 768;
/// Context around a region, at least this many pixels, so the model sees what changed *in*.
const MIN_CONTEXT: u32 = 16;
const GAP: u32 = 8;
const BACKGROUND: [u8; 3] = [255, 255, 255];
/// Where a crop falls outside one image (the sizes differ): grey, as on the annotation.
const OUTSIDE: [u8; 3] = [128, 128, 128];

/// The close-up sheet and which regions it shows, top to bottom.
#[derive(Debug, Clone)]
pub struct CloseUps {
    pub image: RgbImage,
    pub regions: Vec<u32>,
}

/// Close-ups of the largest regions (at most [`MAX_CLOSE_UPS`]), in number order; none when
/// there are no regions.
pub fn close_ups(before: &RgbaImage, after: &RgbaImage, regions: &[Region]) -> Option<CloseUps> {
    BeforeCrops::cut(before, after.dimensions(), regions).map(|crops| crops.finish(after))
}

/// The before-image's side of the close-ups, cut first so that the before-image (a full-size
/// picture) can be let go before the sheet is drawn: the crops are small, the image is not.
pub struct BeforeCrops {
    chosen: Vec<Region>,
    canvas: (u32, u32),
    crops: Vec<RgbImage>,
}

impl BeforeCrops {
    /// The largest regions' before-crops; none when there are no regions.
    pub fn cut(before: &RgbaImage, after_size: (u32, u32), regions: &[Region]) -> Option<Self> {
        let mut chosen: Vec<Region> = regions.to_vec();
        chosen.sort_by_key(|r| std::cmp::Reverse(r.changed_pixels));
        chosen.truncate(MAX_CLOSE_UPS);
        chosen.sort_by_key(|r| r.number);
        if chosen.is_empty() {
            return None;
        }
        let canvas = (
            before.width().max(after_size.0),
            before.height().max(after_size.1),
        );
        let crops = chosen.iter().map(|r| crop(before, r, canvas)).collect();
        Some(BeforeCrops {
            chosen,
            canvas,
            crops,
        })
    }

    /// The sheet: laid out from the rows' sizes, then each row's after-crop is cut, drawn in
    /// and dropped.
    pub fn finish(self, after: &RgbaImage) -> CloseUps {
        let canvas = self.canvas;
        let sizes: Vec<(u32, u32)> = self.chosen.iter().map(|r| row_size(r, canvas)).collect();
        let width = sizes.iter().map(|size| size.0).max().unwrap_or(1);
        let height = sizes.iter().map(|size| size.1 + GAP).sum::<u32>().max(1);
        let mut sheet = RgbImage::from_pixel(width, height, Rgb(BACKGROUND));
        let mut top = 0;
        for ((region, before), size) in self.chosen.iter().zip(self.crops).zip(&sizes) {
            let row = Row {
                number: region.number,
                before,
                after: crop(after, region, canvas),
            };
            row.draw(&mut sheet, top);
            top += size.1 + GAP;
        }
        CloseUps {
            image: sheet,
            regions: self.chosen.iter().map(|r| r.number).collect(),
        }
    }
}

/// The size a region's row will have, before any pixel is cut: both crops are its context box
/// at its scale, as `magnify` sizes them.
fn row_size(region: &Region, canvas: (u32, u32)) -> (u32, u32) {
    let (_, _, width, height) = context_box(region, canvas);
    let scale = scale_for(width.max(height));
    let (width, height) = (magnified(width, scale), magnified(height, scale));
    let (tag_width, tag_height) = tag_size(region.number);
    (
        tag_width + GAP + width + GAP + width,
        tag_height.max(height),
    )
}

/// A side's length once magnified or shrunk by `scale`.
fn magnified(side: u32, scale: f64) -> u32 {
    if scale == 1.0 {
        return side;
    }
    ((f64::from(side) * scale).round() as u32).max(1)
}

/// One region's row: its number and the two crops, each at the same scale.
struct Row {
    number: u32,
    before: RgbImage,
    after: RgbImage,
}

/// One image's crop of a region with its context, at the row's scale, outlined.
fn crop(image: &RgbaImage, region: &Region, canvas: (u32, u32)) -> RgbImage {
    let context = context_box(region, canvas);
    let scale = scale_for(context.2.max(context.3));
    let mut crop = match shrunk_in_place(image, context, scale) {
        Some(shrunk) => shrunk,
        None => magnify(&cut(image, context), scale),
    };
    outline(&mut crop, region, context, scale);
    crop
}

/// A crop to be shrunk, shrunk straight from the image (then flattened onto white), so that a
/// large region's full-size cut is never held: at 4K it was the comparison's peak. None when
/// the crop is not shrunk or reaches outside the image (its grey is drawn by `cut`).
fn shrunk_in_place(
    image: &RgbaImage,
    (left, top, width, height): (u32, u32, u32, u32),
    scale: f64,
) -> Option<RgbImage> {
    let inside = left + width <= image.width() && top + height <= image.height();
    if scale >= 1.0 || !inside {
        return None;
    }
    let view = imageops::crop_imm(image, left, top, width, height);
    let (to_width, to_height) = (magnified(width, scale), magnified(height, scale));
    let shrunk = match scale <= 0.5 {
        true => imageops::thumbnail(&*view, to_width, to_height),
        false => imageops::resize(&*view, to_width, to_height, FilterType::Triangle),
    };
    Some(flatten(&shrunk))
}

/// An RGBA picture flattened onto white.
fn flatten(image: &RgbaImage) -> RgbImage {
    RgbImage::from_fn(image.width(), image.height(), |x, y| {
        over_white(image.get_pixel(x, y).0)
    })
}

impl Row {
    /// Draws the row's tag and two crops on the sheet, `top` pixels down.
    fn draw(&self, sheet: &mut RgbImage, top: u32) {
        let (tag_width, _) = tag_size(self.number);
        draw_tag(
            sheet,
            self.number,
            0,
            i64::from(top),
            region_colour(self.number),
        );
        let left = tag_width + GAP;
        imageops::replace(sheet, &self.before, i64::from(left), i64::from(top));
        let right = left + self.before.width() + GAP;
        imageops::replace(sheet, &self.after, i64::from(right), i64::from(top));
    }
}

/// The region with context around it, within the canvas: (x, y, width, height).
fn context_box(region: &Region, (width, height): (u32, u32)) -> (u32, u32, u32, u32) {
    let margin = MIN_CONTEXT.max(region.width.max(region.height) / 4);
    let left = region.x.saturating_sub(margin);
    let top = region.y.saturating_sub(margin);
    let right = (region.x + region.width + margin).min(width);
    let bottom = (region.y + region.height + margin).min(height);
    (left, top, right - left, bottom - top)
}

/// How much a crop with this longer side is magnified (over 1) or shrunk (under 1).
fn scale_for(longer_side: u32) -> f64 {
    let longer = longer_side.max(1);
    if longer > MAX_SIDE {
        return f64::from(MAX_SIDE) / f64::from(longer);
    }
    f64::from((TARGET_SIDE / longer).clamp(1, MAX_MAGNIFY))
}

/// The box cut from one image, flattened onto white; grey where the image does not reach.
fn cut(image: &RgbaImage, (left, top, width, height): (u32, u32, u32, u32)) -> RgbImage {
    RgbImage::from_fn(width, height, |x, y| {
        let (x, y) = (left + x, top + y);
        if x >= image.width() || y >= image.height() {
            return Rgb(OUTSIDE);
        }
        over_white(image.get_pixel(x, y).0)
    })
}

/// Whole-number magnification keeps every pixel a sharp square (text stays legible); a crop
/// too large is shrunk smoothly instead.
fn magnify(crop: &RgbImage, scale: f64) -> RgbImage {
    let size = |side: u32| magnified(side, scale);
    let filter = if scale >= 1.0 {
        FilterType::Nearest
    } else {
        FilterType::Triangle
    };
    if scale == 1.0 {
        return crop.clone();
    }
    if scale <= 0.5 {
        // Shrunk to half or less: each output pixel the average of its own source pixels, the
        // fast integer way (a replaced photo's close-up took a fifth of a 4K comparison with
        // the smooth filter); nearer 1 that averaging would alias, so the filter stays.
        return imageops::thumbnail(crop, size(crop.width()), size(crop.height()));
    }
    imageops::resize(crop, size(crop.width()), size(crop.height()), filter)
}

/// A thin frame in the region's colour just outside the region, so the close-up shows which
/// pixels changed without covering any of them.
fn outline(crop: &mut RgbImage, region: &Region, context: (u32, u32, u32, u32), scale: f64) {
    let at = |v: u32, origin: u32| (f64::from(v.saturating_sub(origin)) * scale).round() as i64;
    let left = at(region.x, context.0) - 2;
    let top = at(region.y, context.1) - 2;
    let right = at(region.x + region.width, context.0) + 1;
    let bottom = at(region.y + region.height, context.1) + 1;
    let colour = region_colour(region.number);
    fill(crop, left, top, right, top, colour);
    fill(crop, left, bottom, right, bottom, colour);
    fill(crop, left, top, left, bottom, colour);
    fill(crop, right, top, right, bottom, colour);
}

#[cfg(test)]
mod tests {
    use super::*;
    use image::Rgba;

    fn region(number: u32, x: u32, y: u32, width: u32, height: u32, pixels: u64) -> Region {
        Region {
            number,
            x,
            y,
            width,
            height,
            changed_pixels: pixels,
        }
    }

    #[test]
    fn a_small_change_on_a_large_page_is_shown_magnified_from_its_own_pixels() {
        let before = RgbaImage::from_pixel(2000, 3000, Rgba([255, 255, 255, 255]));
        let mut after = before.clone();
        // A 3x2 dark mark, as a full stop that appeared.
        for (x, y) in [(1000, 2000), (1001, 2000), (1002, 2000), (1000, 2001)] {
            after.put_pixel(x, y, Rgba([0, 0, 0, 255]));
        }
        let shown = close_ups(&before, &after, &[region(1, 1000, 2000, 3, 2, 4)]).unwrap();
        assert_eq!(shown.regions, [1]);
        // Context 16 px each side: 35x34, magnified 4x (the most) to 140x136, twice, with the
        // tag and the gaps.
        let (tag_width, _) = tag_size(1);
        assert_eq!(shown.image.width(), tag_width + GAP + 140 + GAP + 140);
        let after_left = tag_width + GAP + 140 + GAP;
        // The mark's first pixel is a 4x4 black square 16 px (x4) into the AFTER crop...
        for dx in 0..4 {
            for dy in 0..4 {
                let p = shown.image.get_pixel(after_left + 64 + dx, 64 + dy);
                assert_eq!(p.0, [0, 0, 0], "at +{dx},+{dy}");
            }
        }
        // ...and white at the same place in the BEFORE crop.
        let before_left = tag_width + GAP;
        assert_eq!(shown.image.get_pixel(before_left + 64, 64).0, [255; 3]);
    }

    #[test]
    fn only_the_largest_regions_get_close_ups_in_number_order() {
        let image = RgbaImage::from_pixel(400, 400, Rgba([200, 200, 200, 255]));
        let regions: Vec<Region> = (1..=8)
            .map(|n| region(n, 10 * n, 40 * n, 5, 5, u64::from(n)))
            .collect();
        let shown = close_ups(&image, &image, &regions).unwrap();
        assert_eq!(shown.regions, [3, 4, 5, 6, 7, 8]);
        assert!(close_ups(&image, &image, &[]).is_none());
    }

    #[test]
    fn a_large_region_is_shrunk_and_one_outside_a_smaller_image_is_grey() {
        let before = RgbaImage::from_pixel(100, 100, Rgba([0, 0, 255, 255]));
        let after = RgbaImage::from_pixel(3000, 1200, Rgba([0, 255, 0, 255]));
        // The region lies where only the after-image reaches (a layout change).
        let shown = close_ups(&before, &after, &[region(1, 200, 100, 2600, 1000, 9)]).unwrap();
        assert!(
            shown.image.width() <= 2 * MAX_SIDE + 64,
            "{}",
            shown.image.width()
        );
        let (tag_width, _) = tag_size(1);
        let middle = shown.image.get_pixel(tag_width + GAP + 300, 200).0;
        assert!(
            middle.iter().all(|c| c.abs_diff(OUTSIDE[0]) <= 1),
            "{middle:?}"
        );
    }

    /// A crop shrunk to about a third averages its pixels: fine stripes become grey, not one
    /// of their colours (as picking pixels would), so a shrunk close-up does not lie.
    #[test]
    fn a_crop_shrunk_a_lot_averages_its_pixels() {
        let stripes = RgbImage::from_fn(2400, 300, |x, _| Rgb([(x % 2 * 255) as u8; 3]));
        let small = magnify(&stripes, 0.32);
        assert_eq!(small.dimensions(), (768, 96));
        for pixel in small.pixels() {
            // Three or four stripes to a pixel: a third to two thirds white.
            assert!(
                pixel.0.iter().all(|&c| (60..=195).contains(&c)),
                "{pixel:?}"
            );
        }
    }

    /// A crop shrunk straight from the image is the crop cut and then shrunk: the same size
    /// and, on opaque pixels, the same averages (within rounding), at both filters; a crop
    /// that is magnified or reaches outside the image is left to `cut`.
    #[test]
    fn a_crop_shrunk_in_place_is_the_crop_cut_then_shrunk() {
        let image = RgbaImage::from_fn(3000, 900, |x, y| {
            Rgba([
                (x % 2 * 255) as u8,
                (y % 3 * 100) as u8,
                ((x / 7) % 256) as u8,
                255,
            ])
        });
        let context = (100, 50, 2400, 700);
        for scale in [0.32, 0.5, 0.75] {
            let shrunk = shrunk_in_place(&image, context, scale).expect("inside, shrunk");
            let reference = magnify(&cut(&image, context), scale);
            assert_eq!(shrunk.dimensions(), reference.dimensions(), "scale {scale}");
            for (a, b) in shrunk.pixels().zip(reference.pixels()) {
                let close = a.0.iter().zip(b.0).all(|(a, b)| a.abs_diff(b) <= 1);
                assert!(close, "scale {scale}: {a:?} against {b:?}");
            }
        }
        assert!(shrunk_in_place(&image, context, 2.0).is_none());
        assert!(shrunk_in_place(&image, (2000, 0, 1200, 100), 0.5).is_none());
    }

    /// The sheet is laid out before the crops are cut: the sizes foreseen are those the crops
    /// get, whether magnified, kept or shrunk, at a corner or on a canvas wider than an image.
    #[test]
    fn each_row_gets_the_size_laid_out_for_it() {
        let before = RgbaImage::from_pixel(900, 700, Rgba([255; 4]));
        let after = RgbaImage::from_pixel(1000, 600, Rgba([0, 0, 0, 255]));
        let canvas = (1000, 700);
        let regions = [
            region(1, 10, 10, 1, 1, 1),
            region(2, 0, 0, 3, 40, 9),
            region(3, 500, 300, 97, 13, 100),
            region(4, 100, 100, 383, 5, 100),
            region(5, 0, 0, 1000, 700, 1000),
            region(6, 950, 650, 50, 50, 10),
            region(12, 200, 200, 800, 33, 5),
        ];
        for r in &regions {
            let row = Row {
                number: r.number,
                before: crop(&before, r, canvas),
                after: crop(&after, r, canvas),
            };
            let (tag_width, tag_height) = tag_size(r.number);
            let actual = (
                tag_width + GAP + row.before.width() + GAP + row.after.width(),
                tag_height.max(row.before.height()).max(row.after.height()),
            );
            assert_eq!(row_size(r, canvas), actual, "region {r:?}");
        }
        let shown = close_ups(&before, &after, &regions).expect("regions were given");
        let expected_height: u32 = shown
            .regions
            .iter()
            .map(|n| regions.iter().find(|r| r.number == *n).expect("a region"))
            .map(|r| row_size(r, canvas).1 + GAP)
            .sum();
        assert_eq!(shown.image.height(), expected_height);
    }

    #[test]
    fn a_region_at_the_corner_does_not_panic() {
        let image = RgbaImage::from_pixel(10, 10, Rgba([0, 0, 0, 0]));
        let shown = close_ups(&image, &image, &[region(12, 0, 0, 10, 10, 100)]).unwrap();
        assert_eq!(shown.regions, [12]);
    }
}
