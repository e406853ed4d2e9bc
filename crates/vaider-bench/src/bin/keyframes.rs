//! `vaider-keyframes-bench`: the video-to-keyframes targets. (1) On a 60 s 1280x720 screen
//! recording whose screen changes at known moments: how many frames are sent, against the 60
//! a 1 fps sampler would send, and how long extraction takes (target under 2 s), as H.264 and
//! as the VP8 WebM Playwright records. (2) Peak
//! memory of a release `vaider serve` sending a 100 MB video to an images-only provider (the
//! fake OpenAI-compatible server), target under 150 MB RSS.
//!
//! Run with `scripts/bench.sh` (which runs this after the core benchmark).

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};
use vaider_bench::report::{kib_to_mb, verdict, Spread};
use vaider_bench::server::{analyse, ProcStatus, RssSampler, Server};
use vaider_core::keyframes::{self, KeyframeOptions};

/// The moments the synthetic recording's screen changes, in seconds.
const CHANGES: [f64; 8] = [4.0, 11.0, 17.5, 25.0, 31.0, 38.0, 46.0, 53.5];

fn ffmpeg(args: &[&str]) -> Result<()> {
    let status = Command::new("ffmpeg")
        .args(["-v", "error", "-y"])
        .args(args)
        .status()
        .context("run ffmpeg (apt-get install ffmpeg)")?;
    ensure!(status.success(), "ffmpeg {args:?} failed");
    Ok(())
}

/// A white "app" whose panels appear at `CHANGES`, with a small blinking cursor for realism.
fn screen_recording(out: &Path) -> Result<()> {
    let mut filters = vec!["drawbox=x=0:y=0:w=1280:h=60:color=0x334455:t=fill".to_string()];
    for (i, at) in CHANGES.iter().enumerate() {
        let (x, y) = (40 + (i as u32 % 4) * 300, 100 + (i as u32 / 4) * 280);
        filters.push(format!(
            "drawbox=enable='gte(t,{at})':x={x}:y={y}:w=260:h=220:color=0x{:06x}:t=fill",
            0x2060a0 + i * 0x101010
        ));
    }
    // A 2x16 px caret blinking twice a second: the kind of change that must not count.
    filters.push("drawbox=enable='lt(mod(t,1),0.5)':x=600:y=30:w=2:h=16:color=white:t=fill".into());
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "color=c=white:s=1280x720:r=30:d=60",
        "-vf",
        &filters.join(","),
        "-c:v",
        "libx264",
        "-preset",
        "veryfast",
        "-pix_fmt",
        "yuv420p",
        out.to_str().context("path")?,
    ])
}

/// Times each keyframe measure is taken.
const RUNS: usize = 7;

/// "median s (min–max)" of a few wall-clock times.
fn range(times: &[Duration]) -> String {
    let spread = Spread::of(times);
    format!(
        "{:.2} s ({:.2}–{:.2})",
        spread.median.as_secs_f64(),
        spread.min.as_secs_f64(),
        spread.max.as_secs_f64()
    )
}

/// CPU seconds of this process and of its finished children (ffmpeg), from /proc/self/stat.
#[derive(Debug, Default)]
struct Cpu {
    own: f64,
    children: f64,
}

impl Cpu {
    fn now() -> Result<Cpu> {
        let stat = std::fs::read_to_string("/proc/self/stat")?;
        // Fields after the command name, which is in parentheses and may hold spaces.
        let fields: Vec<f64> = stat[stat.rfind(')').context("stat")? + 2..]
            .split(' ')
            .map(|f| f.parse().unwrap_or(0.0))
            .collect();
        // utime, stime, cutime, cstime are fields 14-17 of stat(5): 11-14 here, in ticks.
        let tick = 100.0;
        Ok(Cpu {
            own: (fields[11] + fields[12]) / tick,
            children: (fields[13] + fields[14]) / tick,
        })
    }

    fn since(&self, before: &Cpu) -> Cpu {
        Cpu {
            own: self.own - before.own,
            children: self.children - before.children,
        }
    }
}

