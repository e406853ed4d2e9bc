//! The pictures made from a diff for an agent or a vision model to look at: the after-image
//! with each changed region boxed and numbered (the numbers the report uses), and a heat map
//! of where changes are dense over the dimmed after-image. Digits come from a built-in 3x5
//! bitmap font, so no font file is needed.

use image::{Rgb, RgbImage, RgbaImage};

use crate::mask::ChangedMask;
use crate::regions::Region;

/// Distinct box colours, taken in turn (Sasha Trubetskoy's list of distinct colours).
const PALETTE: [[u8; 3]; 8] = [
    [230, 25, 75],
    [0, 130, 200],
    [245, 130, 48],
    [145, 30, 180],
    [60, 180, 75],
    [240, 50, 230],
    [0, 128, 128],
    [170, 110, 40],
];

/// Where the canvas shows no after-image (the before-image was larger): a neutral grey.
const OUTSIDE_GREY: [u8; 3] = [128, 128, 128];
const OUTLINE_WIDTH: u32 = 3;
/// Space between a region's pixels and its outline, so the outline hides nothing changed.
const OUTLINE_PADDING: u32 = 2;
/// Each font pixel is drawn as a square this many pixels wide.
const FONT_SCALE: u32 = 3;
const LABEL_PADDING: u32 = 3;

/// The digits 0-9, 3 pixels wide and 5 high; each row's bits read left to right from bit 2.
const DIGITS: [[u8; 5]; 10] = [
    [0b111, 0b101, 0b101, 0b101, 0b111],
    [0b010, 0b110, 0b010, 0b010, 0b111],
    [0b111, 0b001, 0b111, 0b100, 0b111],
    [0b111, 0b001, 0b011, 0b001, 0b111],
    [0b101, 0b101, 0b111, 0b001, 0b001],
    [0b111, 0b100, 0b111, 0b001, 0b111],
    [0b111, 0b100, 0b111, 0b101, 0b111],
    [0b111, 0b001, 0b010, 0b010, 0b010],
    [0b111, 0b101, 0b111, 0b101, 0b111],
    [0b111, 0b101, 0b111, 0b001, 0b111],
];

/// The after-image on a canvas of the given size, with each region boxed and numbered.
pub fn annotation_image(after: &RgbaImage, canvas: (u32, u32), regions: &[Region]) -> RgbImage {
    let mut image = after_on_canvas(after, canvas);
    for region in regions {
        let colour = region_colour(region.number);
        draw_outline(&mut image, region, colour);
        draw_label(&mut image, region, colour);
    }
    image
}

/// A pixel blended onto white by its alpha: how every picture of a comparison shows
/// transparency.
pub(crate) fn over_white([r, g, b, a]: [u8; 4]) -> Rgb<u8> {
    let over = |c: u8| ((u32::from(c) * u32::from(a) + 255 * (255 - u32::from(a))) / 255) as u8;
    Rgb([over(r), over(g), over(b)])
}

/// The after-image flattened onto white (its alpha blended), at the top left of the canvas.
/// Row by row, an opaque pixel copied as it is (the blend would give the same bytes): a 4K
/// screenshot is 8 million pixels, drawn for the annotation and again for the heat map.
fn after_on_canvas(after: &RgbaImage, (width, height): (u32, u32)) -> RgbImage {
    let (width_px, covered) = (width as usize, after.width().min(width) as usize);
    let mut bytes = Vec::with_capacity(width_px * height as usize * 3);
    let after_rows = after
        .as_raw()
        .chunks_exact((after.width() as usize * 4).max(1));
    for row in after_rows.take(height as usize) {
        for pixel in row[..covered * 4].chunks_exact(4) {
            if pixel[3] == 255 {
                bytes.extend_from_slice(&pixel[..3]);
            } else {
                let [r, g, b, a] = [pixel[0], pixel[1], pixel[2], pixel[3]];
                bytes.extend_from_slice(&over_white([r, g, b, a]).0);
            }
        }
        for _ in covered..width_px {
            bytes.extend_from_slice(&OUTSIDE_GREY);
        }
    }
    // Rows below the after-image.
    while bytes.len() < width_px * height as usize * 3 {
        bytes.extend_from_slice(&OUTSIDE_GREY);
    }
    RgbImage::from_raw(width, height, bytes).unwrap_or_else(|| RgbImage::new(width, height))
}

