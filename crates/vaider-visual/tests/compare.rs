//! The public API end to end: PNG files in, counts and regions out, pictures written whole or
//! not at all.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use image::{Rgba, RgbaImage};
use vaider_visual::{compare, CompareOptions, SizeChange, VisualError};

fn page(width: u32, height: u32) -> RgbaImage {
    RgbaImage::from_pixel(width, height, Rgba([245, 245, 245, 255]))
}

fn save(dir: &Path, name: &str, image: &RgbaImage) -> std::path::PathBuf {
    let path = dir.join(name);
    image.save(&path).expect("write a test PNG");
    path
}

fn block(image: &mut RgbaImage, left: u32, top: u32, size: u32, colour: [u8; 4]) {
    for y in top..top + size {
        for x in left..left + size {
            image.put_pixel(x, y, Rgba(colour));
        }
    }
}

/// Files in a folder, sorted, to see what a write left behind.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

#[test]
fn identical_screenshots_have_no_changes() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut image = page(120, 80);
    block(&mut image, 10, 10, 20, [20, 60, 200, 255]);
    let before = save(dir.path(), "before.png", &image);
    let after = save(dir.path(), "after.png", &image);
    let comparison = compare(&before, &after, &CompareOptions::default()).expect("compare");
    assert_eq!(comparison.changed_pixels(), 0);
    assert_eq!(comparison.total_changes(), 0);
    assert_eq!(comparison.diff_percentage(), 0.0);
    assert_eq!(comparison.size_changed(), None);
}

#[test]
fn one_pixel_of_noise_is_no_region_but_a_real_change_is() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let before_image = page(200, 150);
    let mut noisy = before_image.clone();
    noisy.put_pixel(100, 70, Rgba([150, 150, 150, 255]));
    let mut changed = noisy.clone();
    block(&mut changed, 20, 20, 10, [200, 30, 30, 255]);
    let before = save(dir.path(), "before.png", &before_image);
    let noisy = save(dir.path(), "noisy.png", &noisy);
    let changed = save(dir.path(), "changed.png", &changed);

    let noise = compare(&before, &noisy, &CompareOptions::default()).expect("compare");
    assert_eq!(
        noise.changed_pixels(),
        1,
        "pixelmatch's count keeps the speck"
    );
    assert_eq!(
        noise.total_changes(),
        0,
        "the default tolerance drops a 1 px speck"
    );

    let real = compare(&before, &changed, &CompareOptions::default()).expect("compare");
    assert_eq!(real.changed_pixels(), 101);
    assert_eq!(real.total_changes(), 1, "{:?}", real.regions);
    let region = real.regions[0];
    assert_eq!(
        (
            region.number,
            region.x,
            region.y,
            region.width,
            region.height
        ),
        (1, 20, 20, 10, 10)
    );
    assert!((real.diff_percentage() - 100.0 * 101.0 / 30_000.0).abs() < 1e-9);
}

#[test]
fn a_two_pixel_speck_is_noise_and_three_pixels_are_not() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let before_image = page(60, 60);
    let mut two = before_image.clone();
    two.put_pixel(30, 30, Rgba([0, 0, 0, 255]));
    two.put_pixel(31, 30, Rgba([0, 0, 0, 255]));
    let mut three = two.clone();
    three.put_pixel(32, 30, Rgba([0, 0, 0, 255]));
    let before = save(dir.path(), "before.png", &before_image);
    let two = save(dir.path(), "two.png", &two);
    let three = save(dir.path(), "three.png", &three);
    assert_eq!(
        compare(&before, &two, &CompareOptions::default())
            .expect("compare")
            .total_changes(),
        0
    );
    assert_eq!(
        compare(&before, &three, &CompareOptions::default())
            .expect("compare")
            .total_changes(),
        1
    );
}

