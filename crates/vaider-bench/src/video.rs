//! Large test videos that pass Vaider's content checks without being gigabytes of real video:
//! the `ftyp` and `moov` boxes of a real MP4, then one `mdat` box holding the original samples
//! followed by filler up to the wanted size. Vaider only walks the top-level boxes (and Gemini
//! is faked), so this is all the structure the benchmark needs.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use anyhow::{bail, ensure, Context, Result};

/// Filler is written in blocks of this size, so memory stays flat whatever the file size.
const BLOCK: usize = 1 << 20;

/// Writes an MP4 of exactly `size` bytes to `out`, built from the MP4 at `template`.
pub fn make_mp4(template: &Path, out: &Path, size: u64) -> Result<()> {
    let bytes = std::fs::read(template)
        .with_context(|| format!("read the template MP4 {}", template.display()))?;
    let boxes = top_level_boxes(&bytes)
        .with_context(|| format!("walk the boxes of {}", template.display()))?;
    let find = |kind: &[u8; 4]| boxes.iter().find(|b| &b.kind == kind);
    let (Some(ftyp), Some(moov), Some(mdat)) = (find(b"ftyp"), find(b"moov"), find(b"mdat")) else {
        bail!(
            "{} lacks an ftyp, moov or mdat box; any small real MP4 will do",
            template.display()
        );
    };
    let samples = &bytes[mdat.start + mdat.header..mdat.end];
    let head = [&bytes[ftyp.start..ftyp.end], &bytes[moov.start..moov.end]].concat();
    // Always the 64-bit form: it is valid for any size and keeps the layout the same for all.
    const MDAT_HEADER: u64 = 16;
    let fixed = head.len() as u64 + MDAT_HEADER + samples.len() as u64;
    ensure!(
        size >= fixed,
        "a {size}-byte file cannot hold the template's {fixed} bytes of boxes"
    );
    let mdat_size = size - head.len() as u64;

    let file = File::create(out).with_context(|| format!("create {}", out.display()))?;
    let mut w = BufWriter::with_capacity(BLOCK, file);
    let write_err = || format!("write {}", out.display());
    w.write_all(&head).with_context(write_err)?;
    w.write_all(&1u32.to_be_bytes()).with_context(write_err)?;
    w.write_all(b"mdat").with_context(write_err)?;
    w.write_all(&mdat_size.to_be_bytes())
        .with_context(write_err)?;
    w.write_all(samples).with_context(write_err)?;
    // Pseudo-random rather than zeros, so no layer on the way (filesystem, HTTP) can take a
    // shortcut on an all-zero body.
    let block = filler_block();
    let mut left = size - fixed;
    while left > 0 {
        let n = left.min(BLOCK as u64) as usize;
        w.write_all(&block[..n]).with_context(write_err)?;
        left -= n as u64;
    }
    w.into_inner()
        .map_err(|e| e.into_error())
        .and_then(|f| f.sync_all())
        .with_context(write_err)?;
    let written = std::fs::metadata(out)
        .with_context(|| format!("stat {}", out.display()))?
        .len();
    ensure!(
        written == size,
        "{} has {written} bytes, expected {size}",
        out.display()
    );
    Ok(())
}

struct BoxSpan {
    kind: [u8; 4],
    start: usize,
    header: usize,
    end: usize,
}

fn top_level_boxes(bytes: &[u8]) -> Result<Vec<BoxSpan>> {
    let mut boxes = Vec::new();
    let mut pos = 0usize;
    while pos + 8 <= bytes.len() {
        let size32 =
            u32::from_be_bytes([bytes[pos], bytes[pos + 1], bytes[pos + 2], bytes[pos + 3]]);
        let kind = [
            bytes[pos + 4],
            bytes[pos + 5],
            bytes[pos + 6],
            bytes[pos + 7],
        ];
        let (header, size) = match size32 {
            0 => (8, (bytes.len() - pos) as u64),
            1 => {
                let Some(large) = bytes.get(pos + 8..pos + 16) else {
                    bail!("box header cut short at byte {pos}");
                };
                let mut raw = [0u8; 8];
                raw.copy_from_slice(large);
                (16, u64::from_be_bytes(raw))
            }
            n => (8, u64::from(n)),
        };
        let end = pos as u64 + size;
        ensure!(
            size >= header as u64 && end <= bytes.len() as u64,
            "box at byte {pos} has an impossible size {size}"
        );
        boxes.push(BoxSpan {
            kind,
            start: pos,
            header,
            end: end as usize,
        });
        pos = end as usize;
    }
    Ok(boxes)
}

/// One block of xorshift bytes, reused for the whole filler.
fn filler_block() -> Vec<u8> {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut block = Vec::with_capacity(BLOCK);
    while block.len() < BLOCK {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        block.extend_from_slice(&state.to_le_bytes());
    }
    block
}

/// "100M", "1G", "512K" or a plain byte count; K/M/G are powers of 1024.
pub fn parse_size(text: &str) -> Result<u64> {
    let t = text.trim();
    let (digits, unit) = match t.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((i, _)) => t.split_at(i),
        None => (t, ""),
    };
    let n: u64 = digits
        .parse()
        .with_context(|| format!("{text:?} is not a size like 100M or 1G"))?;
    let factor: u64 = match unit.to_ascii_uppercase().trim_end_matches(['B', 'I']) {
        "" => 1,
        "K" => 1 << 10,
        "M" => 1 << 20,
        "G" => 1 << 30,
        _ => bail!("{text:?} is not a size like 100M or 1G"),
    };
    n.checked_mul(factor)
        .with_context(|| format!("{text:?} is too large"))
}

/// "100 MiB", "1 GiB", or bytes.
pub fn size_label(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes.is_multiple_of(1 << 30) {
        format!("{} GiB", bytes >> 30)
    } else if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} B")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bx(kind: &[u8; 4], payload: usize) -> Vec<u8> {
        let mut b = ((8 + payload) as u32).to_be_bytes().to_vec();
        b.extend_from_slice(kind);
        b.resize(8 + payload, 7);
        b
    }

    #[test]
    fn the_made_mp4_has_the_size_asked_and_passes_vaiders_check() {
        let dir = tempfile::tempdir().expect("temp dir");
        let template = dir.path().join("t.mp4");
        let ftyp = [&[0, 0, 0, 16][..], b"ftypisom\0\0\0\0"].concat();
        let bytes = [ftyp, bx(b"moov", 40), bx(b"free", 0), bx(b"mdat", 100)].concat();
        std::fs::write(&template, bytes).expect("write template");
        let out = dir.path().join("big.mp4");
        let size = 3 * BLOCK as u64 + 12_345;
        make_mp4(&template, &out, size).expect("make");
        assert_eq!(std::fs::metadata(&out).expect("stat").len(), size);
        let info = vaider_core::media::inspect(&out, size, None).expect("accepted");
        assert_eq!(info.mime_type, "video/mp4");
        assert!(make_mp4(&template, &out, 50).is_err());
    }

    #[test]
    fn sizes_parse_in_powers_of_1024() {
        assert_eq!(parse_size("100M").ok(), Some(100 << 20));
        assert_eq!(parse_size("1G").ok(), Some(1 << 30));
        assert_eq!(parse_size("1GiB").ok(), Some(1 << 30));
        assert_eq!(parse_size("4096").ok(), Some(4096));
        assert!(parse_size("1T").is_err());
        assert!(parse_size("big").is_err());
        assert_eq!(size_label(1 << 30), "1 GiB");
        assert_eq!(size_label(100 << 20), "100 MiB");
    }
}
