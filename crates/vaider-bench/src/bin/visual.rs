//! `vaider-visual-bench`: the screenshot comparison against odiff (npm `odiff-bin`) and
//! pixelmatch (npm, under node) on large page-like pairs, side by side in one run: time, peak
//! memory and changed count of each. Vaider is measured twice: the diff alone as odiff does it
//! (decode both PNGs, diff, write the diff PNG), and the whole `visual_compare` up to the
//! model's turn (decode, diff, regions, close-ups, the annotated image the model is shown),
//! then until its last picture (diff image, heat map) is written off the answer's path.
//!
//! Each run is its own process, its peak resident memory read from the kernel (wait4), so no
//! run's memory counts in another's. The pairs are drawn deterministically: a page of text
//! lines, cards, buttons and photos (RGB PNGs, as browsers write them), and the same page
//! with a paragraph rewritten, a button recoloured, a photo replaced and a badge added.
//!
//! Usage: `scripts/bench.sh --visual [--sizes 3000x10000,3840x2160,7680x4320] [--runs 3]
//! [--no-pixelmatch] [--tmp DIR]`; odiff and pixelmatch come from tests/visual's npm packages
//! (`npm install --prefix tests/visual`), and are left out, saying so, when missing.

use std::io::Read as _;
use std::os::unix::process::ExitStatusExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use image::{Rgb, RgbImage};
use vaider_bench::report::{mb, secs, Spread, Table};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("--child") {
        return child(&args[1..]);
    }
    let options = Options::parse(&args)?;
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let reference = repo.join("tests/visual");
    let odiff = reference.join("node_modules/@odiff/linux-x64/odiff");
    let pixelmatch = reference.join("pixelmatch-jobs.mjs");
    let have_pixelmatch = reference.join("node_modules/pixelmatch").is_dir();
    let mut report = format!(
        "Screenshot comparison, {} runs each (median time; peak RSS of the run's process). \
         Machine: {} cores.\n\n",
        options.runs,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    for &(width, height) in &options.sizes {
        let dir = options
            .tmp
            .join(format!("vaider-visual-bench-{width}x{height}"));
        std::fs::create_dir_all(&dir)?;
        let (before, after) = pair_in_child(&dir, width, height)?;
        let mut table = Table::new(&["tool", "what", "time", "peak RSS", "changed pixels"]);
        let me = std::env::current_exe()?;
        let out = |name: &str| dir.join(name).display().to_string();
        let vaider_diff = measure(options.runs, || {
            let mut command = Command::new(&me);
            command.args(["--child", "diff"]).arg(&before).arg(&after);
            command.arg(out("vaider-diff.png"));
            command
        })?;
        vaider_diff.row(&mut table, "Vaider", "diff alone (decode, diff, diff PNG)");
        let vaider_compare = measure(options.runs, || {
            let mut command = Command::new(&me);
            command
                .args(["--child", "compare"])
                .arg(&before)
                .arg(&after);
            command.arg(&dir);
            command
        })?;
        let answer = Spread::of(&vaider_compare.answer_times).median;
        table.row(&[
            "Vaider",
            "whole visual_compare, answer ready (model's turn excluded)",
            &secs(answer),
            &mb(vaider_compare.answer_peak_kib),
            &vaider_compare.changed,
        ]);
        vaider_compare.row(&mut table, "Vaider", "... and every picture written");
        if odiff.is_file() {
            let odiff_run = measure(options.runs, || {
                let mut command = Command::new(&odiff);
                command.arg(&before).arg(&after).arg(out("odiff-diff.png"));
                command.arg("--parsable-stdout");
                command
            })?;
            odiff_run.row(&mut table, "odiff", "decode, diff, diff PNG");
        } else {
            report.push_str("odiff left out: run `npm install --prefix tests/visual`.\n\n");
        }
        if options.pixelmatch && have_pixelmatch {
            let jobs = dir.join("jobs.json");
            let job = serde_json::json!([{
                "a": before, "b": after, "out": out("pixelmatch-diff.png"), "options": {}
            }]);
            std::fs::write(&jobs, job.to_string())?;
            let run = measure(1, || {
                let mut command = Command::new("node");
                command.arg(&pixelmatch).arg(&jobs);
                command
            })?;
            run.row(
                &mut table,
                "pixelmatch 7.2 (node)",
                "decode, diff, diff PNG (1 run)",
            );
        } else if options.pixelmatch {
            report.push_str("pixelmatch left out: run `npm install --prefix tests/visual`.\n\n");
        }
        report.push_str(&format!("### {width} x {height}\n\n{}\n", table.finish()));
    }
    println!("{report}");
    Ok(())
}

