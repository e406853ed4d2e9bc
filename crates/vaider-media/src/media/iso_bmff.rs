//! MP4 and QuickTime (the ISO base media file format): the top-level boxes walked to the end,
//! so a file cut short is refused.

use super::*;

pub(super) fn fourcc(t: &[u8]) -> String {
    t.iter()
        .map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                b as char
            } else {
                '?'
            }
        })
        .collect()
}

pub(super) fn check_iso_bmff(src: &mut Source) -> Result<(), Fault> {
    let len = src.len;
    let mut budget = Budget(MAX_ELEMENTS);
    let (mut moov, mut mdat, mut moof) = (false, false, false);
    let mut pos = 0u64;
    while pos < len {
        budget.spend()?;
        let (box_type, end) = top_level_box(src, pos)?;
        match &box_type {
            b"moov" => moov = true,
            b"mdat" => mdat = true,
            b"moof" => moof = true,
            _ => {}
        }
        pos = end;
    }
    if !moov {
        return bad("no moov box; it is written when the recording finishes");
    }
    // A fragmented file may carry its samples in moof fragments.
    if !mdat && !moof {
        return bad("no mdat box, so no video data");
    }
    Ok(())
}

/// The type of the top-level box at `pos` and where it ends, once its header and size are
/// found sound and within the file.
fn top_level_box(src: &mut Source, pos: u64) -> Result<([u8; 4], u64), Fault> {
    let len = src.len;
    let (buf, n) = src.small::<16>(pos)?;
    if n < 8 {
        return bad(format!("the file ends inside a box header at byte {pos}"));
    }
    let box_type = [buf[4], buf[5], buf[6], buf[7]];
    // Top-level box types are printable four-character codes; anything else means garbage
    // (e.g. preallocated zeros of a recording that was never finished).
    if !box_type.iter().all(|b| b.is_ascii_graphic() || *b == b' ') {
        return bad(format!("invalid box at byte {pos}"));
    }
    let (header_len, size) = match be_u32(&buf[0..4]) {
        1 if n < 16 => {
            return bad(format!("the file ends inside a box header at byte {pos}"));
        }
        1 => (
            16,
            u64::from_be_bytes([
                buf[8], buf[9], buf[10], buf[11], buf[12], buf[13], buf[14], buf[15],
            ]),
        ),
        0 => (8, len - pos), // the last box, extending to the end of the file
        size => (8, u64::from(size)),
    };
    if size < header_len {
        return bad(format!(
            "invalid size for the '{}' box at byte {pos}",
            fourcc(&box_type)
        ));
    }
    let end = pos.checked_add(size).filter(|&e| e <= len);
    let Some(end) = end else {
        return bad(format!(
            "the '{}' box at byte {pos} needs {size} bytes but only {} remain",
            fourcc(&box_type),
            len - pos
        ));
    };
    Ok((box_type, end))
}
