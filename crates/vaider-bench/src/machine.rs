//! The machine, the binary and the settings the figures were taken with, for the report's
//! first line.

use std::path::Path;

use super::Options;

/// The machine, the binary and the settings the figures were taken with.
pub(super) fn machine_line(options: &Options, version: &str, tmp_fs: &str, work: &Path) -> String {
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

pub(super) fn nproc() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0)
}

pub(super) fn cpu_model() -> String {
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

pub(super) fn mem_total() -> String {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|text| {
            let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
            let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
            Some(format!("{:.1} GB", kib as f64 * 1024.0 / 1e9))
        })
        .unwrap_or_else(|| "unknown".into())
}

pub(super) fn read_trimmed(path: &str) -> String {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The filesystem type of the mount holding `path` (longest matching mount point).
pub(super) fn filesystem_of(path: &Path) -> String {
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