fn draw_outline(image: &mut RgbImage, region: &Region, colour: [u8; 3]) {
    let margin = OUTLINE_PADDING + OUTLINE_WIDTH;
    let left = i64::from(region.x) - i64::from(margin);
    let top = i64::from(region.y) - i64::from(margin);
    let right = i64::from(region.x) + i64::from(region.width) - 1 + i64::from(margin);
    let bottom = i64::from(region.y) + i64::from(region.height) - 1 + i64::from(margin);
    let width = i64::from(OUTLINE_WIDTH);
    fill(image, left, top, right, top + width - 1, colour);
    fill(image, left, bottom - width + 1, right, bottom, colour);
    fill(image, left, top, left + width - 1, bottom, colour);
    fill(image, right - width + 1, top, right, bottom, colour);
}

/// The region's number in white on a tag of its colour, just above its box's top-left corner,
/// or inside the box when there is no room above.
fn draw_label(image: &mut RgbImage, region: &Region, colour: [u8; 3]) {
    let (_, tag_height) = tag_size(region.number);
    let margin = i64::from(OUTLINE_PADDING + OUTLINE_WIDTH);
    let left = (i64::from(region.x) - margin).max(0);
    let above = i64::from(region.y) - margin - i64::from(tag_height);
    let top = if above >= 0 {
        above
    } else {
        (i64::from(region.y) - margin).max(0)
    };
    draw_tag(image, region.number, left, top, colour);
}

/// The width and height of a number's tag.
pub(crate) fn tag_size(number: u32) -> (u32, u32) {
    let digits = number.to_string().len() as u32;
    let text_width = digits * (3 * FONT_SCALE + FONT_SCALE) - FONT_SCALE;
    (
        text_width + 2 * LABEL_PADDING,
        5 * FONT_SCALE + 2 * LABEL_PADDING,
    )
}

/// A number in white on a tag of the given colour, its top-left corner at (`left`, `top`).
pub(crate) fn draw_tag(image: &mut RgbImage, number: u32, left: i64, top: i64, colour: [u8; 3]) {
    let (tag_width, tag_height) = tag_size(number);
    fill(
        image,
        left,
        top,
        left + i64::from(tag_width) - 1,
        top + i64::from(tag_height) - 1,
        colour,
    );
    let mut x = left + i64::from(LABEL_PADDING);
    for digit in number.to_string().bytes() {
        draw_digit(
            image,
            usize::from(digit - b'0'),
            x,
            top + i64::from(LABEL_PADDING),
        );
        x += i64::from(3 * FONT_SCALE + FONT_SCALE);
    }
}

/// The colour of a region's box and tag.
pub(crate) fn region_colour(number: u32) -> [u8; 3] {
    PALETTE[(number as usize).saturating_sub(1) % PALETTE.len()]
}

fn draw_digit(image: &mut RgbImage, digit: usize, left: i64, top: i64) {
    let Some(rows) = DIGITS.get(digit) else {
        return;
    };
    let scale = i64::from(FONT_SCALE);
    for (row, bits) in rows.iter().enumerate() {
        for column in 0..3 {
            if bits & (0b100 >> column) != 0 {
                let x = left + column * scale;
                let y = top + row as i64 * scale;
                fill(image, x, y, x + scale - 1, y + scale - 1, [255; 3]);
            }
        }
    }
}

/// Fills the rectangle with inclusive corners, clipped to the image.
pub(crate) fn fill(
    image: &mut RgbImage,
    left: i64,
    top: i64,
    right: i64,
    bottom: i64,
    colour: [u8; 3],
) {
    let (width, height) = (i64::from(image.width()), i64::from(image.height()));
    let (left, top) = (left.max(0), top.max(0));
    let (right, bottom) = (right.min(width - 1), bottom.min(height - 1));
    for y in top..=bottom {
        for x in left..=right {
            image.put_pixel(x as u32, y as u32, Rgb(colour));
        }
    }
}

