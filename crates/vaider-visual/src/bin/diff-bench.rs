//! Times the whole pixel diff the way odiff and pixelmatch are timed: decode both PNGs, diff,
//! write the diff PNG; then the regions, annotation and heat map on top. Prints each stage, the
//! changed count and the peak memory (VmHWM).
//!
//! Usage: `diff-bench BEFORE.png AFTER.png [OUT_DIR]` (build with `--release`).

use std::path::{Path, PathBuf};
use std::time::Instant;

use vaider_visual::{
    compare_images, diff_images, find_regions, CompareOptions, DiffOptions, RegionOptions,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<PathBuf> = std::env::args_os().skip(1).map(PathBuf::from).collect();
    let [before, after, rest @ ..] = args.as_slice() else {
        return Err("usage: diff-bench BEFORE.png AFTER.png [OUT_DIR]".into());
    };
    let out_dir = rest.first().cloned().unwrap_or_else(std::env::temp_dir);

    let start = Instant::now();
    let (before_image, after_image) = std::thread::scope(|scope| {
        let before_thread = scope.spawn(|| decode(before));
        let after_image = decode(after);
        (before_thread.join(), after_image)
    });
    let before_image = before_image.map_err(|_| "the decoding thread panicked")??;
    let after_image = after_image?;
    let decoded = start.elapsed();

    let diff = diff_images(&before_image, &after_image, &DiffOptions::default());
    let diffed = start.elapsed();

    let diff_path = out_dir.join("diff-bench-diff.png");
    if let Some(image) = &diff.diff_image {
        image.write_png(&diff_path)?;
    }
    let written = start.elapsed();
    let peak_after_diff = peak_rss_kib();
    drop(diff);

    let (width, height) = before_image.dimensions();
    let comparison = compare_images(before_image, after_image, &CompareOptions::default());
    let compared = Instant::now();
    comparison.write_images(&out_dir, "diff-bench")?;
    let pictures = compared.elapsed();

    println!("images: {width}x{height}");
    println!("decode both:       {:>8.3} s", decoded.as_secs_f64());
    println!(
        "diff:              {:>8.3} s",
        (diffed - decoded).as_secs_f64()
    );
    println!(
        "write diff PNG:    {:>8.3} s",
        (written - diffed).as_secs_f64()
    );
    println!("total (odiff's):   {:>8.3} s", written.as_secs_f64());
    println!(
        "peak RSS then:     {:>8.1} MB",
        peak_after_diff as f64 / 1024.0
    );
    println!("changed pixels:    {}", comparison.changed_pixels());
    println!("diff percentage:   {:.4} %", comparison.diff_percentage());
    println!("regions:           {}", comparison.total_changes());
    // What the noise tolerance drops on this pair: regions kept at each minimum size.
    for min_region_pixels in [1, 2, 3, 5, 10] {
        let options = RegionOptions {
            min_region_pixels,
            ..RegionOptions::default()
        };
        let kept = find_regions(&comparison.pixel_diff.mask, &options).len();
        println!("  with at least {min_region_pixels:>2} changed pixels: {kept} regions");
    }
    println!(
        "three pictures:    {:>8.3} s (diff, annotation, heat map)",
        pictures.as_secs_f64()
    );
    println!(
        "peak RSS overall:  {:>8.1} MB",
        peak_rss_kib() as f64 / 1024.0
    );
    println!("diff PNG:          {}", diff_path.display());
    Ok(())
}

fn decode(path: &Path) -> Result<image::RgbaImage, String> {
    image::open(path)
        .map(|image| image.into_rgba8())
        .map_err(|error| format!("cannot read {}: {error}", path.display()))
}

/// The peak resident memory so far, in KiB, from /proc/self/status (0 where there is none).
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|line| line.strip_prefix("VmHWM:"))
                .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}
