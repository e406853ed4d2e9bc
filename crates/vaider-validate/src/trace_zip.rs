//! Opening a Playwright `trace.zip` within limits. The archive is written by the project's
//! own test code, so it may be anything: millions of entries, sizes that lie, a zip bomb.
//! The entry count is read from the archive's last record before the zip reader indexes
//! anything, the declared sizes are summed from the index, and an entry is read as a stream
//! that stops where its declared size ends.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Entries in one trace, at most. A 10-minute test with its screencast holds a few thousand
/// JPEG frames (one per change of the page, at most about 10 a second) beside its resources
/// and event files; 50,000 leaves room for the longest test while refusing an archive made
/// to exhaust the index.
pub const MAX_ENTRIES: u64 = 50_000;

/// The declared uncompressed size of all entries together, at most. Screencast frames of 30
/// to 100 kB each make the bulk of a long trace (6,000 frames of 100 kB are 600 MB): 2 GiB
/// is three times that. Only the event files are read; the rest is counted, not unpacked.
pub const MAX_TOTAL_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// Why a trace was not read.
#[derive(Debug, thiserror::Error)]
pub enum TraceZipError {
    #[error("{path} could not be opened: {source}")]
    Open {
        path: String,
        source: std::io::Error,
    },
    #[error("{path} is not a zip archive ({why}).")]
    NotZip { path: String, why: String },
    #[error("{path} holds {count} entries, more than the {MAX_ENTRIES} a trace may hold; it was not read (a zip bomb, or not a Playwright trace).")]
    TooManyEntries { path: String, count: u64 },
    #[error("{path} declares {total} bytes once unpacked, more than the {MAX_TOTAL_BYTES} a trace may hold; it was not read (a zip bomb, or not a Playwright trace).")]
    TooLarge { path: String, total: u128 },
    #[error("{name} in {path} unpacks to more than the {declared} bytes it declares; the trace was not read further (a zip bomb, or a damaged archive).")]
    LiesAboutSize {
        path: String,
        name: String,
        declared: u64,
    },
}

/// An archive that passed the count and size checks.
pub struct TraceZip {
    archive: zip::ZipArchive<File>,
    path: String,
}

/// Opens `path`, refusing an archive over [`MAX_ENTRIES`] or [`MAX_TOTAL_BYTES`].
pub fn open(path: &Path) -> Result<TraceZip, TraceZipError> {
    let shown = path.display().to_string();
    let mut file = File::open(path).map_err(|source| TraceZipError::Open {
        path: shown.clone(),
        source,
    })?;
    // Before the zip reader indexes every entry: the count its last record declares.
    if let Some(count) = declared_entries(&mut file).filter(|n| *n > MAX_ENTRIES) {
        return Err(TraceZipError::TooManyEntries { path: shown, count });
    }
    let archive = zip::ZipArchive::new(file).map_err(|e| TraceZipError::NotZip {
        path: shown.clone(),
        why: e.to_string(),
    })?;
    let count = archive.len() as u64;
    if count > MAX_ENTRIES {
        return Err(TraceZipError::TooManyEntries { path: shown, count });
    }
    let total: u128 = (0..archive.len())
        .filter_map(|i| archive.by_index_data(i).ok())
        .map(|entry| u128::from(entry.size()))
        .sum();
    if total > u128::from(MAX_TOTAL_BYTES) {
        return Err(TraceZipError::TooLarge { path: shown, total });
    }
    Ok(TraceZip {
        archive,
        path: shown,
    })
}

impl TraceZip {
    /// The entries' names, in the archive's order.
    pub fn names(&self) -> Vec<String> {
        (0..self.archive.len())
            .filter_map(|i| Some(self.archive.by_index_data(i).ok()?.name().ok()?.to_string()))
            .collect()
    }

    /// Streams the entry `name` into `read`, never past its declared size: an entry that
    /// unpacks to more is an error. Ok(false) when the entry is missing or unreadable.
    pub fn read_entry(
        &mut self,
        name: &str,
        read: impl FnOnce(&mut dyn Read) -> std::io::Result<u64>,
    ) -> Result<bool, TraceZipError> {
        let Ok(entry) = self.archive.by_name(name) else {
            return Ok(false);
        };
        let declared = entry.size();
        // One byte more than declared shows a lie without unpacking the rest.
        let mut limited = entry.take(declared.saturating_add(1));
        match read(&mut limited) {
            Ok(n) if n > declared => Err(TraceZipError::LiesAboutSize {
                path: self.path.clone(),
                name: name.to_string(),
                declared,
            }),
            Ok(_) => Ok(true),
            Err(_) => Ok(false),
        }
    }
}

