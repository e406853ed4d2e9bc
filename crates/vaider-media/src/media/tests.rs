//! The tests of the content checks across every container: real and ffmpeg-made samples,
//! truncations at every cut, live-recorded WebM, files that are not media (and whose content
//! must not leak into the error), and the filesystem's own errors.

use super::*;
use std::path::PathBuf;
use std::process::Command;

fn media_dir() -> PathBuf {
    match std::env::var("VAIDER_MEDIA_DIR") {
        Ok(dir) => PathBuf::from(dir),
        Err(_) => PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/media"
        )),
    }
}

fn sample(name: &str) -> Vec<u8> {
    let path = media_dir().join(name);
    fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()))
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    fs::write(&path, bytes).unwrap();
    path
}

fn check(path: &Path) -> Result<MediaInfo, MediaError> {
    inspect(path, MAX_MEDIA_BYTES, None)
}

#[track_caller]
fn assert_truncated(dir: &Path, name: &str, bytes: &[u8]) {
    let path = write(dir, name, bytes);
    match check(&path) {
        Err(e @ MediaError::Truncated { .. }) => {
            let msg = e.to_string();
            assert!(msg.contains(&*path.to_string_lossy()), "{msg}");
            assert!(msg.contains("wait for the test to finish"), "{msg}");
        }
        other => panic!(
            "{name} ({} bytes): expected Truncated, got {other:?}",
            bytes.len()
        ),
    }
}

#[track_caller]
fn assert_accepted(path: &Path, kind: MediaKind, mime: &str, format: &str) {
    let info = check(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(
        (info.kind, info.mime_type, info.format),
        (kind, mime, format)
    );
    assert_eq!(info.size_bytes, fs::metadata(path).unwrap().len());
    assert_eq!(inspect(path, MAX_MEDIA_BYTES, Some(kind)).unwrap(), info);
}

fn cut(bytes: &[u8], percent: usize) -> &[u8] {
    &bytes[..bytes.len() * percent / 100]
}

/// (start, header_len, end) of the Segment's top-level children; unknown sizes not handled.
fn webm_children(d: &[u8]) -> (usize, Vec<(u32, usize, usize, usize)>) {
    let el = |pos: usize| -> (u32, usize, usize, usize) {
        let Vint::Value { len: il, raw, .. } = read_vint(&d[pos..], 4) else {
            panic!()
        };
        let Vint::Value { len: sl, value, .. } = read_vint(&d[pos + il..], 8) else {
            panic!()
        };
        (raw as u32, pos, il + sl, pos + il + sl + value as usize)
    };
    let (_, _, _, header_end) = el(0);
    let (id, seg, seg_hl, _) = el(header_end);
    assert_eq!(id, ID_SEGMENT);
    let mut pos = seg + seg_hl;
    let mut children = Vec::new();
    while pos < d.len() {
        let c = el(pos);
        children.push(c);
        pos = c.3;
    }
    (seg, children)
}

/// Rewrites a VINT size in place as "unknown" (all ones, same length), as live recorders write.
fn make_unknown(d: &mut [u8], size_pos: usize) {
    let Vint::Value { len, .. } = read_vint(&d[size_pos..], 8) else {
        panic!()
    };
    d[size_pos] = (0xFFu16 >> (len - 1)) as u8;
    for b in &mut d[size_pos + 1..size_pos + len] {
        *b = 0xFF;
    }
}

fn clusters(d: &[u8]) -> Vec<(usize, usize, usize)> {
    webm_children(d)
        .1
        .into_iter()
        .filter(|c| c.0 == ID_CLUSTER)
        .map(|(_, s, hl, e)| (s, hl, e))
        .collect()
}

/// The Playwright sample with Segment and Cluster sizes rewritten as unknown (live recording).
fn live_webm() -> Vec<u8> {
    let mut d = sample("login-flow.webm");
    let (seg, _) = webm_children(&d);
    for (start, _, _) in clusters(&d) {
        make_unknown(&mut d, start + 4);
    }
    make_unknown(&mut d, seg + 4);
    d
}

fn boxes(d: &[u8]) -> Vec<([u8; 4], usize, usize)> {
    let mut out = Vec::new();
    let mut pos = 0;
    while pos < d.len() {
        let size = be_u32(&d[pos..]) as usize;
        let t = [d[pos + 4], d[pos + 5], d[pos + 6], d[pos + 7]];
        out.push((t, pos, pos + size));
        pos += size;
    }
    out
}

#[test]
fn real_samples_are_accepted() {
    let dir = media_dir();
    let v = MediaKind::Video;
    let i = MediaKind::Image;
    assert_accepted(&dir.join("login-flow.webm"), v, "video/webm", "WebM");
    assert_accepted(&dir.join("login-flow.mp4"), v, "video/mp4", "MP4");
    for png in ["login.png", "login-error.png", "dashboard.png"] {
        assert_accepted(&dir.join(png), i, "image/png", "PNG");
    }
}

#[test]
fn content_not_extension_decides() {
    let tmp = tempfile::tempdir().unwrap();
    let png_as_webm = write(tmp.path(), "video.webm", &sample("login.png"));
    assert_accepted(&png_as_webm, MediaKind::Image, "image/png", "PNG");
    let webm_as_txt = write(tmp.path(), "notes.txt", &sample("login-flow.webm"));
    assert_accepted(&webm_as_txt, MediaKind::Video, "video/webm", "WebM");
}

#[test]
fn truncated_webm_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = sample("login-flow.webm");
    let cl = clusters(&d);
    assert!(!cl.is_empty());
    let (start, _, end) = cl[0];
    assert_truncated(tmp.path(), "60.webm", cut(&d, 60));
    assert_truncated(tmp.path(), "1k.webm", &d[..1024]);
    assert_truncated(tmp.path(), "mid.webm", &d[..(start + end) / 2]);
    assert_truncated(tmp.path(), "hdr.webm", &d[..20]);
    assert_truncated(tmp.path(), "pre-cluster.webm", &d[..start]);
    assert_truncated(tmp.path(), "last-byte.webm", &d[..d.len() - 1]);
}