struct Options {
    sizes: Vec<(u32, u32)>,
    runs: usize,
    pixelmatch: bool,
    tmp: PathBuf,
}

const USAGE: &str = "usage: vaider-visual-bench [--sizes 3000x10000,3840x2160,7680x4320] \
                     [--runs 3] [--no-pixelmatch] [--tmp DIR]";

impl Options {
    fn parse(args: &[String]) -> Result<Options> {
        let mut options = Options {
            // A long page, a 4K screen and an 8K one.
            sizes: vec![(3000, 10000), (3840, 2160), (7680, 4320)],
            runs: 3,
            pixelmatch: true,
            tmp: std::env::temp_dir(),
        };
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let mut value = || args.next().context("a value after the option");
            match arg.as_str() {
                "--sizes" => {
                    options.sizes = value()?
                        .split(',')
                        .map(|size| {
                            let (w, h) = size.split_once('x').context("sizes are WxH")?;
                            Ok((w.parse()?, h.parse()?))
                        })
                        .collect::<Result<_>>()?
                }
                "--runs" => options.runs = value()?.parse::<usize>()?.max(1),
                "--tmp" => options.tmp = PathBuf::from(value()?),
                "--no-pixelmatch" => options.pixelmatch = false,
                "--help" | "-h" => {
                    println!("{USAGE}");
                    std::process::exit(0);
                }
                other => bail!("unknown option {other}; {USAGE}"),
            }
        }
        Ok(options)
    }
}

/// The runs of one command: wall times, the largest peak RSS, and what the last run printed.
struct Measured {
    times: Vec<Duration>,
    peak_kib: u64,
    changed: String,
    /// Vaider's compare: when the answer was ready, and the peak RSS then.
    answer_times: Vec<Duration>,
    answer_peak_kib: u64,
}

impl Measured {
    fn row(&self, table: &mut Table, tool: &str, what: &str) {
        let time = secs(Spread::of(&self.times).median);
        table.row(&[tool, what, &time, &mb(self.peak_kib), &self.changed]);
    }
}

fn measure(runs: usize, command: impl Fn() -> Command) -> Result<Measured> {
    let mut measured = Measured {
        times: Vec::new(),
        peak_kib: 0,
        changed: String::new(),
        answer_times: Vec::new(),
        answer_peak_kib: 0,
    };
    for _ in 0..runs {
        let (time, peak_kib, stdout) = run_measured(command())?;
        measured.times.push(time);
        measured.peak_kib = measured.peak_kib.max(peak_kib);
        // Vaider's children print "changed N" and "answer SECONDS PEAK_KIB"; odiff prints
        // "N;percentage", pixelmatch "[N]".
        for line in stdout.lines() {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["changed", n] => measured.changed = n.to_string(),
                ["answer", seconds, peak] => {
                    measured
                        .answer_times
                        .push(Duration::from_secs_f64(seconds.parse()?));
                    measured.answer_peak_kib = measured.answer_peak_kib.max(peak.parse()?);
                }
                _ if line.contains(';') => {
                    measured.changed = line.split(';').next().unwrap_or_default().into()
                }
                _ if line.starts_with('[') => {
                    measured.changed = line.trim_matches(['[', ']']).to_string()
                }
                _ => {}
            }
        }
        if measured.changed.is_empty() {
            measured.changed = "0".into();
        }
    }
    Ok(measured)
}

