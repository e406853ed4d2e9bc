//! Parity with the real npm pixelmatch: each test draws a pair of images, writes them as PNGs,
//! asks `node tests/visual/pixelmatch.mjs` for pixelmatch's count and requires vaider-visual's
//! count to be equal. Without node or the npm packages the tests fail, saying how to install.

use std::path::Path;
use std::process::Command;

use image::{Rgba, RgbaImage};
use vaider_test_support::pixelmatch::{installed, reference_dir};
use vaider_test_support::random::Lcg;
use vaider_visual::{diff_images, AlphaBackground, DiffOptions};

/// pixelmatch's count for the pair, from node.
fn pixelmatch_count(before: &Path, after: &Path, background: AlphaBackground) -> u64 {
    installed("pixelmatch");
    installed("pngjs");
    let dir = reference_dir();
    let mut command = Command::new("node");
    command
        .arg(dir.join("pixelmatch.mjs"))
        .arg(before)
        .arg(after);
    if background == AlphaBackground::White {
        command.arg("--white");
    }
    let output = command.output().unwrap_or_else(|error| {
        panic!(
            "cannot run node ({error}): install Node.js, then run `npm install --prefix tests/visual`"
        )
    });
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "node pixelmatch.mjs failed: {}{}",
        stdout,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("pixelmatch printed {stdout:?}, not a count"))
}

/// Writes the pair, and requires our count to equal pixelmatch's; returns the count.
fn assert_parity_with(before: &RgbaImage, after: &RgbaImage, background: AlphaBackground) -> u64 {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let (before_path, after_path) = (dir.path().join("before.png"), dir.path().join("after.png"));
    before.save(&before_path).expect("write before.png");
    after.save(&after_path).expect("write after.png");
    let expected = pixelmatch_count(&before_path, &after_path, background);
    let options = DiffOptions {
        background,
        draw_diff_image: false,
        ..DiffOptions::default()
    };
    let ours = diff_images(before, after, &options).changed_pixels;
    assert_eq!(
        ours, expected,
        "vaider-visual counted {ours}, pixelmatch {expected}"
    );
    eprintln!("parity: {ours} changed pixels, equal to pixelmatch");
    ours
}

fn assert_parity(before: &RgbaImage, after: &RgbaImage) -> u64 {
    assert_parity_with(before, after, AlphaBackground::Checkerboard)
}

/// Lines of "text": dark glyph-sized blocks of strokes with grey anti-aliased edges.
fn draw_text(image: &mut RgbaImage, left: u32, top: u32, lines: u32, seed: u64) {
    let mut random = Lcg(seed);
    for line in 0..lines {
        let mut x = left;
        let y = top + line * 14;
        while x + 8 < image.width().min(left + 260) {
            let glyph_width = 4 + random.below(4);
            for gy in 0..9 {
                for gx in 0..glyph_width {
                    let edge = gx == 0 || gx + 1 == glyph_width || gy == 0 || gy == 8;
                    let ink = random.below(3) != 0;
                    if ink {
                        let value = if edge {
                            120 + random.below(90) as u8
                        } else {
                            30
                        };
                        put(image, x + gx, y + gy, [value, value, value + 10, 255]);
                    }
                }
            }
            x += glyph_width + 1 + random.below(3) * 3;
        }
    }
}

fn put(image: &mut RgbaImage, x: u32, y: u32, colour: [u8; 4]) {
    if x < image.width() && y < image.height() {
        image.put_pixel(x, y, Rgba(colour));
    }
}

fn page(width: u32, height: u32) -> RgbaImage {
    RgbaImage::from_pixel(width, height, Rgba([250, 250, 250, 255]))
}

/// A disc (or ring) drawn with 4x4 supersampling, so its edge is anti-aliased.
fn draw_disc(image: &mut RgbaImage, cx: f64, cy: f64, radius: f64, colour: [u8; 3]) {
    for y in 0..image.height() {
        for x in 0..image.width() {
            let mut inside = 0u32;
            for sy in 0..4 {
                for sx in 0..4 {
                    let px = f64::from(x) + (f64::from(sx) + 0.5) / 4.0 - cx;
                    let py = f64::from(y) + (f64::from(sy) + 0.5) / 4.0 - cy;
                    inside += u32::from(px * px + py * py <= radius * radius);
                }
            }
            if inside > 0 {
                let base = image.get_pixel(x, y).0;
                let mix = |b: u8, c: u8| {
                    ((u32::from(b) * (16 - inside) + u32::from(c) * inside) / 16) as u8
                };
                let blended = [
                    mix(base[0], colour[0]),
                    mix(base[1], colour[1]),
                    mix(base[2], colour[2]),
                    255,
                ];
                image.put_pixel(x, y, Rgba(blended));
            }
        }
    }
}