#[test]
fn screenshots_of_different_sizes_are_compared_not_refused() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let before = save(dir.path(), "before.png", &page(100, 80));
    let after = save(dir.path(), "after.png", &page(100, 120));
    let comparison = compare(&before, &after, &CompareOptions::default()).expect("compare");
    assert_eq!(
        comparison.size_changed(),
        Some(SizeChange {
            before: (100, 80),
            after: (100, 120)
        })
    );
    assert_eq!(
        comparison.changed_pixels(),
        100 * 40,
        "the new strip at the bottom"
    );
    assert_eq!(comparison.total_changes(), 1);
    let images = comparison.write_images(dir.path(), "sizes").expect("write");
    let annotation = image::open(&images.annotation).expect("read the annotation");
    assert_eq!((annotation.width(), annotation.height()), (100, 120));
}

#[test]
fn the_four_pictures_are_written_and_nothing_else() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let mut after_image = page(90, 70);
    block(&mut after_image, 30, 30, 12, [10, 10, 10, 255]);
    let inputs = tempfile::tempdir().expect("a temporary folder");
    let before = save(inputs.path(), "before.png", &page(90, 70));
    let after = save(inputs.path(), "after.png", &after_image);
    let comparison = compare(&before, &after, &CompareOptions::default()).expect("compare");
    let images = comparison
        .write_images(dir.path(), "01-vs-02")
        .expect("write");
    assert_eq!(
        listing(dir.path()),
        vec![
            "01-vs-02-annotation.png",
            "01-vs-02-diff.png",
            "01-vs-02-heatmap.png",
            "01-vs-02-zoom.png"
        ]
    );
    let zoom = image::open(images.close_ups.expect("a close-up of the one region")).expect("read");
    assert!(
        zoom.width() > 2 * 12,
        "both crops, magnified: {}",
        zoom.width()
    );
    let diff = image::open(images.diff.expect("the diff is drawn by default")).expect("read");
    assert_eq!(
        diff.to_rgb8().get_pixel(35, 35).0,
        [255, 0, 0],
        "pixelmatch's red"
    );
    let mode = fs::metadata(&images.annotation)
        .expect("stat")
        .permissions()
        .mode();
    assert_eq!(
        mode & 0o077,
        0,
        "a recorded page is its owner's only (SECURITY.md): {mode:o}"
    );
    for path in [&images.annotation, &images.heat_map] {
        let picture = image::open(path).expect("read");
        assert_eq!((picture.width(), picture.height()), (90, 70));
    }
}

#[test]
fn a_failed_write_leaves_no_partial_file() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let inputs = tempfile::tempdir().expect("a temporary folder");
    let mut after_image = page(50, 50);
    block(&mut after_image, 5, 5, 10, [0, 0, 0, 255]);
    let before = save(inputs.path(), "before.png", &page(50, 50));
    let after = save(inputs.path(), "after.png", &after_image);
    let comparison = compare(&before, &after, &CompareOptions::default()).expect("compare");

    // The annotation's name is taken by a folder: the rename fails after the diff is written.
    fs::create_dir(dir.path().join("x-annotation.png")).expect("make the blocking folder");
    let error = comparison
        .write_images(dir.path(), "x")
        .expect_err("cannot rename over a folder");
    assert!(matches!(error, VisualError::Write { .. }), "{error}");
    assert!(error.to_string().contains("x-annotation.png"), "{error}");
    assert_eq!(
        listing(dir.path()),
        vec!["x-annotation.png"],
        "no temporary file, no diff left"
    );

    // A read-only folder, where the system enforces it (root may write anyway).
    let locked = dir.path().join("locked");
    fs::create_dir(&locked).expect("make a folder");
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o555)).expect("chmod");
    let result = comparison.write_images(&locked, "y");
    if result.is_err() {
        assert!(listing(&locked).is_empty(), "{:?}", listing(&locked));
    }
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).expect("chmod back");
}

#[test]
fn errors_say_which_file_and_what_to_do() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let real = save(dir.path(), "real.png", &page(10, 10));
    let missing = dir.path().join("missing.png");
    let error = compare(&real, &missing, &CompareOptions::default()).expect_err("missing file");
    let message = error.to_string();
    assert!(
        message.contains("after image") && message.contains("missing.png"),
        "{message}"
    );

    let garbage = dir.path().join("garbage.png");
    fs::write(&garbage, b"not a picture").expect("write");
    let error = compare(&garbage, &real, &CompareOptions::default()).expect_err("not an image");
    assert!(error.to_string().contains("before image"), "{error}");

    let comparison = compare(&real, &real, &CompareOptions::default()).expect("compare");
    let error = comparison
        .write_images(dir.path(), "../escape")
        .expect_err("a path, not a name");
    assert!(matches!(error, VisualError::InvalidStem { .. }));
}

