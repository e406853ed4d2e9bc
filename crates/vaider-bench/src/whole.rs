//! Section 5: whole calls on a real recording against curl, side by side in one run: curl's
//! four calls, and a whole analysis through `vaider serve` with `sampling: auto` (the scan for
//! screen changes runs beside the upload) and with `sampling: full` (no scan). The recording
//! is raw 1280x720 frames (I420 in AVI), so it is as large as a long compressed one; the scan
//! reads its sampled frames itself, without ffmpeg (a seventh of the file at 4 samples a
//! second), while the upload reads all of it. `--whole-video` runs them on a given video
//! instead, such as a long compressed screen recording, whose scan is ffmpeg's decoding.
//! `--never-still` runs them on two recordings whose screen never stands still (ffmpeg's
//! moving test pattern, its colours turning): raw, 829 MB, and H.264 at 100 Mbit/s, about
//! 800 MB. Their whole video goes, and the scan must cost the call next to nothing.

use std::path::Path;

use super::*;

/// One whole analysis by Vaider.
pub(super) struct WholeSample {
    total: Duration,
    /// Largest VmRSS of `vaider serve` during the call (ffmpeg, its child, not counted).
    peak_kib: u64,
    /// How the video went ("full", "clips", "keyframes") and why.
    used: String,
    reason: String,
}

pub(super) struct WholeComparison {
    size: u64,
    /// What the video is, for the report's title.
    what: String,
    curl: Vec<Duration>,
    auto: Vec<WholeSample>,
    full: Vec<WholeSample>,
}

/// 20 s of a still page at 30 fps, where a panel appears at 5 s and a toast shows from 12 to
/// 14 s: raw yuv420p in AVI, 791 MiB.
fn make_recording(out: &Path) -> Result<()> {
    let status = std::process::Command::new("ffmpeg")
        .args(["-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i"])
        .arg("color=c=white:s=1280x720:r=30:d=20")
        .arg("-vf")
        .arg(
            "drawbox=x=100:y=100:w=300:h=80:color=blue:t=fill:enable='gte(t,5)',\
             drawbox=x=600:y=400:w=200:h=40:color=red:t=fill:enable='between(t,12,14)'",
        )
        .args(["-c:v", "rawvideo", "-pix_fmt", "yuv420p"])
        .arg(out)
        .status()
        .context("run ffmpeg to write the recording (is it installed?)")?;
    ensure!(status.success(), "ffmpeg could not write {}", out.display());
    Ok(())
}

/// A screen that never stands still: ffmpeg's moving test pattern at 1280x720 and 30 fps,
/// its colours turning, `seconds` long, written with `codec` (ffmpeg's arguments).
fn make_never_still(out: &Path, seconds: u32, codec: &[&str]) -> Result<()> {
    let status = std::process::Command::new("nice")
        .args([
            "-n", "19", "ffmpeg", "-nostdin", "-v", "error", "-y", "-f", "lavfi", "-i",
        ])
        .arg(format!("testsrc2=s=1280x720:r=30:d={seconds}"))
        .args(["-vf", "hue=H=2*PI*t/5,noise=alls=12:allf=t+u"])
        .args(codec)
        .arg(out)
        .status()
        .context("run ffmpeg to write the recording (is it installed?)")?;
    ensure!(status.success(), "ffmpeg could not write {}", out.display());
    Ok(())
}

