//! `vaider-bench`: measures Vaider's core performance targets on this machine and prints them
//! as a markdown table (also written to `target/bench-report.md`). It reports, it does not
//! assert: timings depend on the machine, so they belong in a report rather than a test.
//!
//! What it measures, against the release `vaider serve` run as a child process and the fake
//! Gemini run inside this process (so the fake's timestamps and ours share one clock):
//! 1. Peak memory (VmHWM, plus VmRSS sampled every 50 ms) of `vaider serve` while it analyses a
//!    100 MiB and a 1 GiB video: uploads are streamed from disk, so the peak must stay under
//!    100 MB and must not grow with the file.
//! 2. Overhead on loopback: REST request sent → upload start / first upload byte at the fake,
//!    and generateContent answer sent by the fake → REST response received; median and p95 over
//!    `--runs` analyses of the small real recording with `noCache: true`. Target < 10 ms each.
//!    Also the 1 GiB video's time to upload start with caching on (sha256 of the whole file for
//!    the cache key) and off, so the cost of hashing is visible.
//! 3. Idle memory (VmRSS) of `vaider serve` after start and one /v1/health call, and after 5 s
//!    idle. Target < 20 MB.
//! 4. Upload speed against curl, on one generated ~800 MB video and the same fake: curl doing
//!    the four Gemini calls (start, the whole file in one streamed `upload, finalize`, GET,
//!    generateContent), and a whole analysis through `vaider serve` with the cache on (a new
//!    file on a fresh server, so it is hashed for the cache) and off; medians of
//!    `--upload-runs` interleaved rounds, with the CPU time each side spent. Target: Vaider
//!    within 1.1x of curl.
//! 5. Whole calls against curl on a real 791 MiB raw recording: curl's four calls, and Vaider
//!    with `sampling: auto` (the change scan beside the upload) and `full`, side by side in one
//!    run, with Vaider's peak memory (`--whole-runs` rounds; `--whole-only` runs it alone).
//!    Target: `auto` within 1.1x of curl.
//!
//! Run it with `scripts/bench.sh` (builds both binaries in release first).

mod machine;
mod render;
mod upload;
mod whole;

use machine::{filesystem_of, machine_line};
use render::{render, Rendered};
use upload::{render_upload, upload_vs_curl};
use whole::{never_still_vs_curl, render_whole, whole_vs_curl};

use vaider_bench::{curl, report, server, video};

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use fake_gemini::{FakeGemini, RecordedRequest};

use report::{kib_to_mb, mb, ms, secs, verdict, Spread, Table};
use server::{ProcStatus, RssSampler, Server};

const USAGE: &str = "\
usage: vaider-bench [--sizes 100M,1G] [--runs 20] [--mem-runs 3] [--vaider PATH] [--media DIR]
                    [--tmp DIR] [--out FILE] [--chunk-mib N] [--upload-size 754M]
                    [--upload-runs 5] [--upload-only] [--whole-runs 3] [--whole-only]
                    [--whole-video FILE] [--never-still]

  --sizes      sizes of the large test videos (K/M/G = KiB/MiB/GiB), default 100M,1G
  --runs       analyses of the small recording for the overhead numbers, default 20
  --mem-runs   noCache analyses per large video, each on a fresh server, default 3
  --vaider     the vaider binary, default: beside this one (target/release/vaider)
  --media      folder holding login-flow.webm and login-flow.mp4,
               default <repo>/../shared/media
  --tmp        folder for the test videos (on disk, not tmpfs), default the system temp folder
  --out        report file, default <target>/bench-report.md
  --chunk-mib  upload chunk size given to Vaider (VAIDER_GEMINI_UPLOAD_CHUNK_MIB),
               default Vaider's own (8)
  --upload-size  the video for the upload-speed comparison with curl, default 754M
               (791 MB); 0 skips the comparison
  --upload-runs  interleaved rounds (curl, Vaider cache on, Vaider cache off), default 5
  --upload-only  run the comparison with curl alone
  --whole-runs   rounds of whole calls on a raw recording (curl, Vaider auto, Vaider full),
               default 3; 0 skips them
  --whole-only   run the whole calls alone
  --whole-video  the whole calls on this video (say a long compressed screen recording:
               WebM, MP4) instead of the raw one written for them
  --never-still  run the whole calls alone, on recordings whose screen never stands still
               (a raw 829 MB one and an H.264 one of about 800 MB), written and deleted
               in --tmp";

