//! `vaider-scan-bench`: the speed of the scan for screen changes (the `auto` sampling's pass over
//! a recording), in seconds of video a second, on 10-minute 1920x1080 screen recordings, mostly
//! still, as H.264 (what a screen recorder writes), VP8 WebM with Playwright's encoder settings
//! and HEVC, so that a change that slows the scan shows; with what the plan then sends (the
//! clips must stay clips). Each recording is written by ffmpeg first (minutes on 2 cores).
//!
//! Usage: vaider-scan-bench [--runs N] [--minutes M] [--codecs h264,vp8,hevc] [--tmp DIR]
//! [--out FILE]. Run with `scripts/bench.sh --scan`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use vaider_bench::report::{secs, Spread, Table};
use vaider_core::keyframes::{self, KeyframeOptions};
use vaider_core::sampling::{self, VideoFacts, VideoSampling};
use vaider_core::tokens::TokenRules;

/// The moments the recording's screen changes, as shares of its length.
const CHANGES: [f64; 8] = [0.07, 0.18, 0.29, 0.42, 0.52, 0.63, 0.77, 0.89];

struct Options {
    runs: usize,
    minutes: f64,
    codecs: Vec<String>,
    tmp: PathBuf,
    out: PathBuf,
}

fn options() -> Result<Options> {
    let mut options = Options {
        runs: 3,
        minutes: 10.0,
        codecs: vec!["h264".into(), "vp8".into(), "hevc".into()],
        tmp: std::env::temp_dir(),
        out: Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-scan.md"),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().with_context(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--runs" => options.runs = value()?.parse().context("--runs wants a count")?,
            "--minutes" => options.minutes = value()?.parse().context("--minutes wants a number")?,
            "--codecs" => options.codecs = value()?.split(',').map(str::to_string).collect(),
            "--tmp" => options.tmp = value()?.into(),
            "--out" => options.out = value()?.into(),
            _ => bail!("unknown option {arg:?}: --runs N --minutes M --codecs h264,vp8,hevc --tmp DIR --out FILE"),
        }
    }
    ensure!(options.runs > 0, "--runs wants at least 1");
    Ok(options)
}