/// A 1.5 px wide diagonal line drawn with supersampling.
fn draw_diagonal(image: &mut RgbaImage, offset: f64) {
    for y in 0..image.height() {
        for x in 0..image.width() {
            let mut inside = 0u32;
            for sy in 0..4 {
                for sx in 0..4 {
                    let px = f64::from(x) + (f64::from(sx) + 0.5) / 4.0;
                    let py = f64::from(y) + (f64::from(sy) + 0.5) / 4.0;
                    // Distance to the line y = 0.6 x + offset.
                    let distance = (py - 0.6 * px - offset).abs() / (1.0f64 + 0.36).sqrt();
                    inside += u32::from(distance <= 0.75);
                }
            }
            if inside > 0 {
                let value = (250 - inside * 250 / 16) as u8;
                image.put_pixel(x, y, Rgba([value, value, value, 255]));
            }
        }
    }
}

#[test]
fn text_moved_by_a_few_pixels() {
    let mut before = page(320, 200);
    draw_text(&mut before, 10, 10, 6, 7);
    let mut after = page(320, 200);
    draw_text(&mut after, 12, 13, 6, 7);
    assert!(assert_parity(&before, &after) > 0);
}

#[test]
fn a_colour_change() {
    let mut before = page(200, 120);
    let mut after = page(200, 120);
    for y in 30..70 {
        for x in 40..160 {
            put(&mut before, x, y, [30, 90, 220, 255]);
            // A slight shade (under the threshold) on the left, a new colour on the right.
            put(
                &mut after,
                x,
                y,
                if x < 100 {
                    [32, 92, 224, 255]
                } else {
                    [220, 40, 40, 255]
                },
            );
        }
    }
    assert!(assert_parity(&before, &after) > 0);
}

#[test]
fn anti_aliased_circle_and_diagonal_line() {
    let mut before = page(160, 160);
    draw_disc(&mut before, 80.0, 80.0, 40.0, [20, 20, 20]);
    draw_diagonal(&mut before, 10.0);
    let mut after = page(160, 160);
    draw_disc(&mut after, 80.3, 80.4, 40.2, [20, 20, 20]);
    draw_diagonal(&mut after, 10.4);
    let counted = assert_parity(&before, &after);
    // The pair must exercise the anti-aliasing detector, or parity here proves little.
    let with_anti_aliasing = DiffOptions {
        include_anti_aliasing: true,
        draw_diff_image: false,
        ..DiffOptions::default()
    };
    assert!(diff_images(&before, &after, &with_anti_aliasing).changed_pixels > counted);
}

#[test]
fn a_moved_circle_counts_its_real_change() {
    let mut before = page(120, 120);
    draw_disc(&mut before, 50.0, 50.0, 20.0, [200, 30, 30]);
    let mut after = page(120, 120);
    draw_disc(&mut after, 56.0, 53.0, 20.0, [200, 30, 30]);
    assert!(assert_parity(&before, &after) > 0);
}

#[test]
fn one_pixel_of_noise() {
    let before = page(64, 64);
    let mut after = before.clone();
    put(&mut after, 30, 30, [120, 120, 120, 255]);
    assert_eq!(assert_parity(&before, &after), 1);
}

#[test]
fn large_random_content() {
    let mut random = Lcg(42);
    let mut before = RgbaImage::new(700, 500);
    for pixel in before.pixels_mut() {
        let value = random.next_u32().to_le_bytes();
        // Mostly a few flat colours (so there are solid areas), some noise.
        *pixel = if value[3] < 200 {
            Rgba([value[0] & 0xC0, value[1] & 0xC0, 200, 255])
        } else {
            Rgba([value[0], value[1], value[2], 255])
        };
    }
    let mut after = before.clone();
    for _ in 0..20_000 {
        let (x, y) = (random.below(700), random.below(500));
        let step = random.below(60) as u8;
        let Rgba([r, g, b, a]) = *after.get_pixel(x, y);
        after.put_pixel(
            x,
            y,
            Rgba([r.wrapping_add(step), g, b.saturating_sub(step), a]),
        );
    }
    assert!(assert_parity(&before, &after) > 0);
}

#[test]
fn semi_transparent_pixels_on_both_backgrounds() {
    let mut random = Lcg(9);
    let mut before = RgbaImage::new(90, 70);
    for pixel in before.pixels_mut() {
        let value = random.next_u32().to_le_bytes();
        *pixel = Rgba([
            value[0] & 0xF0,
            value[1] & 0xF0,
            value[2] & 0xF0,
            (value[3] & 0x3) * 85,
        ]);
    }
    let mut after = before.clone();
    for _ in 0..1500 {
        let (x, y) = (random.below(90), random.below(70));
        let value = random.next_u32().to_le_bytes();
        after.put_pixel(x, y, Rgba([value[0], value[1], value[2], value[3] | 0x80]));
    }
    assert_parity_with(&before, &after, AlphaBackground::Checkerboard);
    assert_parity_with(&before, &after, AlphaBackground::White);
}
