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
//!
//! Run it with `scripts/bench.sh` (builds both binaries in release first).

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
                    [--upload-runs 5] [--upload-only]

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
  --upload-only  run the comparison with curl alone";

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
    let sizes: &[u64] = if options.upload_only {
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

    Ok(render(&Rendered {
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
    }))
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

struct Rendered<'a> {
    options: &'a Options,
    version: &'a str,
    tmp_fs: &'a str,
    work: &'a Path,
    idle_start: ProcStatus,
    idle_later: ProcStatus,
    after_runs: ProcStatus,
    idle_after_use: ProcStatus,
    first_run: Option<&'a Timeline>,
    runs: &'a [Timeline],
    sized: &'a [SizeRun],
    upload: Option<&'a UploadComparison>,
}

fn render(r: &Rendered) -> String {
    let mut out = String::new();
    let label = |s: &SizeRun| video::size_label(s.size);
    out.push_str("## Vaider benchmark\n\n");
    out.push_str(&machine_line(r.options, r.version, r.tmp_fs, r.work));

    let spread = |f: Step| Spread::of(&r.runs.iter().map(f).collect::<Vec<_>>());
    let n = r.runs.len();
    let mut t = Table::new(&["#", "Measurement", "Value", "Target", "Result"]);
    for s in r.sized {
        let worst = s.worst_peak_kib();
        let sampled = s.peaks.iter().map(|p| p.sampled_max_kib).max().unwrap_or(0);
        t.row(&[
            "1",
            &format!(
                "Peak RSS (VmHWM) of `vaider serve`, {} video, noCache, worst of {} fresh servers",
                label(s),
                s.peaks.len()
            ),
            &format!(
                "{} (each: {} MB; max sampled VmRSS {})",
                mb(worst),
                s.peaks_list(),
                mb(sampled)
            ),
            "< 100 MB",
            verdict(kib_to_mb(worst) < PEAK_TARGET_MB),
        ]);
    }
    if let (Some(small), Some(large)) = (r.sized.first(), r.sized.last()) {
        if r.sized.len() > 1 {
            let growth = kib_to_mb(large.median_peak_kib()) - kib_to_mb(small.median_peak_kib());
            t.row(&[
                "1",
                &format!(
                    "Peak growth {} → {} (median peaks {} → {})",
                    label(small),
                    label(large),
                    mb(small.median_peak_kib()),
                    mb(large.median_peak_kib())
                ),
                &format!("{growth:+.1} MB"),
                "flat (< 10 MB)",
                verdict(growth < GROWTH_TARGET_MB),
            ]);
        }
    }
    let overhead_rows: [(&str, &str, Step); 3] = [
        ("2a", "REST request sent → upload start at fake", |t| {
            t.to_upload_start
        }),
        (
            "2a",
            "REST request sent → first upload byte at fake",
            |t| t.to_first_byte,
        ),
        (
            "2b",
            "generateContent answer sent → REST response received (incl. DELETE)",
            |t| t.answer_to_done,
        ),
    ];
    for (id, name, f) in overhead_rows {
        let s = spread(f);
        t.row(&[
            id,
            &format!("{name}, small webm, noCache (median / p95, n={n})"),
            &format!("{} / {}", ms(s.median), ms(s.p95)),
            "< 10 ms (p95)",
            verdict(s.p95 < OVERHEAD_TARGET),
        ]);
    }
    for s in r.sized {
        let Some(first) = s.peaks.first() else {
            continue;
        };
        for (what, tl) in [
            ("noCache", &first.timeline),
            ("cache on (sha256)", &s.cached),
        ] {
            t.row(&[
                "2a",
                &format!(
                    "REST request sent → upload start at fake, {} video, {what}",
                    label(s)
                ),
                &ms(tl.to_upload_start),
                "< 10 ms",
                verdict(tl.to_upload_start < OVERHEAD_TARGET),
            ]);
        }
    }
    let after_use = format!(
        "5 s after the {} small-video analyses (same server)",
        n + WARM_UP_RUNS
    );
    for (when, st) in [
        ("after start + one /v1/health", r.idle_start),
        ("after 5 s idle", r.idle_later),
        (&after_use, r.idle_after_use),
    ] {
        t.row(&[
            "3",
            &format!("Idle VmRSS {when}"),
            &mb(st.vm_rss_kib),
            "< 20 MB",
            verdict(kib_to_mb(st.vm_rss_kib) < IDLE_TARGET_MB),
        ]);
    }
    out.push_str(&t.finish());

    // Where the overhead goes.
    out.push_str(&format!(
        "\n### Overhead breakdown (small webm, noCache, n={n} after {WARM_UP_RUNS} warm-up runs)\n\n"
    ));
    let mut t = Table::new(&["Step", "Median", "p95", "Max", "First (cold) run"]);
    let steps: [(&str, Step); 9] = [
        ("request sent → upload start at fake", |t| {
            t.to_upload_start
        }),
        ("upload start at fake → chunk request at fake", |t| {
            t.start_to_chunk
        }),
        ("request sent → chunk request at fake", |t| t.to_chunk),
        ("request sent → first upload byte at fake", |t| {
            t.to_first_byte
        }),
        ("generate answer sent → DELETE at fake", |t| {
            t.answer_to_delete
        }),
        ("DELETE at fake → REST response received", |t| {
            t.delete_to_done
        }),
        ("generate answer sent → REST response head", |t| {
            t.answer_to_headers
        }),
        ("generate answer sent → REST response received", |t| {
            t.answer_to_done
        }),
        ("whole analysis (request sent → response received)", |t| {
            t.total
        }),
    ];
    for (name, f) in steps {
        let s = spread(f);
        t.row(&[
            name,
            &ms(s.median),
            &ms(s.p95),
            &ms(s.max),
            &r.first_run.map(|tl| ms(f(tl))).unwrap_or_default(),
        ]);
    }
    out.push_str(&t.finish());
    out.push_str(&format!(
        "\nVmRSS after the {} overhead runs: {} (VmHWM {}).\n",
        n + WARM_UP_RUNS,
        mb(r.after_runs.vm_rss_kib),
        mb(r.after_runs.vm_hwm_kib)
    ));

    if !r.sized.is_empty() {
        out.push_str("\n### Large videos (each noCache run on a fresh `vaider serve`)\n\n");
        let mut t = Table::new(&[
            "Video",
            "Run",
            "VmRSS before",
            "VmHWM",
            "Max sampled VmRSS (samples)",
            "Chunks",
            "Upload (first chunk → generate)",
            "Analysis",
            "→ upload start",
        ]);
        for s in r.sized {
            for (i, p) in s.peaks.iter().enumerate() {
                let tl = &p.timeline;
                let rate = s.size as f64 / 1e6 / tl.upload.as_secs_f64().max(1e-9);
                t.row(&[
                    &label(s),
                    &format!("noCache #{}", i + 1),
                    &mb(p.before.vm_rss_kib),
                    &mb(p.peak_kib),
                    &format!("{} ({})", mb(p.sampled_max_kib), p.samples),
                    &tl.chunks.to_string(),
                    &format!("{} ({rate:.0} MB/s)", secs(tl.upload)),
                    &secs(tl.total),
                    &ms(tl.to_upload_start),
                ]);
            }
            let tl = &s.cached;
            let rate = s.size as f64 / 1e6 / tl.upload.as_secs_f64().max(1e-9);
            t.row(&[
                &label(s),
                "cache on, after the last noCache run",
                "",
                &format!(
                    "{} (VmRSS after {})",
                    mb(s.peak_after_cached_kib),
                    mb(s.after.vm_rss_kib)
                ),
                "",
                &tl.chunks.to_string(),
                &format!("{} ({rate:.0} MB/s)", secs(tl.upload)),
                &secs(tl.total),
                &ms(tl.to_upload_start),
            ]);
        }
        out.push_str(&t.finish());
    }

    out.push_str(
        "\nWhat the numbers include:\n\
         - 2a (request → upload start): HTTP + auth + JSON parsing, path resolution, the media \
           content check (headers only), writing request.json and the history row, building the \
           upload start request; with cache on also sha256 of the whole file. → first byte adds \
           the upload-start round trip and opening the file for the first chunk's body.\n\
         - 2b (answer → response): receiving and parsing the generateContent answer, the DELETE \
           round trip to the fake (Vaider deletes the upload before answering), writing \
           response.json and the history row, and sending the REST response.\n\
         - Peaks (1): each size runs `--mem-runs` times, each on a fresh server; a single \
           peak can move by allocator luck (which thread's arena held a buffer), so \"flat\" \
           compares the median peaks. VmHWM catches spikes shorter than the 50 ms sampling.\n\
         - The fake answers files ACTIVE at once (no processing poll), runs in this process \
           (its sha256 of every upload shares the 2 cores with Vaider), and the REST client \
           keeps its connection alive between runs. The test videos were just written, so they \
           are read from the page cache, not the disk.\n",
    );
    if let Some(u) = r.upload {
        out.push_str(&render_upload(u));
    }
    out
}