/// Runs a command to its end; its wall time, its peak RSS in KiB (the kernel's maxrss, from
/// wait4) and its standard output.
fn run_measured(mut command: Command) -> Result<(Duration, u64, String)> {
    let start = Instant::now();
    let mut child = command
        .stdout(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot run {command:?}"))?;
    let mut stdout = String::new();
    if let Some(mut pipe) = child.stdout.take() {
        pipe.read_to_string(&mut stdout)?;
    }
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value of the plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our own child's, not yet waited for; both pointers are to live locals.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    let time = start.elapsed();
    if pid < 0 {
        bail!("wait4 failed: {}", std::io::Error::last_os_error());
    }
    let status = std::process::ExitStatus::from_raw(status);
    // odiff exits 22 when the images differ.
    if !(status.success() || status.code() == Some(22)) {
        bail!("{command:?} failed ({status}): {stdout}");
    }
    Ok((time, usage.ru_maxrss as u64, stdout))
}

/// Draws the pair in a process of its own. The kernel's peak RSS of a child (wait4's maxrss)
/// starts from its parent's high-water mark when it is spawned, so the bench must never hold
/// a drawn page itself: a 4K pair's runs all read 201 MB, the bench's own peak after drawing
/// the long page, where the diff peaked at 128 MB.
fn pair_in_child(dir: &Path, width: u32, height: u32) -> Result<(PathBuf, PathBuf)> {
    let status = Command::new(std::env::current_exe()?)
        .args(["--child", "pair"])
        .arg(dir)
        .args([width.to_string(), height.to_string()])
        .status()
        .context("run the bench to draw the pair")?;
    if !status.success() {
        bail!("drawing the {width}x{height} pair failed ({status})");
    }
    Ok((dir.join("before.png"), dir.join("after.png")))
}

/// What a child run does: `diff BEFORE AFTER OUT.png`, `compare BEFORE AFTER DIR` or `pair DIR
/// WIDTH HEIGHT`.
fn child(args: &[String]) -> Result<()> {
    if let [mode, dir, width, height] = args {
        if mode == "pair" {
            page_pair(Path::new(dir), width.parse()?, height.parse()?)?;
            return Ok(());
        }
    }
    let [mode, before, after, out] = args else {
        bail!("--child diff|compare BEFORE AFTER OUT");
    };
    let (before, after, out) = (Path::new(before), Path::new(after), Path::new(out));
    match mode.as_str() {
        "diff" => {
            let (before, after) = vaider_visual::read_pair(before, after)?;
            let diff = vaider_visual::diff_images(&before, &after, &Default::default());
            if let Some(image) = &diff.diff_image {
                image.write_png(out)?;
            }
            println!("changed {}", diff.changed_pixels);
        }
        "compare" => {
            // As `service::compare_screenshots` does it, the model's turn left out.
            let start = Instant::now();
            let options = vaider_visual::CompareOptions::default();
            let mut comparison = vaider_visual::compare(before, after, &options)?;
            let annotation_now = comparison.total_changes() > 0;
            let (_, later) = comparison.write_images_split(out, "bench", annotation_now)?;
            let answer = start.elapsed();
            println!(
                "answer {} {}",
                answer.as_secs_f64(),
                vaider_bench::server::ProcStatus::read(std::process::id())?.vm_hwm_kib
            );
            println!("changed {}", comparison.changed_pixels());
            later.write()?;
        }
        other => bail!("unknown child mode {other}"),
    }
    Ok(())
}

/// The pair, drawn once per size and kept in `dir`.
fn page_pair(dir: &Path, width: u32, height: u32) -> Result<(PathBuf, PathBuf)> {
    let (before_path, after_path) = (dir.join("before.png"), dir.join("after.png"));
    if before_path.is_file() && after_path.is_file() {
        return Ok((before_path, after_path));
    }
    let before = page(width, height);
    let mut after = before.clone();
    edit(&mut after);
    for (image, path) in [(&before, &before_path), (&after, &after_path)] {
        // Default compression, as browsers write their screenshots.
        image
            .save(path)
            .with_context(|| format!("cannot write {}", path.display()))?;
    }
    Ok((before_path, after_path))
}

/// A small deterministic generator.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }

    fn below(&mut self, n: u32) -> u32 {
        self.next() % n.max(1)
    }
}

