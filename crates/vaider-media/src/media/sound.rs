//! Files with sound and no picture: an audio file (WAV, MP3, Ogg, FLAC, AIFF, M4A), or a
//! video container whose tracks are all sound (WebM/Matroska, MP4/MOV, AVI). Both are refused
//! with [`MediaError::NoPicture`] before anything is sent: there is nothing to watch.

use super::*;

/// What an audio file is, by its first bytes (for the message); None when it is not one.
pub(super) fn audio_file(prefix: &[u8]) -> Option<&'static str> {
    let riff_of = |kind: &[u8]| prefix.starts_with(b"RIFF") && prefix.get(8..12) == Some(kind);
    if riff_of(b"WAVE") {
        return Some("a WAV audio file");
    }
    if prefix.starts_with(b"FORM") && matches!(prefix.get(8..12), Some(b"AIFF" | b"AIFC")) {
        return Some("an AIFF audio file");
    }
    if prefix.starts_with(b"ID3") || mpeg_audio_sync(prefix) {
        return Some("an MP3 (MPEG audio) file");
    }
    if prefix.starts_with(b"fLaC") {
        return Some("a FLAC audio file");
    }
    if prefix.starts_with(b"OggS") {
        let has = |needle: &[u8]| prefix.windows(needle.len()).any(|w| w == needle);
        if has(b"\x01vorbis") || has(b"OpusHead") || has(b"\x7FFLAC") || has(b"Speex") {
            return Some("an Ogg audio file");
        }
    }
    if prefix.len() >= 12 && &prefix[4..8] == b"ftyp" {
        if let b"M4A " | b"M4B " | b"M4P " | b"F4A " | b"F4B " = &prefix[8..12] {
            return Some("an M4A audio file");
        }
    }
    None
}

/// An MPEG audio frame header (MP3, or AAC's ADTS): 11 sync bits, a layer and a bitrate that
/// are not the reserved values.
fn mpeg_audio_sync(prefix: &[u8]) -> bool {
    let [first, second, third, ..] = prefix else {
        return false;
    };
    let adts = *first == 0xFF && second & 0xF6 == 0xF0;
    let mpeg = *first == 0xFF && second & 0xE0 == 0xE0 && second & 0x06 != 0 && third >> 4 != 0xF;
    adts || mpeg
}

/// Whether a video container (of `format`) holds a picture: Some(false) when its tracks were
/// read and all of them are sound (or not video), None when that could not be told.
pub(super) fn has_picture(src: &mut Source, format: &str) -> Option<bool> {
    let mut budget = Budget(MAX_ELEMENTS);
    let found = match format {
        "WebM" | "Matroska" => matroska_tracks(src, &mut budget),
        "MP4" | "QuickTime MOV" => iso_bmff_tracks(src, &mut budget),
        "AVI" => avi_streams(src, &mut budget),
        _ => return None,
    };
    let tracks = found.ok()?;
    (!tracks.is_empty()).then(|| tracks.contains(&Track::Picture))
}

#[derive(Debug, PartialEq)]
enum Track {
    Picture,
    Other,
}

/// The children of the element or box from `start` to `end`: (id, data start, data end).
type Children = Vec<(u32, u64, u64)>;

/// The Matroska Segment's Tracks: each TrackEntry's TrackType (1 is video).
fn matroska_tracks(src: &mut Source, budget: &mut Budget) -> Result<Vec<Track>, Fault> {
    const ID_TRACKS: u32 = 0x1654_AE6B;
    const ID_TRACK_ENTRY: u32 = 0xAE;
    const ID_TRACK_TYPE: u32 = 0x83;
    let header = element_header(src, 0)?;
    let mut pos = header.header_len + header.size.unwrap_or(0);
    // The Segment (after any padding), whose known-size children come before the first Cluster.
    let segment = loop {
        budget.spend()?;
        let el = element_header(src, pos)?;
        match (el.id, el.size) {
            (ID_SEGMENT, _) => break el,
            (_, Some(size)) => pos += el.header_len + size,
            _ => return Ok(Vec::new()),
        }
    };
    pos += segment.header_len;
    let end = segment.size.map_or(src.len, |s| pos + s).min(src.len);
    while pos < end {
        budget.spend()?;
        let el = element_header(src, pos)?;
        let (Some(size), false) = (el.size, el.id == ID_CLUSTER) else {
            break;
        };
        let data = pos + el.header_len;
        if el.id == ID_TRACKS {
            let mut tracks = Vec::new();
            for (id, start, stop) in ebml_children(src, data, data + size, budget)? {
                if id != ID_TRACK_ENTRY {
                    continue;
                }
                let entry = ebml_children(src, start, stop, budget)?;
                let video = entry.iter().any(|&(id, at, to)| {
                    id == ID_TRACK_TYPE
                        && to == at + 1
                        && matches!(src.small::<1>(at), Ok(([1], 1)))
                });
                tracks.push(if video { Track::Picture } else { Track::Other });
            }
            return Ok(tracks);
        }
        pos = data + size;
    }
    Ok(Vec::new())
}

