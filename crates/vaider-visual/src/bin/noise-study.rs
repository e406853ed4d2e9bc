//! Which noise tolerance loses fewer real changes: the design's small blur before the diff, or
//! a minimum region area after it (what Vaider uses)? On a real screenshot, six small real
//! changes (a full stop, a hairline, an underline, a removed letter, a button's shade, a line of
//! text moved 1 px) and four kinds of rendering noise (lone specks, two-pixel specks, a JPEG
//! round trip, anti-aliasing jitter on text edges) are made, and each rule is asked whether it
//! still sees the change (a region over it) or sees nothing in the noise (0 regions).
//!
//! Usage: `noise-study [SCREENSHOT.png]` (default: ../shared/media/login.png). Prints a
//! markdown table. Deterministic: the same screenshot gives the same table.

use std::path::PathBuf;

use image::{imageops, DynamicImage, Rgba, RgbaImage};
use vaider_visual::{compare_images, CompareOptions, RegionOptions};

/// A box in the screenshot: (x, y, width, height).
type Area = (u32, u32, u32, u32);

struct Case {
    name: &'static str,
    after: RgbaImage,
    /// Where the real change is; None for noise.
    change: Option<Area>,
}

/// A noise tolerance rule.
struct Rule {
    name: String,
    blur_sigma: Option<f32>,
    min_region_pixels: u64,
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/media/login.png")
        });
    let before = image::open(&path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?
        .into_rgba8();
    let cases = cases(&before);
    let rules = rules();
    println!("Noise tolerance on {} ({}x{}): does each rule see the real change (a region over it), and nothing in the noise (0 regions)?\n", path.display(), before.width(), before.height());
    print!("| case |");
    for rule in &rules {
        print!(" {} |", rule.name);
    }
    println!();
    println!("|---|{}", "---|".repeat(rules.len()));
    let mut scores = vec![(0, 0); rules.len()];
    for case in &cases {
        print!("| {} |", case.name);
        for (rule, score) in rules.iter().zip(scores.iter_mut()) {
            let (regions, seen) = judge(&before, case, rule);
            let good = match case.change {
                Some(_) => seen,
                None => regions == 0,
            };
            if good {
                match case.change {
                    Some(_) => score.0 += 1,
                    None => score.1 += 1,
                }
            }
            let mark = if good { "ok" } else { "**wrong**" };
            print!(" {mark} ({regions}) |");
        }
        println!();
    }
    let real = cases.iter().filter(|c| c.change.is_some()).count();
    let noise = cases.len() - real;
    print!("| **real changes kept / noise ignored** |");
    for (real_kept, noise_ignored) in &scores {
        print!(" **{real_kept}/{real} · {noise_ignored}/{noise}** |");
    }
    println!("\n\n(n) is the number of regions found.");
    Ok(())
}

fn rules() -> Vec<Rule> {
    let mut rules: Vec<Rule> = [1, 3, 5, 10]
        .into_iter()
        .map(|min| Rule {
            name: format!("min area {min} px"),
            blur_sigma: None,
            min_region_pixels: min,
        })
        .collect();
    for sigma in [0.5, 1.0] {
        for min in [1, 3] {
            rules.push(Rule {
                name: format!("blur σ{sigma} + min {min} px"),
                blur_sigma: Some(sigma),
                min_region_pixels: min,
            });
        }
    }
    rules
}

/// The number of regions the rule finds, and whether one of them covers the real change.
fn judge(before: &RgbaImage, case: &Case, rule: &Rule) -> (usize, bool) {
    let blur = |image: &RgbaImage| match rule.blur_sigma {
        Some(sigma) => imageops::blur(image, sigma),
        None => image.clone(),
    };
    let options = CompareOptions {
        regions: RegionOptions {
            min_region_pixels: rule.min_region_pixels,
            ..RegionOptions::default()
        },
        ..CompareOptions::default()
    };
    let comparison = compare_images(blur(before), blur(&case.after), &options);
    let seen = case.change.is_some_and(|(x, y, w, h)| {
        comparison
            .regions
            .iter()
            .any(|r| r.x < x + w && x < r.x + r.width && r.y < y + h && y < r.y + r.height)
    });
    (comparison.regions.len(), seen)
}

