//! The benchmark's report: every section's figures as markdown, with each target's verdict.

use std::path::Path;

use super::*;
use crate::machine::machine_line;
use crate::upload::{render_upload, UploadComparison};

pub(super) struct Rendered<'a> {
    pub(super) options: &'a Options,
    pub(super) version: &'a str,
    pub(super) tmp_fs: &'a str,
    pub(super) work: &'a Path,
    pub(super) idle_start: ProcStatus,
    pub(super) idle_later: ProcStatus,
    pub(super) after_runs: ProcStatus,
    pub(super) idle_after_use: ProcStatus,
    pub(super) first_run: Option<&'a Timeline>,
    pub(super) runs: &'a [Timeline],
    pub(super) sized: &'a [SizeRun],
    pub(super) upload: Option<&'a UploadComparison>,
}

pub(super) fn render(r: &Rendered) -> String {
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
