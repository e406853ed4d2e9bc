//! The diff computes colour deltas several pixels at a time (vector lanes); this guards the
//! edges of those chunks against the real npm pixelmatch 7.2. Pairs of every width from 1 to
//! 19 and around 64 (not multiples of the lane count, rows ending mid-chunk) carry changes in
//! the last pixels of each row, at and around every eighth column, under the threshold, on
//! anti-aliased strokes that straddle chunk boundaries, and semi-transparent pixels among
//! opaque ones (a chunk that falls back to the one-by-one blending). Each must give pixelmatch's
//! count and diff image, under several option sets. Ignore regions whose edges cut chunks are
//! checked against what they mean: pixelmatch's picture outside them, its picture of no change
//! inside, its changed pixels outside them counted.
//! Without node or the npm packages the tests fail, saying how to install them.

use std::path::{Path, PathBuf};

use image::{Rgba, RgbaImage};
use serde_json::{json, Value};
use vaider_test_support::pixelmatch;
use vaider_test_support::random::Lcg;
use vaider_visual::{diff_images, DiffOptions, IgnoreRegion};

const HEIGHT: u32 = 12;

/// The widths drawn: every width below three chunks, and around a 64-pixel mask word.
fn widths() -> Vec<u32> {
    (1..=19).chain([63, 64, 65, 71, 72, 73]).collect()
}

/// A before-image: a light page with dark strokes whose edges are grey (what anti-aliasing
/// looks like), and a noisy patch.
fn before_image(width: u32, seed: u64) -> RgbaImage {
    let mut random = Lcg(seed);
    let mut image = RgbaImage::from_pixel(width, HEIGHT, Rgba([250, 250, 252, 255]));
    for y in 2..HEIGHT - 2 {
        // A vertical stroke two pixels wide, drifting one column every other row: its grey
        // edges cross chunk boundaries as it moves.
        let x = (y / 2 + width / 3) % width;
        put(&mut image, x, y, [30, 30, 40, 255]);
        put(&mut image, x + 1, y, [30, 30, 40, 255]);
        put(&mut image, x + 2, y, [150, 150, 160, 255]);
        if x > 0 {
            put(&mut image, x - 1, y, [190, 190, 200, 255]);
        }
    }
    for y in HEIGHT - 3..HEIGHT {
        for x in 0..width / 2 {
            let c = 100 + random.below(60) as u8;
            put(&mut image, x, y, [c, c / 2, 200, 255]);
        }
    }
    image
}

/// The after-image: the stroke moved one pixel in some rows, the last pixels of each row and
/// the pixels at and around every eighth column changed (some strongly, some under the
/// threshold, some getting darker), and semi-transparent pixels here and there.
fn after_image(before: &RgbaImage, seed: u64) -> RgbaImage {
    let mut random = Lcg(seed);
    let mut after = before.clone();
    let width = before.width();
    for y in 0..HEIGHT {
        if y % 3 == 1 {
            // The stroke shifted right by one.
            for x in (1..width).rev() {
                let left = *before.get_pixel(x - 1, y);
                after.put_pixel(x, y, left);
            }
        }
        for x in [width - 1, width.saturating_sub(2)] {
            let change = random.below(4);
            put(
                &mut after,
                x,
                y,
                changed(before.get_pixel(x, y).0, change, &mut random),
            );
        }
        for x in (0..width).filter(|x| matches!(x % 8, 0 | 7)) {
            if random.below(3) == 0 {
                let change = random.below(4);
                put(
                    &mut after,
                    x,
                    y,
                    changed(before.get_pixel(x, y).0, change, &mut random),
                );
            }
        }
    }
    after
}

/// One pixel changed: 0 strongly, 1 slightly (under the default threshold), 2 darker, 3 made
/// semi-transparent.
fn changed(pixel: [u8; 4], change: u32, random: &mut Lcg) -> [u8; 4] {
    let [r, g, b, _] = pixel;
    match change {
        0 => [random.byte(), random.byte(), random.byte(), 255],
        1 => [r.saturating_add(3), g.saturating_sub(2), b, 255],
        2 => [r / 4, g / 4, b / 4, 255],
        _ => [r, g, b, 64 + random.below(150) as u8],
    }
}

fn put(image: &mut RgbaImage, x: u32, y: u32, colour: [u8; 4]) {
    if x < image.width() && y < image.height() {
        image.put_pixel(x, y, Rgba(colour));
    }
}

/// The option sets, as pixelmatch takes them and as vaider-visual does.
fn option_sets() -> Vec<(Value, DiffOptions)> {
    vec![
        (json!({}), DiffOptions::default()),
        (
            json!({"threshold": 0, "includeAA": true}),
            DiffOptions {
                threshold: 0.0,
                include_anti_aliasing: true,
                ..DiffOptions::default()
            },
        ),
        (
            json!({"threshold": 0.05, "diffColorAlt": [0, 255, 0]}),
            DiffOptions {
                threshold: 0.05,
                diff_colour_alt: Some([0, 255, 0]),
                ..DiffOptions::default()
            },
        ),
    ]
}

