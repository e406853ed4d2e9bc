//! How ffmpeg and ffprobe are told to open a user's file. Left to themselves they guess the
//! format from the content and may follow what it names: an `ffconcat` list or an HLS
//! playlist makes them read other files, and a URL inside a file other protocols. So every
//! input is opened with `-protocol_whitelist file,pipe` and the demuxer Vaider's own content
//! check names (`-f mov`, `-f matroska`, ...); a file that check does not recognise as a
//! video (a playlist, or a file swapped after its check) is not given to them at all.

use std::ffi::OsString;
use std::io::Read;
use std::path::Path;

/// Only local files and pipes: no network, no `concat:`/`subfile:` protocol tricks.
const PROTOCOLS: &str = "file,pipe";

/// What ffmpeg needs before the file's name: the protocols and the demuxer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Input {
    /// The options to put before the file (ffmpeg's `-i`, ffprobe's last argument).
    Options(Vec<OsString>),
    /// The file could not be read here: ffmpeg is left to say why (missing file, no ffmpeg),
    /// still kept to local files.
    Unreadable(Vec<OsString>),
    /// Readable, but not a video by its content: not given to ffmpeg.
    NotVideo,
}

impl Input {
    /// The options of an input ffmpeg may open, None for one it must not.
    pub(super) fn options(&self) -> Option<&[OsString]> {
        match self {
            Input::Options(o) | Input::Unreadable(o) => Some(o),
            Input::NotVideo => None,
        }
    }
}

/// How to open `video`, from its first bytes.
pub(super) fn input_for(video: &Path) -> Input {
    let mut whitelist: Vec<OsString> = vec!["-protocol_whitelist".into(), PROTOCOLS.into()];
    let Ok(prefix) = read_prefix(video) else {
        return Input::Unreadable(whitelist);
    };
    match demuxer(&prefix) {
        Some(name) => {
            whitelist.extend(["-f".into(), name.into()]);
            Input::Options(whitelist)
        }
        None => Input::NotVideo,
    }
}

fn read_prefix(video: &Path) -> std::io::Result<Vec<u8>> {
    let file = std::fs::File::open(video)?;
    let mut prefix = Vec::with_capacity(crate::media::SNIFF_BYTES);
    file.take(crate::media::SNIFF_BYTES as u64)
        .read_to_end(&mut prefix)?;
    Ok(prefix)
}

/// ffmpeg's demuxer for the container the content check finds (plus Y4M, which the scan
/// reads itself but may hand to ffmpeg).
fn demuxer(prefix: &[u8]) -> Option<&'static str> {
    if prefix.starts_with(b"YUV4MPEG2 ") {
        return Some("yuv4mpegpipe");
    }
    let (_, _, format) = crate::media::sniff(prefix)?;
    Some(match format {
        "WebM" | "Matroska" => "matroska",
        "MP4" | "QuickTime MOV" => "mov",
        "AVI" => "avi",
        "GIF" => "gif",
        "PNG" => "png_pipe",
        "JPEG" => "jpeg_pipe",
        "WebP" => "webp_pipe",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn playlists_are_not_videos_and_videos_get_their_demuxer() {
        let dir = tempfile::tempdir().unwrap();
        let concat = dir.path().join("a.mp4");
        std::fs::write(&concat, "ffconcat version 1.0\nfile other.webm\n").unwrap();
        assert_eq!(input_for(&concat), Input::NotVideo);
        let hls = dir.path().join("b.webm");
        std::fs::write(&hls, "#EXTM3U\n#EXTINF:5,\nfile:///etc/passwd\n").unwrap();
        assert_eq!(input_for(&hls), Input::NotVideo);
        let y4m = dir.path().join("c.y4m");
        std::fs::write(&y4m, "YUV4MPEG2 W2 H2 F1:1\n").unwrap();
        let options = input_for(&y4m);
        let options = options.options().unwrap();
        assert_eq!(
            options,
            ["-protocol_whitelist", "file,pipe", "-f", "yuv4mpegpipe"].map(OsString::from)
        );
        let missing = input_for(&dir.path().join("missing.mp4"));
        assert_eq!(
            missing.options().unwrap(),
            ["-protocol_whitelist", "file,pipe"].map(OsString::from)
        );
    }
}