/// Whole calls on the two never-still recordings, each written, measured and deleted in turn.
pub(super) async fn never_still_vs_curl(
    fake: &FakeGemini,
    client: &reqwest::Client,
    options: &Options,
    scratch: &Path,
) -> Result<Vec<WholeComparison>> {
    let raw: &[&str] = &["-c:v", "rawvideo", "-pix_fmt", "yuv420p"];
    let h264: &[&str] = &[
        "-c:v",
        "libx264",
        "-preset",
        "ultrafast",
        "-b:v",
        "100M",
        "-maxrate",
        "100M",
        "-bufsize",
        "100M",
        "-pix_fmt",
        "yuv420p",
    ];
    let recordings = [
        (
            "never-still-raw.avi",
            20,
            raw,
            "raw 1280x720 recording that never stands still, 20 s",
        ),
        (
            "never-still-h264.mp4",
            60,
            h264,
            "H.264 1280x720 recording that never stands still, 100 Mbit/s, 60 s",
        ),
    ];
    let mut compared = Vec::new();
    for (name, seconds, codec, what) in recordings {
        let video = scratch.join(name);
        eprintln!("whole calls: writing {} ...", video.display());
        make_never_still(&video, seconds, codec)?;
        let outcome = compare(fake, client, options, scratch, &video, what.into()).await;
        let _ = std::fs::remove_file(&video);
        compared.push(outcome?);
    }
    Ok(compared)
}

/// Section 5: curl, Vaider with `auto` and Vaider with `full`, alternately, each Vaider call
/// on a fresh server with noCache.
pub(super) async fn whole_vs_curl(
    fake: &FakeGemini,
    client: &reqwest::Client,
    options: &Options,
    scratch: &Path,
) -> Result<WholeComparison> {
    let (video, what) = match &options.whole_video {
        Some(given) => (given.clone(), given_video(given).await),
        None => {
            let video = scratch.join("recording-raw-1280x720.avi");
            eprintln!("whole calls: writing {} ...", video.display());
            make_recording(&video)?;
            (video, "raw 1280x720 recording, 20 s".to_string())
        }
    };
    let compared = compare(fake, client, options, scratch, &video, what).await;
    if options.whole_video.is_none() {
        let _ = std::fs::remove_file(&video);
    }
    compared
}

/// The rounds of whole calls on one video.
async fn compare(
    fake: &FakeGemini,
    client: &reqwest::Client,
    options: &Options,
    scratch: &Path,
    video: &Path,
    what: String,
) -> Result<WholeComparison> {
    let video = video.to_path_buf();
    let size = std::fs::metadata(&video)
        .with_context(|| format!("stat {}", video.display()))?
        .len();
    let mut comparison = WholeComparison {
        size,
        what,
        curl: Vec::new(),
        auto: Vec::new(),
        full: Vec::new(),
    };
    // One untimed round first: the first curl and the first server pay for cold caches.
    for round in 0..=options.whole_runs {
        eprintln!("whole calls: round {round} of {}", options.whole_runs);
        let c = curl_call(fake, client, &video).await?;
        let auto = vaider_call(fake, client, options, scratch, &video, "auto").await?;
        let full = vaider_call(fake, client, options, scratch, &video, "full").await?;
        if round > 0 {
            comparison.curl.push(c);
            comparison.auto.push(auto);
            comparison.full.push(full);
        }
    }
    Ok(comparison)
}

/// "login.webm, 300 s" for the report: the file's name and its length, as the scan reads it
/// (a live-written WebM has no container duration: its last packet's time).
async fn given_video(video: &Path) -> String {
    let name = video.file_name().unwrap_or_default().to_string_lossy();
    match vaider_core::keyframes::duration_seconds(video).await {
        Some(s) => format!("{name}, {s:.0} s"),
        None => name.into_owned(),
    }
}

/// The type curl declares for the upload, by the file's extension.
fn mime_of(video: &Path) -> &'static str {
    match video.extension().and_then(|e| e.to_str()) {
        Some("webm") => "video/webm",
        Some("mp4") => "video/mp4",
        Some("mov") => "video/quicktime",
        _ => "video/avi",
    }
}

async fn curl_call(fake: &FakeGemini, client: &reqwest::Client, video: &Path) -> Result<Duration> {
    let run =
        curl::four_calls(&fake.base_url(), FakeGemini::API_KEY, video, mime_of(video)).await?;
    // Outside the timing: the fake's project quota must not fill up over the runs.
    client
        .delete(format!("{}/v1beta/{}", fake.base_url(), run.file_name))
        .header("x-goog-api-key", FakeGemini::API_KEY)
        .send()
        .await
        .context("DELETE the curl upload")?;
    Ok(run.total)
}