fn read(path: &Path) -> RgbaImage {
    image::open(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .into_rgba8()
}

/// The first pixel where our RGB diff image differs from pixelmatch's RGBA one.
fn first_mismatch(ours: &image::RgbImage, theirs: &RgbaImage) -> Option<(u32, u32)> {
    assert_eq!(ours.dimensions(), theirs.dimensions(), "diff image sizes");
    theirs.enumerate_pixels().find_map(|(x, y, pixel)| {
        let [r, g, b, a] = pixel.0;
        (ours.get_pixel(x, y).0 != [r, g, b] || a != 255).then_some((x, y))
    })
}

/// One pair per width, written as PNGs: (width, before, after, before path, after path).
type Pair = (u32, RgbaImage, RgbaImage, PathBuf, PathBuf);

fn pairs(dir: &Path) -> Vec<Pair> {
    widths()
        .into_iter()
        .map(|width| {
            let before = before_image(width, u64::from(width));
            let after = after_image(&before, 1000 + u64::from(width));
            let before_path = dir.join(format!("{width}a.png"));
            let after_path = dir.join(format!("{width}b.png"));
            before.save(&before_path).expect("write the before PNG");
            after.save(&after_path).expect("write the after PNG");
            (width, before, after, before_path, after_path)
        })
        .collect()
}

#[test]
fn chunk_edges_give_pixelmatch_counts_and_diff_images_at_every_width() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let pairs = pairs(dir.path());
    let sets = option_sets();
    let out = |width: u32, set: usize| dir.path().join(format!("{width}-{set}.png"));
    let mut jobs = Vec::new();
    for (width, _, _, before_path, after_path) in &pairs {
        for (set, (theirs, _)) in sets.iter().enumerate() {
            jobs.push(
                json!({"a": before_path, "b": after_path, "out": out(*width, set),
                             "options": theirs}),
            );
        }
    }
    let mut expected = pixelmatch::run_jobs(&Value::from(jobs), dir.path()).into_iter();
    let mut changed_somewhere = 0;
    for (width, before, after, _, _) in &pairs {
        for (set, (theirs, ours)) in sets.iter().enumerate() {
            let their_count = expected.next().expect("a count for every job");
            let diff = diff_images(before, after, ours);
            assert_eq!(
                diff.changed_pixels, their_count,
                "width {width} with {theirs}: vaider-visual counted {}, pixelmatch {their_count}",
                diff.changed_pixels
            );
            let drawn = diff
                .diff_image
                .as_ref()
                .expect("the diff image was asked for")
                .to_rgb();
            let mismatch = first_mismatch(&drawn, &read(&out(*width, set)));
            assert_eq!(
                mismatch, None,
                "width {width} with {theirs}: the diff image differs from pixelmatch's"
            );
            changed_somewhere += u64::from(their_count > 0);
        }
    }
    // The pairs are not trivially equal: nearly every one has changes to count.
    assert!(changed_somewhere as usize >= pairs.len() * sets.len() - 3);
}

#[test]
fn ignore_regions_cutting_chunks_leave_pixelmatch_verdicts_outside_them() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let pairs = pairs(dir.path());
    // Per pair: pixelmatch on the pair, and on the before-image against itself (its picture
    // of "nothing changed").
    let mut jobs = Vec::new();
    for (width, _, _, before_path, after_path) in &pairs {
        jobs.push(json!({"a": before_path, "b": after_path,
                         "out": dir.path().join(format!("{width}-pair.png")), "options": {}}));
        jobs.push(json!({"a": before_path, "b": before_path,
                         "out": dir.path().join(format!("{width}-same.png")), "options": {}}));
    }
    pixelmatch::run_jobs(&Value::from(jobs), dir.path());
    for (width, before, after, _, _) in &pairs {
        // Edges mid-chunk: columns 3 to 10, and the last three columns of the lower rows.
        let ignore = vec![
            IgnoreRegion {
                x: 3,
                y: 0,
                width: 8,
                height: HEIGHT / 2,
            },
            IgnoreRegion {
                x: width.saturating_sub(3),
                y: HEIGHT / 2,
                width: 3,
                height: HEIGHT - HEIGHT / 2,
            },
        ];
        let inside = |x: u32, y: u32| {
            ignore
                .iter()
                .any(|r| x >= r.x && x < r.x + r.width && y >= r.y && y < r.y + r.height)
        };
        let pair = read(&dir.path().join(format!("{width}-pair.png")));
        let same = read(&dir.path().join(format!("{width}-same.png")));
        let expected_count = pair
            .enumerate_pixels()
            .filter(|(x, y, pixel)| pixel.0 == [255, 0, 0, 255] && !inside(*x, *y))
            .count() as u64;
        let options = DiffOptions {
            ignore: ignore.clone(),
            ..DiffOptions::default()
        };
        let diff = diff_images(before, after, &options);
        assert_eq!(
            diff.changed_pixels, expected_count,
            "width {width}: counted {}, pixelmatch's changes outside the ignored regions are \
             {expected_count}",
            diff.changed_pixels
        );
        let drawn = diff
            .diff_image
            .expect("the diff image was asked for")
            .to_rgb();
        for (x, y, pixel) in drawn.enumerate_pixels() {
            let reference = if inside(x, y) { &same } else { &pair };
            let [r, g, b, _] = reference.get_pixel(x, y).0;
            assert_eq!(
                pixel.0,
                [r, g, b],
                "width {width}: diff image pixel ({x}, {y}), ignored: {}",
                inside(x, y)
            );
        }
    }
}
