//! Matroska and WebM (EBML): the header's DocType, then the element tree walked far enough to
//! refuse a truncated file, with Playwright's live recordings (clusters of unknown size)
//! accepted.

use super::*;

pub(super) const MAX_EBML_HEADER: u64 = 64 * 1024;
pub(super) const ID_DOCTYPE: u32 = 0x4282;
pub(super) const ID_SEGMENT: u32 = 0x1853_8067;
pub(super) const ID_CLUSTER: u32 = 0x1F43_B675;
pub(super) const ID_VOID: u32 = 0xEC;
pub(super) const ID_CRC32: u32 = 0xBF;
/// Elements that may appear directly inside a Cluster. In a Cluster of unknown size (live
/// recordings), the first element not in this list marks where the Cluster ends.
pub(super) const CLUSTER_CHILDREN: &[u32] = &[
    0xE7,   // Timestamp
    0x5854, // SilentTracks
    0xA7,   // Position
    0xAB,   // PrevSize
    0xA3,   // SimpleBlock
    0xA0,   // BlockGroup
    0xAF,   // EncryptedBlock
    ID_VOID, ID_CRC32,
];

pub(super) enum Vint {
    Incomplete,
    Invalid,
    Value {
        len: usize,
        /// With the length marker bit kept, as element IDs are written.
        raw: u64,
        /// With the marker bit cleared, as sizes are read.
        value: u64,
        /// All value bits set: the "unknown size" of live recordings.
        unknown: bool,
    },
}

pub(super) fn read_vint(buf: &[u8], max_len: usize) -> Vint {
    let Some(&first) = buf.first() else {
        return Vint::Incomplete;
    };
    let len = first.leading_zeros() as usize + 1;
    if first == 0 || len > max_len {
        return Vint::Invalid;
    }
    if buf.len() < len {
        return Vint::Incomplete;
    }
    let raw = buf[..len]
        .iter()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
    let bits = 7 * len as u32;
    let all_ones = (1u64 << bits) - 1;
    let value = raw & all_ones;
    Vint::Value {
        len,
        raw,
        value,
        unknown: value == all_ones,
    }
}

pub(super) enum DocType<'a> {
    Found(&'a [u8]),
    Incomplete,
    Invalid,
}

/// End offset of the EBML header element, if `buf` starts with one whose size can be read.
pub(super) fn ebml_header_end(buf: &[u8]) -> Option<u64> {
    if !buf.starts_with(EBML_MAGIC) {
        return None;
    }
    match read_vint(&buf[4..], 8) {
        Vint::Value {
            len,
            value,
            unknown: false,
            ..
        } => (4 + len as u64).checked_add(value),
        _ => None,
    }
}

/// The DocType inside the EBML header at the start of `buf`.
pub(super) fn ebml_doctype(buf: &[u8]) -> DocType<'_> {
    let Some(end) = ebml_header_end(buf) else {
        return match buf.get(4..).map(|b| read_vint(b, 8)) {
            None | Some(Vint::Incomplete) => DocType::Incomplete,
            Some(_) => DocType::Invalid,
        };
    };
    let header_start = match read_vint(&buf[4..], 8) {
        Vint::Value { len, .. } => 4 + len,
        _ => return DocType::Invalid,
    };
    let mut pos = header_start as u64;
    while pos < end {
        let at = pos as usize;
        let Some(rest) = buf.get(at..).filter(|r| !r.is_empty()) else {
            return DocType::Incomplete;
        };
        let (id_len, id) = match read_vint(rest, 4) {
            Vint::Value { len, raw, .. } => (len, raw as u32),
            Vint::Incomplete => return DocType::Incomplete,
            Vint::Invalid => return DocType::Invalid,
        };
        let (size_len, size) = match read_vint(&rest[id_len..], 8) {
            Vint::Value {
                len,
                value,
                unknown: false,
                ..
            } => (len, value),
            Vint::Incomplete => return DocType::Incomplete,
            _ => return DocType::Invalid,
        };
        let data_start = pos + (id_len + size_len) as u64;
        let Some(data_end) = data_start.checked_add(size).filter(|&e| e <= end) else {
            return DocType::Invalid;
        };
        if id == ID_DOCTYPE {
            let Some(value) = buf.get(data_start as usize..data_end as usize) else {
                return DocType::Incomplete;
            };
            // EBML strings may be padded with NULs.
            let trimmed_len = value.iter().rposition(|&b| b != 0).map_or(0, |i| i + 1);
            return DocType::Found(&value[..trimmed_len]);
        }
        pos = data_end;
    }
    // The DocType is mandatory; without it the file is not something we can vouch for.
    DocType::Invalid
}

pub(super) struct Element {
    pub(super) id: u32,
    /// None: unknown size (allowed for Segment and Cluster in live recordings).
    pub(super) size: Option<u64>,
    pub(super) header_len: u64,
}