#[test]
fn live_webm_with_unknown_sizes() {
    let tmp = tempfile::tempdir().unwrap();
    let d = live_webm();
    let live = write(tmp.path(), "live.webm", &d);
    assert_accepted(&live, MediaKind::Video, "video/webm", "WebM");

    let cl = clusters(&sample("login-flow.webm"));
    let (first, hl, end) = cl[0];
    assert_truncated(tmp.path(), "60.webm", cut(&d, 60));
    assert_truncated(tmp.path(), "1k.webm", &d[..1024]);
    assert_truncated(tmp.path(), "mid.webm", &d[..(first + end) / 2]);
    // Only the Segment's header elements, no Cluster yet.
    assert_truncated(tmp.path(), "no-cluster.webm", &d[..first]);
    // A Cluster header with no blocks yet ends exactly on an element boundary; that is a valid
    // (if empty) recording so far, like one cut exactly between two blocks.
    let path = write(tmp.path(), "open.webm", &d[..first + hl]);
    assert!(check(&path).is_ok());
    // Cut exactly between clusters: a playable prefix of a live recording.
    let path = write(tmp.path(), "between.webm", &d[..end]);
    assert_accepted(&path, MediaKind::Video, "video/webm", "WebM");
}

#[test]
fn truncated_mp4_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let d = sample("login-flow.mp4");
    let (_, start, end) = boxes(&d)
        .into_iter()
        .find(|b| &b.0 == b"mdat")
        .expect("mdat box");
    assert_truncated(tmp.path(), "60.mp4", cut(&d, 60));
    assert_truncated(tmp.path(), "1k.mp4", &d[..1024]);
    assert_truncated(tmp.path(), "mid.mp4", &d[..(start + end) / 2]);
    assert_truncated(tmp.path(), "hdr.mp4", &d[..10]);
    assert_truncated(tmp.path(), "last-byte.mp4", &d[..d.len() - 1]);
}