#[test]
fn the_noise_tolerance_is_a_parameter_checked_before_anything_is_compared() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    let before_image = page(200, 150);
    let mut specks = before_image.clone();
    // Three faint grey pixels together, as a GPU's anti-aliasing leaves them on a text edge.
    for (x, y) in [(40, 40), (41, 40), (40, 41)] {
        specks.put_pixel(x, y, Rgba([200, 200, 200, 255]));
    }
    let before = save(dir.path(), "before.png", &before_image);
    let after = save(dir.path(), "after.png", &specks);

    let default = compare(&before, &after, &CompareOptions::default()).expect("compare");
    assert_eq!(default.total_changes(), 1, "3 px are kept by default");
    let stricter = CompareOptions::with_noise_tolerance(Some(4), None).expect("valid");
    assert_eq!(
        compare(&before, &after, &stricter).unwrap().total_changes(),
        0
    );
    let blurred = CompareOptions::with_noise_tolerance(None, Some(1.0)).expect("valid");
    let with_blur = compare(&before, &after, &blurred).unwrap();
    assert_eq!(with_blur.total_changes(), 0, "{:?}", with_blur.regions);
    // A blur of 0 is no blur: pixelmatch's count.
    let none = CompareOptions::with_noise_tolerance(None, Some(0.0)).expect("valid");
    assert_eq!(none, CompareOptions::default());

    for (min, blur, says) in [
        (Some(0), None, "min_region_pixels must be from 1"),
        (None, Some(5.0), "blur must be from 0 to 3"),
        (None, Some(f32::NAN), "blur must be from 0 to 3"),
        (None, Some(-1.0), "blur must be from 0 to 3"),
    ] {
        let error = CompareOptions::with_noise_tolerance(min, blur).unwrap_err();
        assert!(matches!(error, VisualError::Option(_)));
        assert!(error.to_string().contains(says), "{error}");
    }
}

#[test]
fn every_png_colour_type_reads_as_the_same_pixels() {
    let dir = tempfile::tempdir().expect("a temporary folder");
    // Grey pixels, so grey, RGB, RGBA and 16-bit encodings all hold exactly the same picture.
    let grey =
        image::GrayImage::from_fn(97, 61, |x, y| image::Luma([((x * 7 + y * 13) % 256) as u8]));
    let rgba = image::DynamicImage::ImageLuma8(grey.clone()).into_rgba8();
    let reference = save(dir.path(), "rgba.png", &rgba);
    let encodings = [
        ("grey.png", image::DynamicImage::ImageLuma8(grey.clone())),
        (
            "rgb.png",
            image::DynamicImage::ImageLuma8(grey.clone())
                .into_rgb8()
                .into(),
        ),
        (
            "rgb16.png",
            image::DynamicImage::ImageLuma8(grey.clone())
                .into_rgb16()
                .into(),
        ),
        (
            "grey.jpg",
            image::DynamicImage::ImageLuma8(grey).into_rgb8().into(),
        ),
    ];
    for (name, image) in encodings {
        let path = dir.path().join(name);
        image.save(&path).expect("write the encoding");
        let comparison = compare(&reference, &path, &CompareOptions::default()).expect("compare");
        if name.ends_with(".png") {
            assert_eq!(comparison.changed_pixels(), 0, "{name} read differently");
        }
        assert_eq!(comparison.size_changed(), None, "{name}");
    }
    // A semi-transparent RGBA PNG keeps its alpha.
    let mut faint = rgba.clone();
    faint.put_pixel(3, 4, Rgba([10, 20, 30, 40]));
    let faint_path = save(dir.path(), "faint.png", &faint);
    let comparison = compare(&reference, &faint_path, &CompareOptions::default()).expect("compare");
    assert_eq!(comparison.changed_pixels(), 1);
}
