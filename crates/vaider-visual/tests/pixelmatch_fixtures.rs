//! Parity with the real npm pixelmatch 7.2 on pixelmatch's own test fixtures (the PNG pairs its
//! npm package 4.0.2 ships, installed as `pixelmatch-fixtures`), for every option users set:
//! each fixture pair under each options set is diffed by `node tests/visual/pixelmatch-jobs.mjs`
//! and by vaider-visual, and both the changed count and every pixel of the diff image must be
//! equal. Then odiff's ignore regions, against the odiff binary (npm `odiff-bin`) itself.
//! Without node or the npm packages the tests fail, saying how to install them.

use std::path::{Path, PathBuf};
use std::process::Command;

use image::{Rgba, RgbaImage};
use serde_json::{json, Value};
use vaider_test_support::pixelmatch::{self, installed};
use vaider_visual::{diff_images, AlphaBackground, DiffOptions, IgnoreRegion};

fn fixture(name: &str) -> PathBuf {
    installed("pixelmatch-fixtures")
        .join("test/fixtures")
        .join(format!("{name}.png"))
}

/// The options sets, as pixelmatch takes them and as vaider-visual does.
fn option_sets() -> Vec<(Value, DiffOptions)> {
    let ours = |change: &dyn Fn(&mut DiffOptions)| {
        let mut options = DiffOptions::default();
        change(&mut options);
        options
    };
    vec![
        (json!({}), DiffOptions::default()),
        // pixelmatch's own test's options.
        (json!({"threshold": 0.05}), ours(&|o| o.threshold = 0.05)),
        (
            json!({"threshold": 0, "includeAA": true}),
            ours(&|o| {
                o.threshold = 0.0;
                o.include_anti_aliasing = true;
            }),
        ),
        (
            json!({"threshold": 0.3, "alpha": 0.5, "diffColor": [0, 200, 255],
                   "diffColorAlt": [0, 255, 0], "aaColor": [0, 0, 255]}),
            ours(&|o| {
                o.threshold = 0.3;
                o.faded_opacity = 0.5;
                o.diff_colour = [0, 200, 255];
                o.diff_colour_alt = Some([0, 255, 0]);
                o.anti_alias_colour = [0, 0, 255];
            }),
        ),
        (
            json!({"threshold": 0.2, "checkerboard": false, "alpha": 0}),
            ours(&|o| {
                o.threshold = 0.2;
                o.background = AlphaBackground::White;
                o.faded_opacity = 0.0;
            }),
        ),
    ]
}

fn read(path: &Path) -> RgbaImage {
    image::open(path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
        .into_rgba8()
}

/// How many pixels of our RGB diff image differ from pixelmatch's RGBA one (whose alpha is
/// always 255 outside `diffMask`), and the first of them.
fn image_mismatches(ours: &image::RgbImage, theirs: &RgbaImage) -> (usize, Option<(u32, u32)>) {
    assert_eq!(ours.dimensions(), theirs.dimensions(), "diff image sizes");
    let mut count = 0;
    let mut first = None;
    for (x, y, pixel) in theirs.enumerate_pixels() {
        let [r, g, b, a] = pixel.0;
        if ours.get_pixel(x, y).0 != [r, g, b] || a != 255 {
            count += 1;
            first.get_or_insert((x, y));
        }
    }
    (count, first)
}

#[test]
fn counts_and_diff_images_equal_pixelmatch_on_its_own_fixtures_for_every_option() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let pairs = ["1", "2", "3", "4"];
    let sets = option_sets();
    let mut jobs = Vec::new();
    for pair in pairs {
        for (index, (theirs, _)) in sets.iter().enumerate() {
            jobs.push(json!({
                "a": fixture(&format!("{pair}a")),
                "b": fixture(&format!("{pair}b")),
                "out": dir.path().join(format!("{pair}-{index}.png")),
                "options": theirs,
            }));
        }
    }
    let expected = pixelmatch::run_jobs(&Value::Array(jobs), dir.path());
    let mut expected = expected.into_iter();
    let mut checked = 0;
    for pair in pairs {
        let before = read(&fixture(&format!("{pair}a")));
        let after = read(&fixture(&format!("{pair}b")));
        for (index, (theirs, ours)) in sets.iter().enumerate() {
            let their_count = expected.next().expect("a count for every job");
            let diff = diff_images(&before, &after, ours);
            assert_eq!(
                diff.changed_pixels, their_count,
                "fixture {pair} with {theirs}: vaider-visual counted {}, pixelmatch {their_count}",
                diff.changed_pixels
            );
            let their_image = read(&dir.path().join(format!("{pair}-{index}.png")));
            let drawn = diff
                .diff_image
                .as_ref()
                .expect("the diff image was asked for")
                .to_rgb();
            let (mismatches, first) = image_mismatches(&drawn, &their_image);
            assert_eq!(
                mismatches, 0,
                "fixture {pair} with {theirs}: {mismatches} diff-image pixels differ from \
                 pixelmatch's, the first at {first:?}"
            );
            checked += 1;
        }
    }
    assert_eq!(checked, pairs.len() * sets.len());
}