/// Rows a page section takes.
const SECTION: u32 = 640;

/// A long web page: a header bar, then sections of a title, paragraphs, a card with a button
/// and a photo.
fn page(width: u32, height: u32) -> RgbImage {
    let mut image = RgbImage::from_pixel(width, height, Rgb([255, 255, 255]));
    fill(&mut image, 0, 0, width, 96, [32, 48, 72]);
    let mut random = Lcg(1);
    let mut top = 140;
    while top + SECTION <= height {
        section(&mut image, top, &mut random);
        top += SECTION;
    }
    image
}

fn section(image: &mut RgbImage, top: u32, random: &mut Lcg) {
    let width = image.width();
    text(image, 60, top, 1, 22, random.next().into());
    text(image, 60, top + 50, 12, 11, random.next().into());
    let card_left = width / 2 + 40;
    fill(image, card_left, top + 40, width / 3, 220, [244, 246, 248]);
    fill(image, card_left + 30, top + 200, 180, 44, [30, 110, 220]);
    photo(
        image,
        60,
        top + 260,
        width / 2 - 100,
        320,
        random.next().into(),
    );
}

/// Lines of "text": glyph-sized strokes with grey anti-aliased edges.
fn text(image: &mut RgbImage, left: u32, top: u32, lines: u32, size: u32, seed: u64) {
    let mut random = Lcg(seed);
    let right = image.width() / 2 - 20;
    for line in 0..lines {
        let y = top + line * (size + size / 2 + 4);
        let mut x = left;
        while x + size < right {
            let glyph = size / 2 + random.below(size / 2);
            for gy in 0..size {
                for gx in 0..glyph {
                    if random.below(3) == 0 {
                        continue;
                    }
                    let edge = gx == 0 || gx + 1 == glyph || gy == 0 || gy + 1 == size;
                    let value = if edge {
                        110 + random.below(100) as u8
                    } else {
                        34
                    };
                    put(image, x + gx, y + gy, [value, value, value + 8]);
                }
            }
            x += glyph + 2 + random.below(4) * (size / 3);
        }
    }
}

/// A photo: a smooth gradient with noise.
fn photo(image: &mut RgbImage, left: u32, top: u32, width: u32, height: u32, seed: u64) {
    let mut random = Lcg(seed);
    let tint = random.below(120) as u8;
    for y in top..top + height {
        for x in left..left + width {
            let noise = random.below(24) as u8;
            let r = ((x - left) * 200 / width.max(1)) as u8;
            let g = ((y - top) * 200 / height.max(1)) as u8;
            put(
                image,
                x,
                y,
                [r.saturating_add(noise), g.saturating_add(tint), 90 + noise],
            );
        }
    }
}

/// The after-page: a paragraph rewritten, a button recoloured, a photo replaced, a badge added.
fn edit(image: &mut RgbImage) {
    let width = image.width();
    let sections = (image.height().saturating_sub(140)) / SECTION;
    let at = |n: u32| 140 + (n % sections.max(1)) * SECTION;
    fill(image, 60, at(1) + 50, width / 2 - 80, 200, [255, 255, 255]);
    text(image, 60, at(1) + 50, 8, 11, 99);
    fill(image, width / 2 + 70, at(3) + 200, 180, 44, [220, 60, 40]);
    photo(image, 60, at(5) + 260, width / 2 - 100, 320, 7);
    fill(image, width - 120, at(7) + 60, 60, 24, [230, 30, 90]);
}

fn fill(image: &mut RgbImage, left: u32, top: u32, width: u32, height: u32, colour: [u8; 3]) {
    for y in top..top + height {
        for x in left..left + width {
            put(image, x, y, colour);
        }
    }
}

fn put(image: &mut RgbImage, x: u32, y: u32, colour: [u8; 3]) {
    if x < image.width() && y < image.height() {
        image.put_pixel(x, y, Rgb(colour));
    }
}