#[test]
fn truncated_pngs_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["login.png", "login-error.png", "dashboard.png"] {
        let d = sample(name);
        // The first IDAT chunk, found by walking chunks.
        let mut pos = 8;
        let idat = loop {
            let len = be_u32(&d[pos..]) as usize;
            if &d[pos + 4..pos + 8] == b"IDAT" {
                break (pos, pos + 12 + len);
            }
            pos += 12 + len;
        };
        assert_truncated(tmp.path(), "60.png", cut(&d, 60));
        assert_truncated(tmp.path(), "1k.png", &d[..1024]);
        assert_truncated(tmp.path(), "mid.png", &d[..(idat.0 + idat.1) / 2]);
        assert_truncated(tmp.path(), "sig.png", &d[..5]);
        assert_truncated(tmp.path(), "no-iend.png", &d[..d.len() - 12]);
    }
}

#[test]
fn filesystem_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = write(tmp.path(), "empty.webm", b"");
    assert!(matches!(check(&empty), Err(MediaError::Empty { .. })));

    let err = check(tmp.path()).unwrap_err();
    assert!(matches!(err, MediaError::NotAFile { .. }), "{err:?}");
    assert!(err.to_string().contains("video.webm"));

    let missing = tmp.path().join("missing.webm");
    let err = check(&missing).unwrap_err();
    assert!(matches!(err, MediaError::NotFound { .. }), "{err:?}");
    assert!(err.to_string().contains("missing.webm does not exist"));
    assert_eq!(err.path(), missing);

    let under_file = empty.join("x.png");
    assert!(matches!(
        check(&under_file),
        Err(MediaError::NotFound { .. })
    ));

    #[cfg(unix)]
    {
        let link = tmp.path().join("dangling.webm");
        std::os::unix::fs::symlink(&missing, &link).unwrap();
        assert!(matches!(check(&link), Err(MediaError::NotFound { .. })));
        // A symlink to a real file is followed.
        let good = tmp.path().join("good.png");
        std::os::unix::fs::symlink(media_dir().join("login.png"), &good).unwrap();
        assert_accepted(&good, MediaKind::Image, "image/png", "PNG");
    }
}

#[cfg(unix)]
#[test]
fn unreadable_file() {
    use std::os::unix::fs::PermissionsExt;
    let tmp = tempfile::tempdir().unwrap();
    let path = write(tmp.path(), "secret.png", &sample("login.png"));
    fs::set_permissions(&path, fs::Permissions::from_mode(0o000)).unwrap();
    if File::open(&path).is_ok() {
        println!("note: running as root, permission check skipped");
        return;
    }
    let err = check(&path).unwrap_err();
    assert!(matches!(err, MediaError::Unreadable { .. }), "{err:?}");
}