/// Analyses before the timed ones: the first pays for connection set-up and cold caches.
const WARM_UP_RUNS: usize = 2;
const IDLE_WAIT: Duration = Duration::from_secs(5);
const SAMPLE_EVERY: Duration = Duration::from_millis(50);
const PEAK_TARGET_MB: f64 = 100.0;
/// "Does not scale with file size": ten times the file may cost at most this much more.
const GROWTH_TARGET_MB: f64 = 10.0;
const OVERHEAD_TARGET: Duration = Duration::from_millis(10);
const IDLE_TARGET_MB: f64 = 20.0;

struct Options {
    sizes: Vec<u64>,
    runs: usize,
    vaider: PathBuf,
    media: PathBuf,
    tmp: PathBuf,
    out: PathBuf,
    /// None: Vaider's default chunk size.
    chunk_mib: Option<u32>,
    /// noCache analyses per large video, each on a fresh server.
    mem_runs: usize,
    /// The video compared with curl; 0 = no comparison.
    upload_size: u64,
    upload_runs: usize,
    upload_only: bool,
    /// Rounds of whole calls on a raw recording; 0 = none.
    whole_runs: usize,
    whole_only: bool,
    /// The whole calls' video; none: a raw recording written for them.
    whole_video: Option<PathBuf>,
    /// The whole calls on recordings that never stand still, alone.
    never_still: bool,
}

impl Options {
    fn parse() -> Result<Options> {
        let mut options = Options {
            sizes: vec![100 << 20, 1 << 30],
            runs: 20,
            vaider: server::default_vaider(),
            // The shared media sits beside the repository.
            media: Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/media"),
            tmp: std::env::temp_dir(),
            out: default_report_path(),
            chunk_mib: None,
            mem_runs: 3,
            upload_size: 754 << 20,
            upload_runs: 5,
            upload_only: false,
            whole_runs: 3,
            whole_only: false,
            whole_video: None,
            never_still: false,
        };
        let mut args = std::env::args().skip(1);
        while let Some(arg) = args.next() {
            if arg == "-h" || arg == "--help" {
                println!("{USAGE}");
                std::process::exit(0);
            }
            if arg == "--upload-only" {
                options.upload_only = true;
                continue;
            }
            if arg == "--whole-only" {
                options.whole_only = true;
                continue;
            }
            if arg == "--never-still" {
                options.whole_only = true;
                options.never_still = true;
                continue;
            }
            let (name, inline) = match arg.split_once('=') {
                Some((n, v)) => (n.to_string(), Some(v.to_string())),
                None => (arg.clone(), None),
            };
            let mut value = || {
                inline
                    .clone()
                    .or_else(|| args.next())
                    .with_context(|| format!("{name} needs a value\n{USAGE}"))
            };
            match name.as_str() {
                "--sizes" => {
                    options.sizes = value()?
                        .split(',')
                        .filter(|s| !s.trim().is_empty())
                        .map(video::parse_size)
                        .collect::<Result<_>>()?
                }
                "--runs" => {
                    let v = value()?;
                    options.runs = v
                        .parse()
                        .ok()
                        .filter(|n| *n > 0)
                        .with_context(|| format!("--runs wants a positive count, not {v:?}"))?
                }
                "--vaider" => options.vaider = value()?.into(),
                "--whole-video" => options.whole_video = Some(value()?.into()),
                "--media" => options.media = value()?.into(),
                "--tmp" => options.tmp = value()?.into(),
                "--out" => options.out = value()?.into(),
                "--mem-runs" => {
                    let v = value()?;
                    options.mem_runs =
                        v.parse().ok().filter(|n| *n > 0).with_context(|| {
                            format!("--mem-runs wants a positive count, not {v:?}")
                        })?
                }
                "--upload-size" => options.upload_size = video::parse_size(&value()?)?,
                "--upload-runs" => {
                    let v = value()?;
                    options.upload_runs = v.parse().ok().filter(|n| *n > 0).with_context(|| {
                        format!("--upload-runs wants a positive count, not {v:?}")
                    })?
                }
                "--whole-runs" => {
                    let v = value()?;
                    options.whole_runs = v
                        .parse()
                        .with_context(|| format!("--whole-runs wants a count, not {v:?}"))?
                }
                "--chunk-mib" => {
                    let v = value()?;
                    options.chunk_mib =
                        Some(v.parse().ok().filter(|n| *n > 0).with_context(|| {
                            format!("--chunk-mib wants a positive count of MiB, not {v:?}")
                        })?)
                }
                _ => bail!("unknown option {arg:?}\n{USAGE}"),
            }
        }
        options.sizes.sort_unstable();
        options.sizes.dedup();
        Ok(options)
    }
}