/// Cells of this many pixels square are counted for the heat map: coarse enough to be fast on a
/// full-page shot, fine enough to show which line of text changed.
const HEAT_CELL: u32 = 8;

/// Where changes are dense: each cell's share of changed pixels, blurred over its neighbours,
/// coloured from blue (a few) to red (all), over the after-image dimmed to a third.
pub fn heat_map_image(after: &RgbaImage, mask: &ChangedMask) -> RgbImage {
    let density = blurred_density(mask);
    let cells_across = mask.width().div_ceil(HEAT_CELL) as usize;
    let base = after_on_canvas(after, (mask.width(), mask.height()));
    let mut image = base;
    for (x, y, pixel) in image.enumerate_pixels_mut() {
        let cell = (y / HEAT_CELL) as usize * cells_across + (x / HEAT_CELL) as usize;
        let heat = density.get(cell).copied().unwrap_or(0.0);
        let dimmed = pixel.0.map(|c| c / 3);
        pixel.0 = if heat > 0.0 {
            // Even a faint change shows: the colour is at least 40% opaque.
            let opacity = 0.4 + 0.6 * heat;
            let colour = heat_colour(heat);
            std::array::from_fn(|i| {
                (f32::from(dimmed[i]) * (1.0 - opacity) + f32::from(colour[i]) * opacity) as u8
            })
        } else {
            dimmed
        };
    }
    image
}

/// Per cell, the share of changed pixels in it and its 8 neighbours, from 0 to 1 (square-rooted
/// so a thin line of changed text is not invisible next to a replaced picture).
fn blurred_density(mask: &ChangedMask) -> Vec<f32> {
    let across = mask.width().div_ceil(HEAT_CELL) as usize;
    let down = mask.height().div_ceil(HEAT_CELL) as usize;
    let mut counts = vec![0u32; across * down];
    for y in 0..mask.height() {
        let cell_row = (y / HEAT_CELL) as usize * across;
        for (word_index, &word) in mask.row(y).iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                let x = word_index * 64 + bits.trailing_zeros() as usize;
                if let Some(count) = counts.get_mut(cell_row + x / HEAT_CELL as usize) {
                    *count += 1;
                }
                bits &= bits - 1;
            }
        }
    }
    let full = (9 * HEAT_CELL * HEAT_CELL) as f32;
    let mut density = vec![0.0f32; counts.len()];
    for cy in 0..down {
        for cx in 0..across {
            let mut sum = 0u32;
            for ny in cy.saturating_sub(1)..=(cy + 1).min(down - 1) {
                for nx in cx.saturating_sub(1)..=(cx + 1).min(across - 1) {
                    sum += counts.get(ny * across + nx).copied().unwrap_or(0);
                }
            }
            density[cy * across + cx] = (sum as f32 / full).min(1.0).sqrt();
        }
    }
    density
}

/// Blue, cyan, yellow, red as heat goes from 0 to 1.
fn heat_colour(heat: f32) -> [u8; 3] {
    let t = heat.clamp(0.0, 1.0) * 3.0;
    let ramp = |v: f32| (v.clamp(0.0, 1.0) * 255.0) as u8;
    if t < 1.0 {
        [0, ramp(t), 255]
    } else if t < 2.0 {
        [ramp(t - 1.0), 255, ramp(2.0 - t)]
    } else {
        [255, ramp(3.0 - t), 0]
    }
}

#[cfg(test)]
mod tests {
    use image::Rgba;

    use super::*;

    fn region(number: u32, x: u32, y: u32, width: u32, height: u32) -> Region {
        Region {
            number,
            x,
            y,
            width,
            height,
            changed_pixels: u64::from(width * height),
        }
    }

