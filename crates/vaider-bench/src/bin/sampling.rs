//! `vaider-sampling-bench`: what change-aware video sampling saves. For the shared Playwright
//! recordings and two 60 s 800x450 VP8 recordings with 8 screen changes and a blinking caret
//! (Playwright's format, no sound): flat colour panels, and the same panels each with a line
//! of text: input tokens and cost per analysed minute with `full` (Gemini's one frame a
//! second) and `auto`, as the fake Gemini counts them at Gemini's documented rates, on a
//! Gemini 2.x and a Gemini 3 model (goal: `auto` at least 5x fewer), against the default
//! resolution and against one frame a second at the resolution `auto` needed for text
//! (HIGH on Gemini 3), with Vaider's estimate beside each count; and the time the plan adds before the upload starts (goal: under 0.5 s for
//! the 60 s recording): the call's start to the fake's first upload request, `auto` against
//! `full`. The scan itself runs beside the upload; its length is reported too.
//!
//! Run with `scripts/bench.sh --sampling`, or `target/release/vaider-sampling-bench`.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};
use vaider_core::analysis::tools;

use anyhow::{bail, ensure, Context, Result};
use fake_gemini::FakeGemini;
use vaider_bench::report::{ms, secs, verdict, Spread, Table};
use vaider_core::progress::NoProgress;
use vaider_core::sampling::{self, VideoSampling};
use vaider_core::secrets::{ApiKey, KeySource};
use vaider_core::tokens::{Resolution, TokenRules};
use vaider_core::{AnalysisRequest, Config, Door, Vaider};

/// When the synthetic recording's screen changes, in seconds.
const CHANGES: [f64; 8] = [4.0, 11.0, 17.5, 25.0, 31.0, 38.0, 46.0, 53.5];
/// Times the plan is timed.
const RUNS: usize = 7;
/// The families compared: a Gemini 2.x and a Gemini 3 model.
const MODELS: [&str; 2] = ["gemini-2.5-flash-lite", "gemini-3.5-flash-lite"];

/// A white "app" whose panels appear at `CHANGES` (each with a line of text if `titled`),
/// with a blinking caret, recorded the way Playwright records: VP8 WebM, 800x450, 25 fps, no
/// sound.
fn playwright_like_recording(out: &Path, titled: bool) -> Result<()> {
    let mut filters = vec!["drawbox=x=0:y=0:w=800:h=40:color=0x334455:t=fill".to_string()];
    for (i, at) in CHANGES.iter().enumerate() {
        let (x, y) = (20 + (i as u32 % 4) * 190, 60 + (i as u32 / 4) * 190);
        filters.push(format!(
            "drawbox=enable='gte(t,{at})':x={x}:y={y}:w=170:h=150:color=0x{:06x}:t=fill",
            0x2060a0 + i * 0x101010
        ));
        if titled {
            filters.push(format!(
                "drawtext=enable='gte(t,{at})':text='Order {} shipped':x={}:y={}:fontsize=14:fontcolor=white",
                1000 + i,
                x + 10,
                y + 12
            ));
        }
    }
    filters.push("drawbox=enable='lt(mod(t,1),0.5)':x=400:y=12:w=2:h=16:color=white:t=fill".into());
    let status = Command::new("ffmpeg")
        .args(["-v", "error", "-y", "-f", "lavfi"])
        .args([
            "-i",
            "color=c=white:s=800x450:r=25:d=60",
            "-vf",
            &filters.join(","),
        ])
        .args([
            "-c:v",
            "libvpx",
            "-b:v",
            "1M",
            "-deadline",
            "realtime",
            "-cpu-used",
            "8",
        ])
        .arg(out)
        .status()
        .context("run ffmpeg (apt-get install ffmpeg)")?;
    ensure!(status.success(), "ffmpeg could not make the recording");
    Ok(())
}

/// One analysis through the real pipeline, with the given sampling.
struct Measured {
    /// From the call's start to the upload's start request reaching the fake.
    to_upload: Duration,
    /// The whole call.
    took: Duration,
    input_tokens: u64,
    estimated: Option<u64>,
    frames: u64,
    used: String,
    /// The resolution the frames went at ("default", "high"…).
    resolution: String,
}