async fn vaider_call(
    fake: &FakeGemini,
    client: &reqwest::Client,
    options: &Options,
    scratch: &Path,
    video: &Path,
    sampling: &str,
) -> Result<WholeSample> {
    let server = Server::start(
        &options.vaider,
        &fake.base_url(),
        scratch,
        options.chunk_mib,
    )
    .await?;
    let rss = RssSampler::start(server.pid, SAMPLE_EVERY);
    let body = serde_json::json!({
        "videoPath": video,
        "timeoutSec": 600,
        "noCache": true,
        "sampling": sampling,
    });
    let done = server::analyse_body(client, &server, &body).await;
    let (sampled_kib, _) = rss.finish();
    let hwm = server.status().map(|s| s.vm_hwm_kib).unwrap_or(0);
    server.stop().await?;
    let done = done?;
    let text = |v: &serde_json::Value| v.as_str().unwrap_or_default().to_string();
    Ok(WholeSample {
        total: done.done.saturating_duration_since(done.sent),
        peak_kib: sampled_kib.max(hwm),
        used: text(&done.body["sampling"]["used"]),
        reason: text(&done.body["sampling"]["reason"]),
    })
}

/// "829 MB", or "34 kB" for a small recording (which would read "0 MB").
fn size_text(bytes: u64) -> String {
    if bytes >= 1_000_000 {
        format!("{:.0} MB", bytes as f64 / 1e6)
    } else {
        format!("{:.0} kB", bytes as f64 / 1e3)
    }
}

pub(super) fn render_whole(w: &WholeComparison) -> String {
    let mut out = format!(
        "\n### Whole calls against curl ({} {}, the fake answering at once, medians of {} interleaved rounds after a warm-up)\n\n",
        size_text(w.size),
        w.what,
        w.curl.len()
    );
    let curl = Spread::of(&w.curl);
    let mut t = Table::new(&[
        "Who",
        "Whole (median, min–max)",
        "× curl",
        "Peak RSS of vaider serve",
        "Video went as",
        "Target",
        "Result",
    ]);
    t.row(&[
        "curl: start, upload+finalize streamed, GET, generate",
        &format!(
            "{} ({}–{})",
            secs(curl.median),
            secs(curl.min),
            secs(curl.max)
        ),
        "1.00",
        "",
        "whole",
        "",
        "",
    ]);
    for (who, samples, target) in [
        (
            "Vaider, sampling auto (scan beside the upload)",
            &w.auto,
            true,
        ),
        ("Vaider, sampling full", &w.full, false),
    ] {
        let total = Spread::of(&samples.iter().map(|s| s.total).collect::<Vec<_>>());
        let ratio = total.median.as_secs_f64() / curl.median.as_secs_f64().max(1e-9);
        let peak = samples.iter().map(|s| s.peak_kib).max().unwrap_or(0);
        let mut went: Vec<&str> = samples.iter().map(|s| s.used.as_str()).collect();
        went.dedup();
        t.row(&[
            who,
            &format!(
                "{} ({}–{})",
                secs(total.median),
                secs(total.min),
                secs(total.max)
            ),
            &format!("{ratio:.2}"),
            &mb(peak),
            &went.join(", "),
            if target { "≤ 1.1 × curl" } else { "" },
            if target { verdict(ratio <= 1.1) } else { "" },
        ]);
    }
    out.push_str(&t.finish());
    if let Some(last) = w.auto.last() {
        out.push_str(&format!("\nWhy (auto, last round): {}\n", last.reason));
    }
    out.push_str(
        "\nEach Vaider call is a whole analysis (REST request sent → response received) on a \
         fresh `vaider serve` with noCache; it also deletes the upload before answering, which \
         curl does not. Peak RSS is the largest of VmHWM and VmRSS sampled every 50 ms.\n",
    );
    out
}