fn cases(before: &RgbaImage) -> Vec<Case> {
    let (width, height) = before.dimensions();
    let text = darkest_area(before, 40, 12);
    let mut cases = Vec::new();
    let mut real = |name, area: Area, draw: &dyn Fn(&mut RgbaImage)| {
        let mut after = before.clone();
        draw(&mut after);
        cases.push(Case {
            name,
            after,
            change: Some(area),
        });
    };
    let (tx, ty, _, _) = text;
    let dark = Rgba([30, 30, 30, 255]);
    let stop = (tx + 44, ty + 9, 2, 2);
    real("a full stop (2x2) added after a word", stop, &|a| {
        paint(a, stop, dark)
    });
    let hairline = (width / 2, height / 3, 1, 30);
    real("a 1 px hairline (a caret, a border)", hairline, &|a| {
        paint(a, hairline, Rgba([120, 120, 120, 255]))
    });
    let underline = (tx, ty + 13, 40, 1);
    real("a 1 px underline under a word", underline, &|a| {
        paint(a, underline, dark)
    });
    let letter = (tx + 2, ty, 6, 12);
    let background = *before.get_pixel(tx.saturating_sub(4), ty.saturating_sub(4));
    real("a letter removed", letter, &|a| {
        paint(a, letter, background)
    });
    let swatch = (width / 4, height * 2 / 3, 12, 12);
    real("a 12x12 block a shade darker (-48)", swatch, &|a| {
        for y in swatch.1..swatch.1 + swatch.3 {
            for x in swatch.0..swatch.0 + swatch.2 {
                let p = a.get_pixel_mut(x, y);
                for c in 0..3 {
                    p.0[c] = p.0[c].saturating_sub(48);
                }
            }
        }
    });
    real("a line of text moved 1 px down", text, &|a| {
        let line = imageops::crop_imm(before, tx, ty, 40, 12).to_image();
        paint(a, text, background);
        imageops::replace(a, &line, i64::from(tx), i64::from(ty) + 1);
    });

    let mut random = Lcg(7);
    let mut noise = |name, after: RgbaImage| {
        cases.push(Case {
            name,
            after,
            change: None,
        })
    };
    let mut specks = before.clone();
    for _ in 0..20 {
        let (x, y) = (random.below(width), random.below(height));
        jitter(specks.get_pixel_mut(x, y), 60);
    }
    noise("20 lone specks", specks);
    let mut pairs = before.clone();
    for _ in 0..10 {
        let (x, y) = (random.below(width - 1), random.below(height));
        jitter(pairs.get_pixel_mut(x, y), 60);
        jitter(pairs.get_pixel_mut(x + 1, y), 60);
    }
    noise("10 two-pixel specks", pairs);
    noise("a JPEG round trip (quality 90)", jpeg_round_trip(before));
    let mut edges = before.clone();
    let edge_pixels: Vec<(u32, u32)> = before
        .enumerate_pixels()
        .filter(|(_, _, p)| (90..200).contains(&luma(p)))
        .map(|(x, y, _)| (x, y))
        .collect();
    for _ in 0..30 {
        if edge_pixels.is_empty() {
            break;
        }
        let (x, y) = edge_pixels[random.below(edge_pixels.len() as u32) as usize];
        jitter(edges.get_pixel_mut(x, y), 40);
    }
    noise("anti-aliasing jitter on 30 text-edge pixels", edges);
    cases
}

/// The box of the given size with the most dark pixels: a word of text.
fn darkest_area(image: &RgbaImage, w: u32, h: u32) -> Area {
    let mut best = (0, 0, 0);
    for y in (0..image.height().saturating_sub(h)).step_by(2) {
        for x in (0..image.width().saturating_sub(w)).step_by(4) {
            let dark = (y..y + h)
                .flat_map(|yy| (x..x + w).map(move |xx| (xx, yy)))
                .filter(|&(xx, yy)| luma(image.get_pixel(xx, yy)) < 100)
                .count();
            if dark > best.2 {
                best = (x, y, dark);
            }
        }
    }
    (best.0, best.1, w, h)
}

fn luma(p: &Rgba<u8>) -> u32 {
    (299 * u32::from(p.0[0]) + 587 * u32::from(p.0[1]) + 114 * u32::from(p.0[2])) / 1000
}

fn paint(image: &mut RgbaImage, (x, y, w, h): Area, colour: Rgba<u8>) {
    for yy in y..(y + h).min(image.height()) {
        for xx in x..(x + w).min(image.width()) {
            image.put_pixel(xx, yy, colour);
        }
    }
}

/// Moves a pixel's brightness up or down by `amount` (down when it is light).
fn jitter(pixel: &mut Rgba<u8>, amount: u8) {
    let darker = luma(pixel) > 127;
    for c in 0..3 {
        pixel.0[c] = if darker {
            pixel.0[c].saturating_sub(amount)
        } else {
            pixel.0[c].saturating_add(amount)
        };
    }
}

fn jpeg_round_trip(image: &RgbaImage) -> RgbaImage {
    let rgb = DynamicImage::ImageRgba8(image.clone()).into_rgb8();
    let mut bytes = Vec::new();
    let encoder = image::codecs::jpeg::JpegEncoder::new_with_quality(&mut bytes, 90);
    rgb.write_with_encoder(encoder).expect("JPEG in memory");
    image::load_from_memory(&bytes)
        .expect("our own JPEG")
        .into_rgba8()
}

/// A small deterministic generator: the same table on every run.
struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: u32) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 33) % u64::from(n.max(1))) as u32
    }
}