/// The elements of known size between `start` and `end`.
fn ebml_children(
    src: &mut Source,
    mut pos: u64,
    end: u64,
    budget: &mut Budget,
) -> Result<Children, Fault> {
    let mut children = Vec::new();
    while pos < end {
        budget.spend()?;
        let el = element_header(src, pos)?;
        let Some(size) = el.size else {
            return bad("an element of unknown size among the tracks");
        };
        let data = pos + el.header_len;
        children.push((el.id, data, data + size));
        pos = data + size;
    }
    Ok(children)
}

/// The `moov` box's tracks: each `trak`'s handler (`mdia`/`hdlr`), `vide` for a picture.
fn iso_bmff_tracks(src: &mut Source, budget: &mut Budget) -> Result<Vec<Track>, Fault> {
    let top = boxes(src, 0, src.len, budget)?;
    let Some(&(_, moov_start, moov_end)) = top.iter().find(|b| b.0 == u32::from_be_bytes(*b"moov"))
    else {
        return Ok(Vec::new());
    };
    let mut tracks = Vec::new();
    for (_, start, end) in boxes(src, moov_start, moov_end, budget)?
        .into_iter()
        .filter(|b| b.0 == u32::from_be_bytes(*b"trak"))
    {
        let mut picture = false;
        for (_, m_start, m_end) in boxes(src, start, end, budget)?
            .into_iter()
            .filter(|b| b.0 == u32::from_be_bytes(*b"mdia"))
        {
            for (kind, h_start, _) in boxes(src, m_start, m_end, budget)? {
                if kind == u32::from_be_bytes(*b"hdlr") {
                    // Version and flags, pre_defined, then the handler type.
                    let (handler, _) = src.small::<12>(h_start)?;
                    picture |= &handler[8..12] == b"vide";
                }
            }
        }
        tracks.push(if picture {
            Track::Picture
        } else {
            Track::Other
        });
    }
    Ok(tracks)
}

/// The boxes between `start` and `end`: (type, data start, data end).
fn boxes(src: &mut Source, mut pos: u64, end: u64, budget: &mut Budget) -> Result<Children, Fault> {
    let mut found = Vec::new();
    while pos + 8 <= end {
        budget.spend()?;
        let (head, _) = src.small::<16>(pos)?;
        let (header, size) = match be_u32(&head[0..4]) {
            1 => (
                16,
                u64::from_be_bytes(head[8..16].try_into().unwrap_or_default()),
            ),
            0 => (8, end - pos),
            size => (8, u64::from(size)),
        };
        let Some(box_end) = pos
            .checked_add(size)
            .filter(|&e| size >= header && e <= end)
        else {
            return bad("a box overruns the box that holds it");
        };
        found.push((be_u32(&head[4..8]), pos + header, box_end));
        pos = box_end;
    }
    Ok(found)
}

/// An AVI's stream headers (`hdrl`/`strl`/`strh`): `vids` for a picture.
fn avi_streams(src: &mut Source, budget: &mut Budget) -> Result<Vec<Track>, Fault> {
    let end = (8 + u64::from(le_u32(&src.small::<4>(4)?.0))).min(src.len);
    let mut streams = Vec::new();
    for (id, start, stop) in riff_chunks(src, 12, end, budget)? {
        if id != *b"LIST" || &src.small::<4>(start)?.0 != b"hdrl" {
            continue;
        }
        for (id, list_start, list_end) in riff_chunks(src, start + 4, stop, budget)? {
            if id != *b"LIST" || &src.small::<4>(list_start)?.0 != b"strl" {
                continue;
            }
            let inner = riff_chunks(src, list_start + 4, list_end, budget)?;
            if let Some(&(_, strh, _)) = inner.iter().find(|c| &c.0 == b"strh") {
                let kind = src.small::<4>(strh)?.0;
                streams.push(if &kind == b"vids" {
                    Track::Picture
                } else {
                    Track::Other
                });
            }
        }
        break;
    }
    Ok(streams)
}