#[test]
fn non_media_is_refused_without_leaking_content() {
    let tmp = tempfile::tempdir().unwrap();
    let text = write(
        tmp.path(),
        "video.webm",
        "hello world\nthis is a log file ✓\n".as_bytes(),
    );
    match check(&text) {
        Err(MediaError::NotMedia { looks_like, .. }) => assert_eq!(looks_like, Some("text")),
        other => panic!("{other:?}"),
    }

    let key_body = "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW";
    let key = format!(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{key_body}\n-----END OPENSSH PRIVATE KEY-----\n"
    );
    let key_path = write(tmp.path(), "id_ed25519", key.as_bytes());
    let err = check(&key_path).unwrap_err();
    assert!(
        matches!(
            err,
            MediaError::NotMedia {
                looks_like: Some("a private key"),
                ..
            }
        ),
        "{err:?}"
    );
    let msg = err.to_string();
    assert!(
        msg.contains("a private key") && msg.contains("nothing was uploaded"),
        "{msg}"
    );
    assert!(!msg.contains(key_body) && !msg.contains("OPENSSH") && !msg.contains("BEGIN"));

    let cases: &[(&[u8], Option<&str>)] = &[
        (b"%PDF-1.7\n%\xE2\xE3\xCF\xD3\n", Some("PDF")),
        (b"PK\x03\x04\x14\x00\x00\x00", Some("ZIP archive")),
        (b"\x7FELF\x02\x01\x01\x00\x00\x00", Some("ELF executable")),
        (b"\x00\x01\x02\x03\xFF\xFE\x00\x00", None),
    ];
    for (bytes, want) in cases {
        let path = write(tmp.path(), "x.mp4", bytes);
        match check(&path) {
            Err(MediaError::NotMedia { looks_like, .. }) => assert_eq!(looks_like, *want),
            other => panic!("{other:?}"),
        }
    }
    // Words that happen to be QuickTime box names do not make a text file a MOV.
    let path = write(tmp.path(), "free.txt", b"    free software is great\n");
    assert!(matches!(check(&path), Err(MediaError::NotMedia { .. })));
    // HEIC is ISO BMFF but not something we send.
    let heic = [&[0, 0, 0, 24][..], b"ftypheic\0\0\0\0mif1heic"].concat();
    let path = write(tmp.path(), "photo.heic", &heic);
    assert!(
        matches!(check(&path), Err(MediaError::NotMedia { looks_like: Some(l), .. }) if l.contains("HEIC"))
    );
}

#[test]
fn too_large_and_wrong_kind() {
    let png = media_dir().join("login.png");
    let err = inspect(&png, 1000, None).unwrap_err();
    match &err {
        MediaError::TooLarge {
            size_bytes,
            limit_bytes,
            ..
        } => {
            assert_eq!((*size_bytes, *limit_bytes), (6824, 1000));
        }
        other => panic!("{other:?}"),
    }
    let msg = err.to_string();
    assert!(
        msg.contains("6824 bytes") && msg.contains("1000 bytes"),
        "{msg}"
    );
    let big = MediaError::TooLarge {
        path: "v.webm".into(),
        size_bytes: 3 * 1024 * 1024 * 1024,
        limit_bytes: MAX_MEDIA_BYTES,
    };
    assert!(big.to_string().contains("3.00 GB") && big.to_string().contains("2.00 GB"));

    let err = inspect(&png, MAX_MEDIA_BYTES, Some(MediaKind::Video)).unwrap_err();
    assert!(
        matches!(
            err,
            MediaError::WrongKind {
                expected: MediaKind::Video,
                found: "PNG",
                ..
            }
        ),
        "{err:?}"
    );
    assert!(err.to_string().contains("a video is needed"));
    let webm = media_dir().join("login-flow.webm");
    let err = inspect(&webm, MAX_MEDIA_BYTES, Some(MediaKind::Image)).unwrap_err();
    assert!(
        matches!(err, MediaError::WrongKind { found: "WebM", .. }),
        "{err:?}"
    );
}

#[test]
fn sniff_prefixes() {
    let webm = sample("login-flow.webm");
    assert_eq!(sniff(&webm[..64]), Some(WEBM));
    assert_eq!(sniff(&webm[..20]), None);
    let mut mkv = webm[..64].to_vec();
    mkv[0x18..0x1C].copy_from_slice(b"mkvx"); // same length, unsupported DocType
    assert_eq!(sniff(&mkv), None);
    assert_eq!(sniff(&sample("login-flow.mp4")[..12]), Some(MP4));
    assert_eq!(sniff(b"\0\0\0\x14ftypqt  \0\0\0\0"), Some(MOV));
    assert_eq!(sniff(b"\0\0\0\x08wide\0\0\0\x10mdat"), Some(MOV));
    assert_eq!(sniff(&sample("login.png")[..8]), Some(PNG));
    assert_eq!(sniff(b"\xFF\xD8\xFF\xE0"), Some(JPEG));
    assert_eq!(sniff(b"GIF89a"), Some(GIF));
    assert_eq!(sniff(b"RIFF\0\0\0\0AVI "), Some(AVI));
    assert_eq!(sniff(b"RIFF\0\0\0\0WEBP"), Some(WEBP));
    assert_eq!(sniff(b""), None);
    assert_eq!(sniff(b"hello"), None);
}