/// The entry count in the End of Central Directory record (or its Zip64 form), read from the
/// file's last 64 kiB; None when there is no such record (the zip reader then says why).
fn declared_entries(file: &mut File) -> Option<u64> {
    const EOCD: &[u8] = b"PK\x05\x06";
    const EOCD_LEN: u64 = 22;
    let len = file.metadata().ok()?.len();
    let tail_len = len.min(EOCD_LEN + u64::from(u16::MAX));
    let tail = read_at(file, len - tail_len, tail_len as usize)?;
    let at = (0..=tail.len().checked_sub(EOCD_LEN as usize)?)
        .rev()
        .find(|&i| tail[i..].starts_with(EOCD))?;
    let count = u64::from(u16::from_le_bytes([tail[at + 10], tail[at + 11]]));
    if count != u64::from(u16::MAX) {
        return Some(count);
    }
    // Zip64: a locator just before the record points at the Zip64 record with a u64 count.
    let locator = at.checked_sub(20)?;
    if !tail[locator..].starts_with(b"PK\x06\x07") {
        return Some(count);
    }
    let offset = u64::from_le_bytes(tail[locator + 8..locator + 16].try_into().ok()?);
    let record = read_at(file, offset, 56)?;
    if !record.starts_with(b"PK\x06\x06") {
        return Some(count);
    }
    Some(u64::from_le_bytes(record[32..40].try_into().ok()?))
}

fn read_at(file: &mut File, offset: u64, len: usize) -> Option<Vec<u8>> {
    file.seek(SeekFrom::Start(offset)).ok()?;
    let mut bytes = vec![0; len];
    file.read_exact(&mut bytes).ok()?;
    file.seek(SeekFrom::Start(0)).ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::time::{Duration, Instant};
    use zip::write::SimpleFileOptions;

    const EVENT: &str = r#"{"type":"console","messageType":"error","text":"boom"}"#;

    fn stored() -> SimpleFileOptions {
        SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored)
    }

    /// A trace with `frames` small screencast frames beside its events.
    fn trace_with_frames(path: &Path, frames: usize) {
        let mut zip = zip::ZipWriter::new(File::create(path).unwrap());
        zip.start_file("0-trace.trace", SimpleFileOptions::default())
            .unwrap();
        writeln!(zip, "{EVENT}").unwrap();
        for i in 0..frames {
            zip.start_file(format!("resources/page@{i:06}.jpeg"), stored())
                .unwrap();
            zip.write_all(&[0xFF, 0xD8, 0xFF, 0xD9]).unwrap();
        }
        zip.finish().unwrap();
    }

    /// Rewrites every central directory entry's uncompressed size (the field at 24).
    fn claim_size(path: &Path, size: u32) {
        let mut bytes = std::fs::read(path).unwrap();
        let mut at = 0;
        while let Some(found) = bytes[at..].windows(4).position(|w| w == b"PK\x01\x02") {
            let header = at + found;
            bytes[header + 24..header + 28].copy_from_slice(&size.to_le_bytes());
            at = header + 4;
        }
        std::fs::write(path, bytes).unwrap();
    }

    #[test]
    fn a_hundred_thousand_entries_are_refused_before_indexing() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.zip");
        trace_with_frames(&path, 100_000);
        let started = Instant::now();
        let refused = open(&path).err().unwrap();
        let took = started.elapsed();
        assert!(
            matches!(
                refused,
                TraceZipError::TooManyEntries { count: 100_001, .. }
            ),
            "{refused}"
        );
        assert!(
            refused.to_string().contains("more than the 50000"),
            "{refused}"
        );
        // The count is read from the archive's last record, not from an index of 100,001.
        assert!(took < Duration::from_secs(1), "{took:?}");
        assert!(crate::trace::read_trace(&path).is_err());
    }

    #[test]
    fn a_long_tests_trace_still_reads() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.zip");
        // A 10-minute screencast at 10 frames a second.
        trace_with_frames(&path, 6_000);
        let events = crate::trace::read_trace(&path).unwrap();
        assert_eq!(events.console_errors, ["boom"]);
    }

    #[test]
    fn sizes_that_lie_or_add_up_past_the_limit_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        // An event file that unpacks to more than it declares: read no further than declared.
        let lying = dir.path().join("lying.zip");
        let mut zip = zip::ZipWriter::new(File::create(&lying).unwrap());
        zip.start_file("0-trace.trace", SimpleFileOptions::default())
            .unwrap();
        for _ in 0..1_000 {
            writeln!(zip, "{EVENT}").unwrap();
        }
        zip.finish().unwrap();
        claim_size(&lying, 10);
        // The zip reader itself stops at the declared size (or fails the entry), and
        // `read_entry` refuses any byte past it: no line of the thousand is read.
        match crate::trace::read_trace(&lying) {
            Ok(events) => assert!(events.console_errors.is_empty(), "{events:?}"),
            Err(refused) => assert!(
                matches!(refused, TraceZipError::LiesAboutSize { declared: 10, .. }),
                "{refused}"
            ),
        }
        // Two entries claiming 4 GB each (a bomb's declared sizes): refused unread.
        let bomb = dir.path().join("bomb.zip");
        trace_with_frames(&bomb, 1);
        claim_size(&bomb, u32::MAX - 1);
        let refused = open(&bomb).err().unwrap();
        assert!(
            matches!(refused, TraceZipError::TooLarge { .. }),
            "{refused}"
        );
        assert!(refused.to_string().contains("zip bomb"), "{refused}");
    }

    #[test]
    fn a_file_that_is_not_a_zip_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("trace.zip");
        std::fs::write(&path, "PK\x05\x06 not really").unwrap();
        assert!(matches!(open(&path), Err(TraceZipError::NotZip { .. })));
        assert!(matches!(
            open(&dir.path().join("missing.zip")),
            Err(TraceZipError::Open { .. })
        ));
    }
}