/// `target/bench-report.md`: the folder above the one holding this binary (target/release).
fn default_report_path() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent()?.parent().map(Path::to_path_buf))
        .unwrap_or_else(|| PathBuf::from("target"))
        .join("bench-report.md")
}

#[tokio::main]
async fn main() -> Result<()> {
    let started = Instant::now();
    let options = Options::parse()?;
    let report = run(&options).await?;
    let total = started.elapsed();
    let report = format!(
        "{report}\nBenchmark wall time, end to end: {}.\n",
        secs(total)
    );
    println!("{report}");
    if let Some(dir) = options.out.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("create {}", dir.display()))?;
    }
    std::fs::write(&options.out, &report)
        .with_context(|| format!("write {}", options.out.display()))?;
    eprintln!("report written to {}", options.out.display());
    Ok(())
}

async fn run(options: &Options) -> Result<String> {
    ensure!(
        options.vaider.exists(),
        "{} does not exist; build it with `cargo build --release -p vaider-cli` or pass --vaider",
        options.vaider.display()
    );
    let webm_src = options.media.join("login-flow.webm");
    let mp4_src = options.media.join("login-flow.mp4");
    for p in [&webm_src, &mp4_src] {
        ensure!(p.exists(), "{} is missing; pass --media DIR", p.display());
    }
    let work = tempfile::Builder::new()
        .prefix("vaider-bench-")
        .tempdir_in(&options.tmp)
        .with_context(|| format!("create a work folder in {}", options.tmp.display()))?;
    let tmp_fs = filesystem_of(work.path());
    if tmp_fs == "tmpfs" {
        eprintln!(
            "warning: {} is on tmpfs; pass --tmp DIR on disk for realistic numbers",
            work.path().display()
        );
    }
    // Vaider writes its interaction files beside the media: keep them out of the shared folder.
    let webm = work.path().join("login-flow.webm");
    std::fs::copy(&webm_src, &webm).with_context(|| format!("copy {}", webm_src.display()))?;

    let mut videos = Vec::new();
    let sizes: &[u64] = if options.upload_only || options.whole_only {
        &[]
    } else {
        &options.sizes
    };
    for &size in sizes {
        let path = work.path().join(format!(
            "bench-{}.mp4",
            video::size_label(size).replace(' ', "")
        ));
        let t = Instant::now();
        eprintln!("writing {} ({})", path.display(), video::size_label(size));
        video::make_mp4(&mp4_src, &path, size)?;
        let info = vaider_core::media::inspect(&path, vaider_core::media::MAX_MEDIA_BYTES, None)
            .with_context(|| format!("Vaider would refuse the generated {}", path.display()))?;
        ensure!(
            info.mime_type == "video/mp4",
            "{} sniffed as {}",
            path.display(),
            info.mime_type
        );
        eprintln!("  written in {}", secs(t.elapsed()));
        videos.push((size, path));
    }

    let fake = FakeGemini::start().await;
    // ACTIVE at once: a processing poll would only add Vaider's poll interval, not overhead.
    fake.set_processing_polls(0);
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(900))
        .build()
        .context("build the HTTP client")?;

    if options.whole_only {
        let compared = match options.never_still {
            true => never_still_vs_curl(&fake, &client, options, work.path()).await?,
            false => vec![whole_vs_curl(&fake, &client, options, work.path()).await?],
        };
        let mut out = String::from("## Vaider benchmark: whole calls against curl\n\n");
        out.push_str(&machine_line(options, "", &tmp_fs, work.path()));
        for w in &compared {
            out.push_str(&render_whole(w));
        }
        return Ok(out);
    }
    // 4. Upload speed against curl, first: the other sections leave nothing running behind it.
    let upload = if options.upload_size > 0 {
        Some(upload_vs_curl(&fake, &client, options, work.path(), &mp4_src).await?)
    } else {
        None
    };
    if options.upload_only {
        let mut out = String::from("## Vaider benchmark: upload speed against curl\n\n");
        if let Some(u) = &upload {
            out.push_str(&machine_line(options, &u.version, &tmp_fs, work.path()));
            out.push_str(&render_upload(u));
        }
        return Ok(out);
    }

    // 3. Idle memory, on a fresh server; the same server then serves the overhead runs.
    eprintln!("idle memory ...");
    let server = Server::start(
        &options.vaider,
        &fake.base_url(),
        work.path(),
        options.chunk_mib,
    )
    .await?;
    let health = client
        .get(format!("{}/v1/health", server.base))
        .send()
        .await
        .context("GET /v1/health")?;
    ensure!(
        health.status().is_success(),
        "/v1/health answered {}",
        health.status()
    );
    health.bytes().await.context("read /v1/health")?;
    let idle_start = server.status()?;
    tokio::time::sleep(IDLE_WAIT).await;
    let idle_later = server.status()?;
    let version = server.version.clone();

    // 2. Overhead on the small recording.
    eprintln!(
        "overhead: {WARM_UP_RUNS} warm-up + {} timed analyses ...",
        options.runs
    );
    let mut first_run = None;
    for i in 0..WARM_UP_RUNS {
        let t = timed_analysis(&fake, &client, &server, &webm, true).await?;
        if i == 0 {
            first_run = Some(t);
        }
    }
    let mut runs = Vec::with_capacity(options.runs);
    for _ in 0..options.runs {
        runs.push(timed_analysis(&fake, &client, &server, &webm, true).await?);
    }
    let after_runs = server.status()?;
    // Idle again, after real work: what the allocator kept of the analyses' buffers stays.
    tokio::time::sleep(IDLE_WAIT).await;
    let idle_after_use = server.status()?;
    server.stop().await?;

    // 1. Peak memory per size, each on a fresh server so its VmHWM is that size's alone.
    let mut sized = Vec::new();
    for (size, path) in &videos {
        eprintln!("peak memory: {} ...", video::size_label(*size));
        sized.push(size_run(&fake, &client, options, work.path(), *size, path).await?);
    }

    // 5. Whole calls on a real recording, auto and full against curl.
    let whole = if options.whole_runs > 0 {
        Some(whole_vs_curl(&fake, &client, options, work.path()).await?)
    } else {
        None
    };
    let mut out = render(&Rendered {
        options,
        version: &version,
        tmp_fs: &tmp_fs,
        work: work.path(),
        idle_start,
        idle_later,
        after_runs,
        idle_after_use,
        first_run: first_run.as_ref(),
        runs: &runs,
        sized: &sized,
        upload: upload.as_ref(),
    });
    if let Some(w) = &whole {
        out.push_str(&render_whole(w));
    }
    Ok(out)
}