pub(super) fn element_header(src: &mut Source, pos: u64) -> Result<Element, Fault> {
    let (buf, n) = src.small::<12>(pos)?;
    let buf = &buf[..n];
    let (id_len, id) = match read_vint(buf, 4) {
        Vint::Value { len, raw, .. } => (len, raw as u32),
        Vint::Incomplete => {
            return bad(format!(
                "the file ends inside an element header at byte {pos}"
            ))
        }
        Vint::Invalid => return bad(format!("invalid element ID at byte {pos}")),
    };
    let (size_len, size) = match read_vint(&buf[id_len..], 8) {
        Vint::Value {
            len,
            value,
            unknown,
            ..
        } => (len, (!unknown).then_some(value)),
        Vint::Incomplete => {
            return bad(format!(
                "the file ends inside an element header at byte {pos}"
            ))
        }
        Vint::Invalid => return bad(format!("invalid element size at byte {pos}")),
    };
    Ok(Element {
        id,
        size,
        header_len: (id_len + size_len) as u64,
    })
}

pub(super) fn element_name(id: u32) -> String {
    let name = match id {
        ID_SEGMENT => "Segment",
        ID_CLUSTER => "Cluster",
        0x114D_9B74 => "SeekHead",
        0x1549_A966 => "Info",
        0x1654_AE6B => "Tracks",
        0x1C53_BB6B => "Cues",
        0x1254_C367 => "Tags",
        0x1043_A770 => "Chapters",
        0x1941_A469 => "Attachments",
        0xA3 => "SimpleBlock",
        0xA0 => "BlockGroup",
        ID_VOID => "Void",
        _ => return format!("element 0x{id:X}"),
    };
    name.to_string()
}

/// End of an element of known size starting at `pos`, which must not pass `limit`.
pub(super) fn element_end(
    src: &Source,
    el: &Element,
    pos: u64,
    size: u64,
    limit: u64,
) -> Result<u64, Fault> {
    let end = (pos + el.header_len).checked_add(size);
    match end {
        Some(end) if end <= limit => Ok(end),
        Some(end) if end > src.len => bad(format!(
            "the {} at byte {pos} ends {} bytes past the end of the file",
            element_name(el.id),
            end - src.len
        )),
        _ => bad(format!(
            "the {} at byte {pos} extends past the element that contains it",
            element_name(el.id)
        )),
    }
}

pub(super) fn check_matroska(src: &mut Source) -> Result<(), Fault> {
    let len = src.len;
    let mut budget = Budget(MAX_ELEMENTS);
    let header = element_header(src, 0)?;
    let Some(size) = header.size else {
        return bad("the EBML header has an unknown size");
    };
    let after_header = element_end(src, &header, 0, size, len)?;
    let (pos, segment) = find_segment(src, after_header, &mut budget)?;
    let data_start = pos + segment.header_len;
    let segment_end = match segment.size {
        Some(size) => element_end(src, &segment, pos, size, len)?,
        // Live recordings write an unknown size and only fix it up (if ever) when they finish.
        None => len,
    };
    if !walk_segment(src, data_start, segment_end, &mut budget)? {
        return bad("no video data: the file ends before the first Cluster");
    }
    Ok(())
}

/// The Segment after the EBML header, and where it starts: only padding may sit between them.
fn find_segment(
    src: &mut Source,
    mut pos: u64,
    budget: &mut Budget,
) -> Result<(u64, Element), Fault> {
    let len = src.len;
    loop {
        budget.spend()?;
        if pos >= len {
            return bad("no video data: the file ends before the Segment");
        }
        let el = element_header(src, pos)?;
        match (el.id, el.size) {
            (ID_SEGMENT, _) => return Ok((pos, el)),
            (ID_VOID | ID_CRC32, Some(size)) => pos = element_end(src, &el, pos, size, len)?,
            _ => {
                return bad(format!(
                    "unexpected {} before the Segment",
                    element_name(el.id)
                ))
            }
        }
    }
}

/// Walks the Segment's top-level elements to its end; true when a Cluster (video data) was
/// among them.
fn walk_segment(
    src: &mut Source,
    mut pos: u64,
    segment_end: u64,
    budget: &mut Budget,
) -> Result<bool, Fault> {
    let mut seen_cluster = false;
    while pos < segment_end {
        budget.spend()?;
        let el = element_header(src, pos)?;
        if pos + el.header_len > segment_end {
            return bad(format!(
                "the file ends inside an element header at byte {pos}"
            ));
        }
        seen_cluster |= el.id == ID_CLUSTER;
        pos = match el.size {
            Some(size) => element_end(src, &el, pos, size, segment_end)?,
            None if el.id == ID_CLUSTER => {
                walk_open_cluster(src, pos + el.header_len, segment_end, budget)?
            }
            None => {
                return bad(format!(
                    "the {} at byte {pos} has an unknown size",
                    element_name(el.id)
                ))
            }
        };
    }
    Ok(seen_cluster)
}

/// Walks the children of a Cluster of unknown size; returns where the Cluster ends (the first
/// element that cannot be its child, or `limit`).
pub(super) fn walk_open_cluster(
    src: &mut Source,
    mut pos: u64,
    limit: u64,
    budget: &mut Budget,
) -> Result<u64, Fault> {
    while pos < limit {
        budget.spend()?;
        let el = element_header(src, pos)?;
        if !CLUSTER_CHILDREN.contains(&el.id) {
            return Ok(pos);
        }
        let Some(size) = el.size else {
            return bad(format!(
                "the {} at byte {pos} has an unknown size",
                element_name(el.id)
            ));
        };
        pos = element_end(src, &el, pos, size, limit)?;
    }
    Ok(pos)
}