async fn analyse(
    engine: &Vaider,
    fake: &FakeGemini,
    video: &Path,
    sampling: VideoSampling,
    model: &str,
) -> Result<Measured> {
    let mut request =
        AnalysisRequest::new(tools::ANALYZE_VIDEO, Door::Cli, video.display().to_string());
    request.sampling = Some(sampling);
    request.model = Some(model.to_string());
    request.no_cache = true;
    let started = Instant::now();
    let result = match engine.analyse(request, &NoProgress).await {
        Ok(result) => result,
        Err(failure) => bail!("analysis of {} failed: {failure}", video.display()),
    };
    let upload = fake
        .requests()
        .into_iter()
        .filter(|r| r.at >= started && r.path.starts_with("/upload/"))
        .map(|r| r.at)
        .min()
        .context("the fake saw no upload")?;
    Ok(Measured {
        to_upload: upload - started,
        took: started.elapsed(),
        input_tokens: result.usage.input_tokens,
        estimated: result.usage.estimated_input_tokens,
        frames: result.frames_analysed,
        resolution: result
            .sampling
            .as_ref()
            .map_or_else(|| "-".into(), |s| s.media_resolution.clone()),
        used: result.sampling.map_or_else(
            || "-".into(),
            |s| {
                let at: Vec<String> = s.moments.iter().map(|m| format!("{m}")).collect();
                format!("{} at {} s", s.used.as_str(), at.join(", "))
            },
        ),
    })
}

/// Gemini's one frame a second at the resolution `auto`'s sharpest clips went at (on Gemini 3,
/// HIGH so that text reads; "mixed" counts as HIGH): the default's count with each frame
/// priced at that resolution instead, per the documented table. "-" when auto sent no clips.
fn same_resolution(
    full: &Measured,
    auto: &Measured,
    model: &str,
    per_minute: impl Fn(f64) -> f64,
) -> String {
    if !auto.used.starts_with("clips") {
        return "-".into();
    }
    let rules = TokenRules::for_model(model);
    let resolution = match auto.resolution.as_str() {
        "low" => Resolution::Low,
        "medium" => Resolution::Medium,
        "high" | "mixed" => Resolution::High,
        _ => Resolution::Default,
    };
    let extra =
        rules.video_frame(resolution) as i64 - rules.video_frame(Resolution::Default) as i64;
    let tokens = (full.input_tokens as i64 + full.frames as i64 * extra).max(0) as f64;
    format!(
        "{:.0} ({:.1}x)",
        per_minute(tokens),
        tokens / auto.input_tokens.max(1) as f64
    )
}

/// How long the scan and the plan take (they run beside the upload).
async fn plan_time(video: &Path) -> Result<Spread> {
    let mut times = Vec::new();
    for _ in 0..RUNS {
        let started = Instant::now();
        let facts = sampling::study(video).await?;
        let _ = sampling::plan::plan(
            VideoSampling::Auto,
            &facts,
            TokenRules::for_model(MODELS[0]),
        );
        times.push(started.elapsed());
    }
    Ok(Spread::of(&times))
}

fn shared_media() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/media"
    ))
}