/// Picks one step's duration out of a [`Timeline`], for the tables.
type Step = fn(&Timeline) -> Duration;

/// One analysis, placed on the fake's clock.
struct Timeline {
    /// REST request sent → upload start request at the fake.
    to_upload_start: Duration,
    /// REST request sent → first upload chunk request at the fake.
    to_chunk: Duration,
    /// Upload start request at the fake → first upload chunk request at the fake.
    start_to_chunk: Duration,
    /// REST request sent → first upload body byte at the fake.
    to_first_byte: Duration,
    /// generateContent answer left the fake → DELETE of the upload at the fake.
    answer_to_delete: Duration,
    /// DELETE at the fake → REST response fully received.
    delete_to_done: Duration,
    /// generateContent answer left the fake → REST response head received.
    answer_to_headers: Duration,
    /// generateContent answer left the fake → REST response fully received.
    answer_to_done: Duration,
    /// First upload chunk at the fake → generateContent request at the fake.
    upload: Duration,
    chunks: usize,
    total: Duration,
}

async fn timed_analysis(
    fake: &FakeGemini,
    client: &reqwest::Client,
    server: &Server,
    video: &Path,
    no_cache: bool,
) -> Result<Timeline> {
    let seen = fake.requests().len();
    let answered_before = fake.generate_answered_at().len();
    let done = server::analyse(client, server, video, no_cache).await?;
    if done.body.get("cached").and_then(|c| c.as_bool()) == Some(true) {
        bail!(
            "{} was answered from the cache; nothing to time",
            video.display()
        );
    }
    let requests: Vec<RecordedRequest> = fake.requests().into_iter().skip(seen).collect();
    let answered = fake.generate_answered_at();
    ensure!(
        answered.len() == answered_before + 1,
        "expected one generateContent answer for {}, the fake sent {}",
        video.display(),
        answered.len() - answered_before
    );
    let answered = answered[answered_before];
    let find = |what: &str, pick: &dyn Fn(&RecordedRequest) -> bool| {
        requests
            .iter()
            .find(|r| pick(r))
            .with_context(|| format!("the fake saw no {what} for {}", video.display()))
    };
    let is_session =
        |r: &RecordedRequest| r.query.as_deref().is_some_and(|q| q.contains("upload_id="));
    let upload_start = find("upload start", &|r| {
        r.method == "POST" && r.path.starts_with("/upload/") && !is_session(r)
    })?;
    let chunk = find("upload chunk", &|r| r.method == "POST" && is_session(r))?;
    let first_byte = chunk
        .first_byte_at
        .context("the first upload chunk carried no bytes")?;
    let generate = find("generateContent", &|r| r.path.ends_with(":generateContent"))?;
    let delete = find("DELETE", &|r| r.method == "DELETE")?;
    let since = |later: std::time::Instant, earlier: std::time::Instant| {
        later.saturating_duration_since(earlier)
    };
    Ok(Timeline {
        to_upload_start: since(upload_start.at, done.sent),
        to_chunk: since(chunk.at, done.sent),
        start_to_chunk: since(chunk.at, upload_start.at),
        to_first_byte: since(first_byte, done.sent),
        answer_to_delete: since(delete.at, answered),
        delete_to_done: since(done.done, delete.at),
        answer_to_headers: since(done.headers, answered),
        answer_to_done: since(done.done, answered),
        upload: since(generate.at, chunk.at),
        chunks: requests.iter().filter(|r| is_session(r)).count(),
        total: since(done.done, done.sent),
    })
}