/// The RIFF chunks between `start` and `end`: (id, data start, data end).
#[allow(clippy::type_complexity)]
fn riff_chunks(
    src: &mut Source,
    mut pos: u64,
    end: u64,
    budget: &mut Budget,
) -> Result<Vec<([u8; 4], u64, u64)>, Fault> {
    let mut chunks = Vec::new();
    while pos + 8 <= end {
        budget.spend()?;
        let (head, _) = src.small::<8>(pos)?;
        let size = u64::from(le_u32(&head[4..8]));
        let id = [head[0], head[1], head[2], head[3]];
        let data_end = (pos + 8 + size).min(end);
        chunks.push((id, pos + 8, data_end));
        pos = pos + 8 + size + (size & 1);
    }
    Ok(chunks)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use vaider_test_support::animations::wav;

    #[track_caller]
    fn assert_no_picture(path: &Path, what: &str) {
        for expected in [None, Some(MediaKind::Video), Some(MediaKind::Image)] {
            match inspect(path, MAX_MEDIA_BYTES, expected) {
                Err(e @ MediaError::NoPicture { .. }) => {
                    let msg = e.to_string();
                    assert!(msg.contains(what), "{msg}");
                    assert!(
                        msg.contains("no picture to watch") && msg.contains("nothing was uploaded"),
                        "{msg}"
                    );
                }
                other => panic!("{}: {other:?}", path.display()),
            }
        }
    }

    #[test]
    fn sound_files_have_no_picture() {
        let dir = tempfile::tempdir().unwrap();
        let write = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        assert_no_picture(&write("tone.wav", &wav(1)), "WAV audio");
        // An MP3 with its tag, and one that starts at a frame (MPEG-1 layer III, 128 kb/s).
        assert_no_picture(&write("a.mp3", b"ID3\x04\0\0\0\0\0\x0Ahello"), "MP3");
        assert_no_picture(
            &write("b.mp3", &[0xFF, 0xFB, 0x90, 0x64, 0, 0, 0, 0]),
            "MP3",
        );
        let ogg = [&b"OggS\0\x02"[..], &[0; 22], b"\x01vorbis\0\0\0\0"].concat();
        assert_no_picture(&write("a.ogg", &ogg), "Ogg audio");
        assert_no_picture(&write("a.flac", b"fLaC\0\0\0\x22"), "FLAC");
        let m4a = [&[0, 0, 0, 24][..], b"ftypM4A \0\0\0\0M4A isom"].concat();
        assert_no_picture(&write("a.m4a", &m4a), "M4A");
        // A JPEG's marker is no MPEG audio sync.
        assert!(!mpeg_audio_sync(&[0xFF, 0xD8, 0xFF]));
    }

    /// ffmpeg's containers with sound only are refused; with a picture too, they pass.
    #[test]
    fn containers_with_only_sound_have_no_picture() {
        if Command::new("ffmpeg").arg("-version").output().is_err() {
            println!("note: ffmpeg not installed; the containers are not tested here");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let make = |name: &str, picture: bool, codec: &[&str]| {
            let path = dir.path().join(name);
            let mut command = Command::new("ffmpeg");
            command.args(["-v", "error", "-y", "-f", "lavfi", "-i", "sine=d=1"]);
            if picture {
                command.args(["-f", "lavfi", "-i", "color=c=white:s=64x48:r=10:d=1"]);
            }
            let status = command.args(codec).arg(&path).status().unwrap();
            assert!(status.success(), "{name}");
            path
        };
        let opus = ["-c:a", "libopus"];
        let aac = ["-c:a", "aac"];
        let pcm = ["-c:a", "pcm_s16le"];
        assert_no_picture(
            &make("sound.webm", false, &opus),
            "a WebM file with sound only",
        );
        assert_no_picture(
            &make("sound.mkv", false, &opus),
            "a Matroska file with sound only",
        );
        assert_no_picture(
            &make("sound.mp4", false, &aac),
            "an MP4 file with sound only",
        );
        assert_no_picture(&make("sound.mov", false, &aac), "MOV file with sound only");
        assert_no_picture(
            &make("sound.avi", false, &pcm),
            "an AVI file with sound only",
        );
        for (name, codec) in [
            ("both.webm", &["-c:a", "libopus", "-c:v", "libvpx"][..]),
            ("both.mp4", &["-c:a", "aac", "-c:v", "mpeg4"][..]),
            ("both.avi", &["-c:a", "pcm_s16le", "-c:v", "mpeg4"][..]),
        ] {
            let path = make(name, true, codec);
            let info = inspect(&path, MAX_MEDIA_BYTES, Some(MediaKind::Video)).unwrap();
            assert_eq!(info.kind, MediaKind::Video, "{name}");
        }
    }
}