#[test]
fn synthetic_iso_bmff_layouts() {
    let tmp = tempfile::tempdir().unwrap();
    let bx = |t: &[u8], payload: usize| -> Vec<u8> {
        let mut b = ((8 + payload) as u32).to_be_bytes().to_vec();
        b.extend_from_slice(t);
        b.resize(8 + payload, 7);
        b
    };
    let ftyp = [&[0, 0, 0, 16][..], b"ftypisom\0\0\0\0"].concat();
    let ok: Vec<Vec<u8>> = vec![
        // Fragmented: moov then moof without a top-level mdat.
        [ftyp.clone(), bx(b"moov", 20), bx(b"moof", 20)].concat(),
        // 64-bit largesize mdat.
        [
            ftyp.clone(),
            bx(b"moov", 20),
            [&[0, 0, 0, 1][..], b"mdat", &24u64.to_be_bytes(), &[9; 8]].concat(),
        ]
        .concat(),
        // size 0: mdat runs to the end of the file.
        [
            ftyp.clone(),
            bx(b"moov", 20),
            [&[0, 0, 0, 0][..], b"mdat", &[1; 50]].concat(),
        ]
        .concat(),
        // Old QuickTime layout without ftyp.
        [bx(b"wide", 0), bx(b"mdat", 30), bx(b"moov", 20)].concat(),
    ];
    for (i, d) in ok.iter().enumerate() {
        let path = write(tmp.path(), &format!("ok{i}.mp4"), d);
        assert!(check(&path).is_ok(), "case {i}: {:?}", check(&path));
    }
    assert_truncated(
        tmp.path(),
        "nomoov.mp4",
        &[ftyp.clone(), bx(b"mdat", 30)].concat(),
    );
    assert_truncated(
        tmp.path(),
        "nomdat.mp4",
        &[ftyp.clone(), bx(b"moov", 30)].concat(),
    );
    let zeros = [ftyp.clone(), bx(b"moov", 20), bx(b"mdat", 20), vec![0; 64]].concat();
    assert_truncated(tmp.path(), "zeros.mp4", &zeros);
    assert_truncated(
        tmp.path(),
        "short.mp4",
        &[ftyp, bx(b"moov", 20), bx(b"mdat", 20)].concat()[..60],
    );
}

#[test]
fn synthetic_images() {
    let tmp = tempfile::tempdir().unwrap();
    let jpeg = [&[0xFF, 0xD8, 0xFF, 0xE0][..], &[1; 100], &[0xFF, 0xD9]].concat();
    let path = write(tmp.path(), "a.jpg", &jpeg);
    assert_accepted(&path, MediaKind::Image, "image/jpeg", "JPEG");
    let padded = [jpeg.clone(), vec![0; 2000]].concat();
    assert!(check(&write(tmp.path(), "p.jpg", &padded)).is_ok());
    let overpadded = [jpeg.clone(), vec![0; 5000]].concat();
    assert_truncated(tmp.path(), "o.jpg", &overpadded);
    assert_truncated(tmp.path(), "t.jpg", &jpeg[..50]);

    let gif = [&b"GIF89a"[..], &[1; 30], &[0x3B]].concat();
    assert!(check(&write(tmp.path(), "a.gif", &gif)).is_ok());
    assert_truncated(tmp.path(), "t.gif", &gif[..20]);
    assert_truncated(tmp.path(), "h.gif", b"GIF8");

    // RIFF size not yet filled in, as while an AVI is being written.
    assert_truncated(tmp.path(), "r.avi", b"RIFF\0\0\0\0AVI LIST\0\0\0\0");
    assert_truncated(tmp.path(), "r.webp", b"RIFF\x40\0\0\0WEBPVP8 ");
}

