//! RIFF containers (AVI, WebP): the chunks walked to the end, so a file cut short is
//! refused.

use super::*;

pub(super) fn check_riff(src: &mut Source, avi: bool) -> Result<(), Fault> {
    let len = src.len;
    let mut budget = Budget(MAX_ELEMENTS);
    let mut pos = 0u64;
    loop {
        budget.spend()?;
        let (buf, _) = src.small::<12>(pos)?;
        let size = u64::from(le_u32(&buf[4..8]));
        // Writers put 0 here and fill it in when they finish.
        if size < 4 {
            return bad("the RIFF size is not filled in yet");
        }
        let end = pos + 8 + size;
        if end > len {
            return bad(format!(
                "the RIFF chunk at byte {pos} needs {} bytes but only {} remain",
                8 + size,
                len - pos
            ));
        }
        // RIFF chunks are padded to an even length.
        pos = end + (size & 1);
        // OpenDML AVIs over 1 GB continue in further "RIFF....AVIX" chunks; check those too.
        // Anything else after the chunk is tolerated as trailing data.
        if !avi || pos + 12 > len {
            return Ok(());
        }
        let (next, _) = src.small::<12>(pos)?;
        if &next[0..4] != b"RIFF" || &next[8..12] != b"AVIX" {
            return Ok(());
        }
    }
}
