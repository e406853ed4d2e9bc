//! The still images: PNG's chunks up to IEND, JPEG's end marker, GIF's trailer.

use super::*;

pub(super) fn check_png(src: &mut Source) -> Result<(), Fault> {
    let len = src.len;
    let mut budget = Budget(MAX_ELEMENTS);
    let mut pos = PNG_SIGNATURE.len() as u64;
    while pos < len {
        budget.spend()?;
        let (buf, n) = src.small::<8>(pos)?;
        if n < 8 {
            return bad(format!("the file ends inside a chunk header at byte {pos}"));
        }
        let length = be_u32(&buf[0..4]);
        if length > i32::MAX as u32 {
            return bad(format!("invalid chunk length at byte {pos}"));
        }
        let chunk_type = &buf[4..8];
        let end = pos + 12 + u64::from(length); // length, type, data, CRC
        if end > len {
            return bad(format!(
                "the '{}' chunk at byte {pos} ends {} bytes past the end of the file",
                fourcc(chunk_type),
                end - len
            ));
        }
        if chunk_type == b"IEND" {
            return Ok(());
        }
        pos = end;
    }
    bad("no IEND chunk at the end")
}

/// Some tools pad JPEGs with zeros after the end-of-image marker; tolerate up to this much.
pub(super) const JPEG_MAX_PADDING: u64 = 4096;

pub(super) fn check_jpeg(src: &mut Source) -> Result<(), Fault> {
    let tail_len = src.len.min(JPEG_MAX_PADDING + 2);
    let tail = src.read_at(src.len - tail_len, tail_len as usize)?;
    let data_len = tail.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
    if tail[..data_len].ends_with(&[0xFF, 0xD9]) {
        Ok(())
    } else {
        bad("no end-of-image marker (FF D9) at the end")
    }
}

pub(super) fn check_gif(src: &mut Source) -> Result<(), Fault> {
    let last = src.read_at(src.len - 1, 1)?;
    if last == [0x3B] {
        Ok(())
    } else {
        bad("no GIF trailer (0x3B) at the end")
    }
}