fn ffmpeg(dir: &Path, out: &str, args: &[&str]) -> Option<PathBuf> {
    let path = dir.join(out);
    let status = Command::new("ffmpeg")
        .args([
            "-v",
            "error",
            "-y",
            "-f",
            "lavfi",
            "-i",
            "testsrc=size=160x120:rate=10",
        ])
        .args(args)
        .arg(&path)
        .status();
    match status {
        Ok(s) if s.success() => Some(path),
        _ => {
            println!("note: ffmpeg could not produce {out}; that format is not tested here");
            None
        }
    }
}

#[test]
fn ffmpeg_generated_samples() {
    if Command::new("ffmpeg").arg("-version").output().is_err() {
        println!("note: ffmpeg not installed; generated-sample test skipped");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let v = MediaKind::Video;
    let i = MediaKind::Image;
    let clip = ["-t", "2", "-c:v", "mpeg4"];
    let one = ["-frames:v", "1"];
    let cases: Vec<(Option<PathBuf>, MediaKind, &str, &str)> = vec![
        (ffmpeg(d, "clip.avi", &clip), v, "video/avi", "AVI"),
        (
            ffmpeg(d, "clip.mov", &clip),
            v,
            "video/quicktime",
            "QuickTime MOV",
        ),
        (
            ffmpeg(d, "clip.mkv", &clip),
            v,
            "video/x-matroska",
            "Matroska",
        ),
        (ffmpeg(d, "clip.mp4", &clip), v, "video/mp4", "MP4"),
        (ffmpeg(d, "clip.gif", &["-t", "1"]), i, "image/gif", "GIF"),
        (ffmpeg(d, "shot.jpg", &one), i, "image/jpeg", "JPEG"),
        (
            ffmpeg(d, "shot.webp", &[&one[..], &["-c:v", "libwebp"]].concat()),
            i,
            "image/webp",
            "WebP",
        ),
    ];
    let mut tested = 0;
    for (path, kind, mime, format) in cases {
        let Some(path) = path else { continue };
        assert_accepted(&path, kind, mime, format);
        let bytes = fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let mut end = bytes.len() * 60 / 100;
        // The GIF check is by trailer byte; move the cut off a 0x3B that a cut could hit by chance.
        while format == "GIF" && bytes[end - 1] == 0x3B {
            end -= 1;
        }
        assert_truncated(d, &format!("60-{name}"), &bytes[..end]);
        assert_truncated(d, &format!("last-{name}"), &bytes[..bytes.len() - 1]);
        tested += 1;
    }
    assert!(tested >= 5, "ffmpeg produced too few samples");

    // Fragmented MP4 (moov first, then moof/mdat pairs) and a live Matroska stream.
    if let Some(p) = ffmpeg(
        d,
        "frag.mp4",
        &[&clip[..], &["-movflags", "frag_keyframe+empty_moov"]].concat(),
    ) {
        assert_accepted(&p, v, "video/mp4", "MP4");
    }
    if let Some(p) = ffmpeg(
        d,
        "live.webm",
        &[
            "-t",
            "2",
            "-c:v",
            "libvpx-vp9",
            "-deadline",
            "realtime",
            "-live",
            "1",
        ],
    ) {
        // ffmpeg's live WebM has a Segment of unknown size, like a recording still in progress.
        assert_accepted(&p, v, "video/webm", "WebM");
        let bytes = fs::read(&p).unwrap();
        assert_truncated(d, "60-live.webm", cut(&bytes, 60));
        assert_truncated(d, "last-live.webm", &bytes[..bytes.len() - 1]);
    }
}