/// The encoder arguments of each recording: H.264 as a screen recorder writes it (x264
/// `veryfast`, B-frames), VP8 as Playwright does (its own settings, 25 fps), HEVC (x265
/// `ultrafast`, which a 2-core machine can write in minutes).
fn encoder(codec: &str) -> Result<(&'static str, &'static [&'static str], u32)> {
    Ok(match codec {
        "h264" => (
            "mp4",
            &[
                "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p",
            ],
            30,
        ),
        "vp8" => (
            "webm",
            &[
                "-c:v",
                "libvpx",
                "-qmin",
                "0",
                "-qmax",
                "50",
                "-crf",
                "8",
                "-deadline",
                "realtime",
                "-speed",
                "8",
                "-b:v",
                "1M",
                "-pix_fmt",
                "yuv420p",
            ],
            25,
        ),
        "hevc" => (
            "mp4",
            &[
                "-c:v",
                "libx265",
                "-preset",
                "ultrafast",
                "-tag:v",
                "hvc1",
                "-pix_fmt",
                "yuv420p",
                "-x265-params",
                "log-level=error",
            ],
            30,
        ),
        other => bail!("unknown codec {other:?}: h264, vp8 or hevc"),
    })
}

/// A white 1080p "app" with a header, whose panels appear at `CHANGES` and a caret that
/// blinks all along.
fn write_recording(out: &Path, codec: &str, seconds: f64) -> Result<()> {
    let (_, args, rate) = encoder(codec)?;
    let mut filters = vec!["drawbox=x=0:y=0:w=1920:h=90:color=0x334455:t=fill".to_string()];
    for (i, share) in CHANGES.iter().enumerate() {
        let at = share * seconds;
        let (x, y) = (60 + (i as u32 % 4) * 460, 160 + (i as u32 / 4) * 440);
        filters.push(format!(
            "drawbox=enable='gte(t,{at})':x={x}:y={y}:w=400:h=360:color=0x{:06x}:t=fill",
            0x2060a0 + i * 0x101010
        ));
    }
    filters.push("drawbox=enable='lt(mod(t,1),0.5)':x=900:y=40:w=3:h=24:color=white:t=fill".into());
    let status = Command::new("nice")
        .args([
            "-n", "19", "ffmpeg", "-v", "error", "-y", "-f", "lavfi", "-i",
        ])
        .arg(format!("color=c=white:s=1920x1080:r={rate}:d={seconds}"))
        .args(["-vf", &filters.join(",")])
        .args(args)
        .arg(out)
        .status()
        .context("run ffmpeg (apt-get install ffmpeg)")?;
    ensure!(status.success(), "ffmpeg could not write {}", out.display());
    Ok(())
}

/// One codec's figures.
struct Row {
    codec: String,
    size: u64,
    seconds: f64,
    scans: Vec<Duration>,
    /// CPU seconds of the last scan: ffmpeg's (children) and Vaider's.
    cpu: (f64, f64),
    /// How the plan sends it on Gemini 3 and on 2.x.
    used: [String; 2],
}

#[tokio::main]
async fn main() -> Result<()> {
    let options = options()?;
    let scratch = tempfile::Builder::new()
        .prefix("vaider-scan-bench-")
        .tempdir_in(&options.tmp)?;
    let seconds = options.minutes * 60.0;
    let mut rows = Vec::new();
    for codec in &options.codecs {
        let (extension, _, _) = encoder(codec)?;
        let video = scratch
            .path()
            .join(format!("screen-1080p.{codec}.{extension}"));
        eprintln!("writing {} ...", video.display());
        let started = Instant::now();
        write_recording(&video, codec, seconds)?;
        eprintln!("  written in {}", secs(started.elapsed()));
        rows.push(measure(codec, &video, options.runs).await?);
        std::fs::remove_file(&video).ok();
    }
    let report = render(&rows, &options);
    println!("{report}");
    std::fs::write(&options.out, &report)
        .with_context(|| format!("write {}", options.out.display()))?;
    Ok(())
}

async fn measure(codec: &str, video: &Path, runs: usize) -> Result<Row> {
    let options = KeyframeOptions::default();
    let mut scans = Vec::new();
    let mut timeline = None;
    let mut cpu = (0.0, 0.0);
    for run in 0..runs {
        eprintln!("  scan {} of {runs}", run + 1);
        let before = cpu_now()?;
        let started = Instant::now();
        timeline = Some(keyframes::timeline(video, &options).await?);
        scans.push(started.elapsed());
        let after = cpu_now()?;
        cpu = (after.1 - before.1, after.0 - before.0);
    }
    let timeline = timeline.context("no scan")?;
    let facts = VideoFacts {
        duration: timeline.duration.unwrap_or(timeline.sampled_seconds),
        has_audio: timeline.has_audio,
        timeline,
    };
    let used = ["gemini-3.5-flash-lite", "gemini-2.5-flash-lite"].map(|model| {
        let plan = sampling::plan::plan(VideoSampling::Auto, &facts, TokenRules::for_model(model));
        format!(
            "{} ({} tokens of {})",
            plan.used.as_str(),
            plan.media_tokens,
            plan.default_media_tokens
        )
    });
    Ok(Row {
        codec: codec.to_string(),
        size: std::fs::metadata(video)?.len(),
        seconds: facts.duration,
        scans,
        cpu,
        used,
    })
}

/// (own, children) CPU seconds of this process, from /proc/self/stat.
fn cpu_now() -> Result<(f64, f64)> {
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    let fields: Vec<f64> = stat[stat.rfind(')').context("stat")? + 2..]
        .split(' ')
        .map(|f| f.parse().unwrap_or(0.0))
        .collect();
    // utime, stime, cutime, cstime: fields 14-17 of stat(5), 11-14 here, in ticks.
    let own = (fields[11] + fields[12]) / 100.0;
    Ok((own, (fields[13] + fields[14]) / 100.0))
}

fn render(rows: &[Row], options: &Options) -> String {
    let mut out = format!(
        "## Scan speed on {}-minute 1920x1080 screen recordings (median of {} scans each)\n\n",
        options.minutes, options.runs
    );
    let mut t = Table::new(&[
        "Recording",
        "Size",
        "Scan (median, min–max)",
        "× real time",
        "CPU: ffmpeg + Vaider (last scan)",
        "Sent on Gemini 3",
        "Sent on Gemini 2.x",
    ]);
    for row in rows {
        let scan = Spread::of(&row.scans);
        t.row(&[
            &row.codec,
            &format!("{:.1} MB", row.size as f64 / 1e6),
            &format!(
                "{} ({}–{})",
                secs(scan.median),
                secs(scan.min),
                secs(scan.max)
            ),
            &format!("{:.1}x", row.seconds / scan.median.as_secs_f64().max(1e-9)),
            &format!("{:.1} s + {:.1} s", row.cpu.0, row.cpu.1),
            &row.used[0],
            &row.used[1],
        ]);
    }
    out.push_str(&t.finish());
    out.push_str(
        "\nThe scan is `auto` sampling's one pass (4 samples a second, shrunk by ffmpeg to the \
         detector's size; H.264 and HEVC B-frames skipped); a mostly still recording must go as \
         clips.\n",
    );
    out
}
