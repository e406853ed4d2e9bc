//! Section 4: upload speed against curl on one generated video and the same fake Gemini, with
//! the CPU time each side spent.

use std::path::Path;

use super::*;

/// One timed pass of the ~800 MB video, by curl or by Vaider.
pub(super) struct UploadSample {
    /// Whole: curl's four calls, or Vaider's REST request sent → response received.
    pub(super) total: Duration,
    /// The upload alone: curl's `upload, finalize` request, or Vaider's first chunk request
    /// at the fake → its generateContent request at the fake.
    pub(super) upload: Duration,
    /// Upload requests on the session URL.
    pub(super) chunks: usize,
    /// CPU time (user + system) of `vaider serve` during the run (none for curl).
    pub(super) vaider_cpu: Option<Duration>,
    /// CPU time of this process (the fake, which hashes every upload) during the run.
    pub(super) fake_cpu: Duration,
}

pub(super) struct UploadComparison {
    pub(super) size: u64,
    pub(super) version: String,
    pub(super) curl: Vec<UploadSample>,
    pub(super) cache_on: Vec<UploadSample>,
    pub(super) cache_off: Vec<UploadSample>,
}

/// Section 4: curl and Vaider, alternately, on one generated video and the same fake. Each
/// Vaider run has a fresh server (a new data folder), so with the cache on the file is new to
/// it and is hashed for the cache, as a user's new recording is.
pub(super) async fn upload_vs_curl(
    fake: &FakeGemini,
    client: &reqwest::Client,
    options: &Options,
    scratch: &Path,
    template: &Path,
) -> Result<UploadComparison> {
    let size = options.upload_size;
    let video = scratch.join(format!(
        "upload-{}.mp4",
        video::size_label(size).replace(' ', "")
    ));
    eprintln!("upload speed: writing {} ...", video.display());
    video::make_mp4(template, &video, size)?;
    let mut version = String::new();
    let vaider = |no_cache: bool| {
        let video = video.clone();
        async move {
            let server = Server::start(
                &options.vaider,
                &fake.base_url(),
                scratch,
                options.chunk_mib,
            )
            .await?;
            let cpu_before = server.cpu()?;
            let fake_before = server::ProcCpu::own()?;
            let timeline = timed_analysis(fake, client, &server, &video, no_cache).await?;
            let sample = UploadSample {
                total: timeline.total,
                upload: timeline.upload,
                chunks: timeline.chunks,
                vaider_cpu: Some(server.cpu()?.since(cpu_before)),
                fake_cpu: server::ProcCpu::own()?.since(fake_before),
            };
            let version = server.version.clone();
            server.stop().await?;
            Ok::<_, anyhow::Error>((sample, version))
        }
    };
    let curl = || async {
        let fake_before = server::ProcCpu::own()?;
        let run =
            curl::four_calls(&fake.base_url(), FakeGemini::API_KEY, &video, "video/mp4").await?;
        let fake_cpu = server::ProcCpu::own()?.since(fake_before);
        // Outside the timing: the fake's project quota (20 GB) must not fill up over the runs.
        client
            .delete(format!("{}/v1beta/{}", fake.base_url(), run.file_name))
            .header("x-goog-api-key", FakeGemini::API_KEY)
            .send()
            .await
            .context("DELETE the curl upload")?;
        Ok::<_, anyhow::Error>(UploadSample {
            total: run.total,
            upload: run.upload,
            chunks: 1,
            vaider_cpu: None,
            fake_cpu,
        })
    };
    let mut comparison = UploadComparison {
        size,
        version: String::new(),
        curl: Vec::new(),
        cache_on: Vec::new(),
        cache_off: Vec::new(),
    };
    // One untimed round first: the first curl and the first server pay for cold caches.
    for round in 0..=options.upload_runs {
        eprintln!(
            "upload speed: round {round} of {} ({})",
            options.upload_runs,
            if round == 0 { "warm-up" } else { "timed" }
        );
        let c = curl().await?;
        let (on, v) = vaider(false).await?;
        let (off, _) = vaider(true).await?;
        version = v;
        if round > 0 {
            comparison.curl.push(c);
            comparison.cache_on.push(on);
            comparison.cache_off.push(off);
        }
    }
    comparison.version = version;
    // The file is large; the other sections do not need it.
    let _ = std::fs::remove_file(&video);
    Ok(comparison)
}

pub(super) fn render_upload(u: &UploadComparison) -> String {
    let mut out = format!(
        "\n### Upload speed against curl ({:.0} MB video, the same fake, medians of {} interleaved rounds after a warm-up)\n\n",
        u.size as f64 / 1e6,
        u.curl.len()
    );
    let median = |samples: &[UploadSample], f: fn(&UploadSample) -> Duration| {
        Spread::of(&samples.iter().map(f).collect::<Vec<_>>())
    };
    let curl_total = median(&u.curl, |s| s.total).median;
    let mut t = Table::new(&[
        "Who",
        "Whole (median, min–max)",
        "× curl",
        "Upload alone (median)",
        "Upload requests",
        "CPU of vaider serve",
        "CPU of the fake",
        "Target",
        "Result",
    ]);
    let rows: [(&str, &[UploadSample]); 3] = [
        (
            "curl: start, upload+finalize streamed, GET, generate",
            &u.curl,
        ),
        (
            "Vaider, cache on (a new file: hashed after its upload, while the model works)",
            &u.cache_on,
        ),
        ("Vaider, cache off (noCache)", &u.cache_off),
    ];
    for (who, samples) in rows {
        let total = median(samples, |s| s.total);
        let ratio = total.median.as_secs_f64() / curl_total.as_secs_f64().max(1e-9);
        let is_curl = samples.first().is_some_and(|s| s.vaider_cpu.is_none());
        let cpu = |f: fn(&UploadSample) -> Duration| secs(median(samples, f).median);
        t.row(&[
            who,
            &format!(
                "{} ({}–{})",
                secs(total.median),
                secs(total.min),
                secs(total.max)
            ),
            &format!("{ratio:.2}"),
            &secs(median(samples, |s| s.upload).median),
            &samples
                .first()
                .map(|s| s.chunks.to_string())
                .unwrap_or_default(),
            &if is_curl {
                String::new()
            } else {
                cpu(|s| s.vaider_cpu.unwrap_or_default())
            },
            &cpu(|s| s.fake_cpu),
            if is_curl { "" } else { "≤ 1.1 × curl" },
            if is_curl { "" } else { verdict(ratio <= 1.1) },
        ]);
    }
    out.push_str(&t.finish());
    let on = median(&u.cache_on, |s| s.total).median;
    let off = median(&u.cache_off, |s| s.total).median;
    let cpu_on = median(&u.cache_on, |s| s.vaider_cpu.unwrap_or_default()).median;
    let cpu_off = median(&u.cache_off, |s| s.vaider_cpu.unwrap_or_default()).median;
    out.push_str(&format!(
        "\nThe cache's share (hashing the new file for its key, after its upload): {} of the \
         whole and {} of Vaider's CPU (medians, cache on − cache off).\n",
        ms(on.saturating_sub(off)),
        ms(cpu_on.saturating_sub(cpu_off)),
    ));
    out.push_str(
        "\nEach Vaider run is a whole analysis (REST request sent → response received) on a fresh \
         `vaider serve`, so the file is new to it; it also deletes the upload before answering, \
         which curl does not. The fake hashes every upload (sha256) in this process: its CPU \
         is the same work for both.\n",
    );
    out
}