/// odiff's count for a pair, with its `--ignore x1:y1-x2:y2` regions (inclusive corners).
fn odiff_count(before: &Path, after: &Path, ignore: &[IgnoreRegion], dir: &Path) -> u64 {
    let odiff = installed(".bin/odiff");
    let mut command = Command::new(odiff);
    command
        .arg(before)
        .arg(after)
        .arg(dir.join("odiff.png"))
        .arg("--parsable-stdout");
    if !ignore.is_empty() {
        let regions: Vec<String> = ignore
            .iter()
            .map(|r| {
                format!(
                    "{}:{}-{}:{}",
                    r.x,
                    r.y,
                    r.x + r.width - 1,
                    r.y + r.height - 1
                )
            })
            .collect();
        command.arg("--ignore").arg(regions.join(","));
    }
    let output = command.output().expect("run odiff");
    let stdout = String::from_utf8_lossy(&output.stdout);
    // Exit 0: no difference (nothing printed); 22: "<count>;<percentage>".
    match output.status.code() {
        Some(0) => 0,
        Some(22) => stdout
            .trim()
            .split(';')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("odiff printed {stdout:?}")),
        other => panic!(
            "odiff exited {other:?}: {stdout}{}",
            String::from_utf8_lossy(&output.stderr)
        ),
    }
}

#[test]
fn ignore_regions_mean_what_they_mean_in_odiff() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    // Solid blocks of new colour, no anti-aliasing: pixelmatch's and odiff's counts agree, so
    // what the ignore regions take away can be compared.
    let before = RgbaImage::from_pixel(120, 90, Rgba([250, 250, 250, 255]));
    let mut after = before.clone();
    for (left, top, size) in [(5, 5, 20), (60, 10, 30), (30, 60, 25)] {
        for y in top..top + size {
            for x in left..left + size {
                after.put_pixel(x, y, Rgba([200, 20, 40, 255]));
            }
        }
    }
    let (before_path, after_path) = (dir.path().join("a.png"), dir.path().join("b.png"));
    before.save(&before_path).expect("write a.png");
    after.save(&after_path).expect("write b.png");
    let ignore_sets: [&[IgnoreRegion]; 4] = [
        &[],
        &[IgnoreRegion {
            x: 0,
            y: 0,
            width: 15,
            height: 15,
        }],
        &[
            // Inside the image: past its right edge odiff runs on into the next rows, where
            // vaider-visual clips (docs/contracts.md).
            IgnoreRegion {
                x: 70,
                y: 0,
                width: 50,
                height: 25,
            },
            IgnoreRegion {
                x: 40,
                y: 70,
                width: 1,
                height: 1,
            },
        ],
        &[IgnoreRegion {
            x: 0,
            y: 0,
            width: 120,
            height: 90,
        }],
    ];
    let mut counts = Vec::new();
    for ignore in ignore_sets {
        let options = DiffOptions {
            ignore: ignore.to_vec(),
            ..DiffOptions::default()
        };
        let ours = diff_images(&before, &after, &options).changed_pixels;
        let theirs = odiff_count(&before_path, &after_path, ignore, dir.path());
        assert_eq!(
            ours, theirs,
            "ignoring {ignore:?}: we count {ours}, odiff {theirs}"
        );
        counts.push(ours);
    }
    assert_eq!(counts[0], 400 + 900 + 625);
    assert_eq!(counts[3], 0);
}