    #[test]
    fn boxes_and_labels_are_drawn_in_the_region_colour() {
        let after = RgbaImage::from_pixel(200, 120, Rgba([255; 4]));
        let image = annotation_image(
            &after,
            (200, 120),
            &[region(1, 50, 60, 30, 20), region(2, 0, 0, 4, 4)],
        );
        // The outline sits 2 px outside the region and is 3 px thick.
        assert_eq!(image.get_pixel(50 - 5, 70).0, PALETTE[0]);
        assert_eq!(image.get_pixel(50 - 3, 70).0, PALETTE[0]);
        assert_eq!(image.get_pixel(50 - 2, 70).0, [255; 3]);
        // The region itself is not painted over.
        assert_eq!(image.get_pixel(60, 70).0, [255; 3]);
        // A white digit stroke inside the label tag above the box.
        let tag_top = 60 - 5 - (5 * FONT_SCALE + 2 * LABEL_PADDING);
        let tag: Vec<_> = (tag_top..60 - 5)
            .flat_map(|y| (45..60).map(move |x| (x, y)))
            .map(|(x, y)| image.get_pixel(x, y).0)
            .collect();
        assert!(tag.contains(&[255; 3]) && tag.contains(&PALETTE[0]));
        // A region at the corner is drawn clipped, its label inside: no panic.
        assert_eq!(image.get_pixel(0, 0).0, PALETTE[1]);
    }

    /// Row by row with an opaque shortcut, the flattened image is the blend of every pixel.
    #[test]
    fn the_flattened_after_image_is_the_blend_onto_white_pixel_by_pixel() {
        let after = RgbaImage::from_fn(37, 11, |x, y| {
            let alpha = [255, 0, 1, 128, 254][((x + y) % 5) as usize];
            Rgba([(x * 7) as u8, (y * 23) as u8, (x * y) as u8, alpha])
        });
        for canvas in [(37, 11), (40, 11), (37, 15), (50, 20)] {
            let image = after_on_canvas(&after, canvas);
            assert_eq!(image.dimensions(), canvas);
            for (x, y, pixel) in image.enumerate_pixels() {
                let expected = if x < 37 && y < 11 {
                    let [r, g, b, a] = after.get_pixel(x, y).0;
                    let blend = |c: u8| {
                        ((u32::from(c) * u32::from(a) + 255 * (255 - u32::from(a))) / 255) as u8
                    };
                    [blend(r), blend(g), blend(b)]
                } else {
                    OUTSIDE_GREY
                };
                assert_eq!(pixel.0, expected, "({x}, {y}) on a {canvas:?} canvas");
            }
        }
    }

    #[test]
    fn a_larger_canvas_shows_grey_where_the_after_image_is_missing() {
        let after = RgbaImage::from_pixel(10, 10, Rgba([0, 0, 0, 255]));
        let image = annotation_image(&after, (20, 10), &[]);
        assert_eq!(image.get_pixel(5, 5).0, [0; 3]);
        assert_eq!(image.get_pixel(15, 5).0, OUTSIDE_GREY);
    }

    #[test]
    fn the_heat_map_is_hot_where_pixels_changed() {
        let after = RgbaImage::from_pixel(64, 64, Rgba([255; 4]));
        let mut mask = ChangedMask::new(64, 64);
        for y in 0..8 {
            for x in 0..8 {
                mask.set_changed(x, y);
            }
        }
        let image = heat_map_image(&after, &mask);
        assert_eq!(
            image.get_pixel(60, 60).0,
            [85; 3],
            "no change: the dimmed after-image"
        );
        assert_ne!(image.get_pixel(2, 2).0, [85; 3]);
        assert_ne!(
            image.get_pixel(10, 10).0,
            [85; 3],
            "the blur reaches the next cell"
        );
    }

    #[test]
    fn every_digit_has_a_glyph() {
        for number in [1, 10, 99, 1234567890] {
            let after = RgbaImage::new(300, 300);
            annotation_image(&after, (300, 300), &[region(number, 100, 100, 5, 5)]);
        }
    }
}