#[tokio::main]
async fn main() -> Result<()> {
    let work = tempfile::tempdir()?;
    let synthetic = work.path().join("playwright-60s-8-changes.webm");
    playwright_like_recording(&synthetic, false)?;
    let titled = work.path().join("playwright-60s-8-titled-changes.webm");
    playwright_like_recording(&titled, true)?;
    let mut videos = vec![
        ("60 s 800x450 VP8, 8 flat panels", synthetic.clone()),
        ("60 s 800x450 VP8, 8 panels with text", titled.clone()),
    ];
    for name in ["login-flow.webm", "login-flow.mp4"] {
        // A copy: Vaider keeps each interaction's files beside the media.
        let path = work.path().join(name);
        if std::fs::copy(shared_media().join(name), &path).is_ok() {
            videos.push((name, path));
        }
    }

    let fake = FakeGemini::start().await;
    let mut config = Config {
        data_dir: Some(work.path().join("data")),
        timeout_sec: 120,
        // Many calls a minute on purpose: no per-minute budget.
        max_calls_per_minute: 0,
        ..Config::default()
    };
    config.gemini.base_url = fake.base_url();
    config.gemini.poll_interval_ms = 20;
    let engine = Vaider::open(config)?;
    engine.set_api_key(
        ApiKey::new(FakeGemini::API_KEY),
        KeySource::Environment("GEMINI_API_KEY".into()),
    );

    // Sampling changes what goes in; what the model writes back is another matter.
    let defaults = Config::default();
    let mut tokens = Table::new(&[
        "recording",
        "model",
        "full: tokens/min",
        "auto: tokens/min",
        "auto sent",
        "fewer than the default",
        "goal ≥5x",
        "1 fps at auto's sharpest resolution: tokens/min (auto fewer)",
        "auto: estimate / counted",
        "input $/min: full",
        "auto",
    ]);
    let mut timing = Table::new(&[
        "recording",
        "call start to upload: full",
        "auto",
        "added before upload",
        "goal < 0.5 s",
        "scan, beside the upload (median, min–max)",
        "whole call with the instant fake: full",
        "auto",
    ]);
    for (label, video) in &videos {
        let seconds = vaider_core::keyframes::duration_seconds(video)
            .await
            .context("ffprobe could not read the length")?;
        let per_minute = |n: f64| n * 60.0 / seconds;
        for model in MODELS {
            let full = analyse(&engine, &fake, video, VideoSampling::Full, model).await?;
            let auto = analyse(&engine, &fake, video, VideoSampling::Auto, model).await?;
            let ratio = full.input_tokens as f64 / auto.input_tokens.max(1) as f64;
            // Progress, before the slower timing runs.
            eprintln!(
                "{label}, {model}: full {} tokens, auto {} ({ratio:.1}x fewer; {}, {} resolution)",
                full.input_tokens, auto.input_tokens, auto.used, auto.resolution
            );
            let input_price = defaults
                .price_of(model)
                .map_or(0.0, |p| p.input_per_million / 1e6);
            tokens.row(&[
                label,
                model,
                &format!(
                    "{:.0} ({} frames)",
                    per_minute(full.input_tokens as f64),
                    full.frames
                ),
                &format!(
                    "{:.0} ({} frames)",
                    per_minute(auto.input_tokens as f64),
                    auto.frames
                ),
                &format!("{} ({} resolution)", auto.used, auto.resolution),
                &format!("{ratio:.1}x"),
                verdict(ratio >= 5.0),
                &same_resolution(&full, &auto, model, per_minute),
                &auto
                    .estimated
                    .map_or_else(|| "-".into(), |e| format!("{e} / {}", auto.input_tokens)),
                &format!("{:.5}", per_minute(full.input_tokens as f64) * input_price),
                &format!("{:.5}", per_minute(auto.input_tokens as f64) * input_price),
            ]);
        }
        // The time to the upload, over a few calls each (the model does not change it).
        let (mut full_waits, mut auto_waits) = (Vec::new(), Vec::new());
        let (mut full_took, mut auto_took) = (Vec::new(), Vec::new());
        for _ in 0..RUNS {
            let full = analyse(&engine, &fake, video, VideoSampling::Full, MODELS[0]).await?;
            let auto = analyse(&engine, &fake, video, VideoSampling::Auto, MODELS[0]).await?;
            full_waits.push(full.to_upload);
            auto_waits.push(auto.to_upload);
            full_took.push(full.took);
            auto_took.push(auto.took);
        }
        let scan = plan_time(video).await?;
        let (full_wait, auto_wait) = (
            Spread::of(&full_waits).median,
            Spread::of(&auto_waits).median,
        );
        let added = auto_wait.saturating_sub(full_wait);
        timing.row(&[
            label,
            &ms(full_wait),
            &ms(auto_wait),
            &ms(added),
            verdict(added < Duration::from_millis(500)),
            &format!(
                "{:.3} s ({:.3}–{:.3})",
                scan.median.as_secs_f64(),
                scan.min.as_secs_f64(),
                scan.max.as_secs_f64()
            ),
            &secs(Spread::of(&full_took).median),
            &secs(Spread::of(&auto_took).median),
        ]);
    }
    let report = format!(
        "## Change-aware video sampling\n\n### Tokens (each model's input price, tokens as the fake Gemini counts them)\n\n{}\n\
         ### Time (the fake uploads and processes at once; a real upload and Gemini's processing, \
         seconds for a video, hide the scan)\n\n{}",
        tokens.finish(),
        timing.finish()
    );
    println!("{report}");
    let target = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target"));
    let _ = std::fs::write(target.join("sampling-bench-report.md"), &report);
    Ok(())
}