/// One noCache analysis of a large video on a fresh server.
struct PeakRun {
    /// After start and /v1/health, before the analysis.
    before: ProcStatus,
    /// VmHWM right after the analysis: its peak.
    peak_kib: u64,
    sampled_max_kib: u64,
    samples: u64,
    timeline: Timeline,
}

/// The large-file runs for one size.
struct SizeRun {
    size: u64,
    /// `--mem-runs` of them, each on its own fresh server.
    peaks: Vec<PeakRun>,
    /// A cache-on analysis after the last noCache one (same server): hashes the whole file.
    cached: Timeline,
    /// VmHWM after the cache-on analysis too (adds hashing).
    peak_after_cached_kib: u64,
    after: ProcStatus,
}

impl SizeRun {
    fn worst_peak_kib(&self) -> u64 {
        self.peaks.iter().map(|p| p.peak_kib).max().unwrap_or(0)
    }

    /// The median peak (the lower middle one for an even count): one run's allocator luck
    /// (which thread's arena held a chunk) moves a single peak by a chunk or so.
    fn median_peak_kib(&self) -> u64 {
        let mut peaks: Vec<u64> = self.peaks.iter().map(|p| p.peak_kib).collect();
        peaks.sort_unstable();
        peaks
            .get(peaks.len().saturating_sub(1) / 2)
            .copied()
            .unwrap_or(0)
    }

    fn peaks_list(&self) -> String {
        self.peaks
            .iter()
            .map(|p| format!("{:.1}", kib_to_mb(p.peak_kib)))
            .collect::<Vec<_>>()
            .join(" / ")
    }
}

async fn size_run(
    fake: &FakeGemini,
    client: &reqwest::Client,
    options: &Options,
    scratch: &Path,
    size: u64,
    video: &Path,
) -> Result<SizeRun> {
    let mut peaks = Vec::with_capacity(options.mem_runs);
    for i in 0..options.mem_runs {
        // A fresh server each time, so VmHWM is this analysis's peak alone.
        let server = Server::start(
            &options.vaider,
            &fake.base_url(),
            scratch,
            options.chunk_mib,
        )
        .await?;
        client
            .get(format!("{}/v1/health", server.base))
            .send()
            .await
            .context("GET /v1/health")?;
        let before = server.status()?;
        let sampler = RssSampler::start(server.pid, SAMPLE_EVERY);
        let timeline = timed_analysis(fake, client, &server, video, true).await;
        let (sampled_max_kib, samples) = sampler.finish();
        peaks.push(PeakRun {
            before,
            peak_kib: server.status()?.vm_hwm_kib,
            sampled_max_kib,
            samples,
            timeline: timeline?,
        });
        if i + 1 < options.mem_runs {
            server.stop().await?;
            continue;
        }
        // The noCache run never hashed the file, so this one hashes it in full first.
        let cached = timed_analysis(fake, client, &server, video, false).await?;
        let after = server.status()?;
        server.stop().await?;
        return Ok(SizeRun {
            size,
            peaks,
            cached,
            peak_after_cached_kib: after.vm_hwm_kib,
            after,
        });
    }
    bail!("--mem-runs must be at least 1")
}