#[tokio::main]
async fn main() -> Result<()> {
    let scratch = tempfile::tempdir()?;
    let recording = scratch.path().join("recording-60s-720p.mp4");
    screen_recording(&recording)?;

    let options = KeyframeOptions::default();
    // This machine's speed drifts by tens of percent from one second to the next (it shares
    // its host), so each measure is taken several times and the median reported, with the
    // range, and the CPU time, which drifts less.
    let mut detect = Vec::new();
    let mut extract = Vec::new();
    let mut times = Vec::new();
    let mut frames = Vec::new();
    let mut cpu = Cpu::default();
    for run in 0..RUNS {
        let started = Instant::now();
        times = keyframes::change_points(&recording, &options).await?;
        detect.push(started.elapsed());
        let before = Cpu::now()?;
        let started = Instant::now();
        let out = scratch.path().join(format!("frames-{run}"));
        frames = keyframes::extract(&recording, &out, &options).await?;
        extract.push(started.elapsed());
        cpu = Cpu::now()?.since(&before);
    }
    let found: Vec<String> = times.iter().map(|t| format!("{t:.2}")).collect();

    // The same recording as Playwright writes it: VP8 WebM at 25 fps with Playwright's encoder
    // settings. VP8 has no frames that can be skipped.
    let webm = scratch.path().join("recording-60s-720p.webm");
    let recording_path = recording.to_str().context("path")?;
    ffmpeg(&[
        "-i",
        recording_path,
        "-r",
        "25",
        "-c:v",
        "vp8",
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
        webm.to_str().context("path")?,
    ])?;
    let mut webm_extract = Vec::new();
    let mut webm_frames = Vec::new();
    for run in 0..RUNS {
        let started = Instant::now();
        let out = scratch.path().join(format!("webm-frames-{run}"));
        webm_frames = keyframes::extract(&webm, &out, &options).await?;
        webm_extract.push(started.elapsed());
    }

    // 100 MB of busy video (test pattern with noise) for the memory run.
    let big = scratch.path().join("busy-100mb.mp4");
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc2=size=1280x720:rate=30",
        "-t",
        "100",
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-b:v",
        "8M",
        big.to_str().context("path")?,
    ])?;
    let big_mb = std::fs::metadata(&big)?.len() as f64 / 1e6;
    let fake = fake_vision::FakeOpenAi::start().await;
    let vaider = vaider_bench::server::default_vaider();
    let base = fake.base_url();
    let server = Server::start_with_env(
        &vaider,
        "http://127.0.0.1:9",
        scratch.path(),
        None,
        &[
            ("VAIDER_PROVIDER", "openai"),
            ("VAIDER_OPENAI_BASE_URL", &base),
            ("OPENAI_API_KEY", fake_vision::FakeOpenAi::API_KEY),
        ],
    )
    .await?;
    let before = ProcStatus::read(server.pid)?;
    let sampler = RssSampler::start(server.pid, Duration::from_millis(50));
    let client = reqwest::Client::new();
    let started = Instant::now();
    let answer = analyse(&client, &server, &big, true).await?;
    let whole = started.elapsed();
    let (max_sampled, _) = sampler.finish();
    let after = ProcStatus::read(server.pid)?;
    let sent = answer.body["framesAnalysed"].as_u64().unwrap_or(0);
    server.stop().await?;

    let peak_mb = kib_to_mb(after.vm_hwm_kib);
    let report = format!(
        "## Keyframes benchmark\n\n\
| Measurement | Value | Target | Result |\n|---|---|---|---|\n\
| Frames sent for a 60 s 1280x720 screen recording with 8 changes | {} (1 fps sampler: 60) | fewer than 60, one per change + first + last | {} |\n\
| Change detection alone: the same pass, writing no frame (median of {RUNS}) | {} | | |\n\
| Keyframe extraction: one decoding pass finding the changes and keeping {} JPEG frames (median of {RUNS}) | {} | < 2 s | {} |\n\
| CPU time of one extraction: ffmpeg (decoding) + Vaider (probes, JPEG) | {:.2} s + {:.2} s | | |\n\
| The same recording as Playwright records it, VP8 WebM at 25 fps: {} frames (median of {RUNS}) | {} | < 2 s | {} |\n\
| Peak RSS of `vaider serve`, {:.0} MB video to an images-only provider | {:.1} MB (sampled max {:.1} MB; {:.1} MB before) | < 150 MB | {} |\n\
| That analysis end to end ({} frames sent) | {:.2} s | | |\n\n\
Change points found (s): {}; true changes at 0 (first frame), {} and the last frame.\n",
        frames.len(),
        if frames.len() == CHANGES.len() + 2 { "PASS" } else { "CHECK" },
        range(&detect),
        frames.len(),
        range(&extract),
        verdict(Spread::of(&extract).median < Duration::from_secs(2)),
        cpu.children,
        cpu.own,
        webm_frames.len(),
        range(&webm_extract),
        verdict(Spread::of(&webm_extract).median < Duration::from_secs(2)),
        big_mb,
        peak_mb,
        kib_to_mb(max_sampled),
        kib_to_mb(before.vm_rss_kib),
        verdict(peak_mb < 150.0),
        sent,
        whole.as_secs_f64(),
        found.join(", "),
        CHANGES.map(|c| c.to_string()).join(", "),
    );
    println!("{report}");
    let out = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/bench-keyframes.md");
    std::fs::write(&out, &report).with_context(|| format!("write {}", out.display()))?;
    Ok(())
}