/// One timed pass of the ~800 MB video, by curl or by Vaider.
struct UploadSample {
    /// Whole: curl's four calls, or Vaider's REST request sent → response received.
    total: Duration,
    /// The upload alone: curl's `upload, finalize` request, or Vaider's first chunk request
    /// at the fake → its generateContent request at the fake.
    upload: Duration,
    /// Upload requests on the session URL.
    chunks: usize,
    /// CPU time (user + system) of `vaider serve` during the run (none for curl).
    vaider_cpu: Option<Duration>,
    /// CPU time of this process (the fake, which hashes every upload) during the run.
    fake_cpu: Duration,
}

struct UploadComparison {
    size: u64,
    version: String,
    curl: Vec<UploadSample>,
    cache_on: Vec<UploadSample>,
    cache_off: Vec<UploadSample>,
}

/// Section 4: curl and Vaider, alternately, on one generated video and the same fake. Each
/// Vaider run has a fresh server (a new data folder), so with the cache on the file is new to
/// it and is hashed for the cache, as a user's new recording is.
async fn upload_vs_curl(
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

fn render_upload(u: &UploadComparison) -> String {
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

/// The machine, the binary and the settings the figures were taken with.
fn machine_line(options: &Options, version: &str, tmp_fs: &str, work: &Path) -> String {
    let chunk = match options.chunk_mib {
        Some(n) => format!("{n} MiB (--chunk-mib)"),
        None => "Vaider's default".to_string(),
    };
    format!(
        "Machine: {} × {}, {} RAM, Linux {}. vaider {} (release, `{}`), fake Gemini in-process on \
         127.0.0.1; test videos in {} ({}); upload chunk size {chunk}.\n\n",
        nproc(),
        cpu_model(),
        mem_total(),
        read_trimmed("/proc/sys/kernel/osrelease"),
        version,
        options.vaider.display(),
        work.display(),
        tmp_fs,
    )
}

fn nproc() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0)
}

fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

fn mem_total() -> String {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(format!("{:.1} GB", kib as f64 * 1024.0 / 1e9))
        })
        .unwrap_or_else(|| "unknown".into())
}

fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The filesystem type of the mount holding `path` (longest matching mount point).
fn filesystem_of(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let mounts = std::fs::read_to_string("/proc/mounts").unwrap_or_default();
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_, point, fs) = (f.next()?, f.next()?, f.next()?);
            path.starts_with(point)
                .then(|| (point.len(), fs.to_string()))
        })
        .max_by_key(|(len, _)| *len)
        .map(|(_, fs)| fs)
        .unwrap_or_else(|| "unknown".into())
}
