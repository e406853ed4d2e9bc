//! Property tests: no source a client can send, and no file it can point at, panics the engine.
//! `source::resolve` gets arbitrary text and generated `file://`, `data:`, `~/`, relative and
//! loopback http sources; `media::inspect` gets arbitrary bytes behind every format's magic.
//!
//! CI runs a modest, fixed set of cases (a fixed seed, so every run tries the same inputs). To
//! search longer locally: `PROPTEST_CASES=20000 PROPTEST_RNG_SEED=$RANDOM cargo nextest run -p
//! vaider-core --test no_panic`; a failure prints the smallest input that fails, to keep as a
//! regression test beside the code it breaks.

use std::path::Path;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed, TestRunner};
use vaider_core::media::{self, MediaKind};
use vaider_core::source;

/// The cases to run and the seed: `PROPTEST_CASES` and `PROPTEST_RNG_SEED` when set, else
/// `cases` and a fixed seed.
fn config(cases: u32) -> Config {
    let mut config = Config::default();
    if std::env::var_os("PROPTEST_CASES").is_none() {
        config.cases = cases;
    }
    if std::env::var_os("PROPTEST_RNG_SEED").is_none() {
        config.rng_seed = RngSeed::Fixed(9);
    }
    config.failure_persistence = None;
    config
}

/// Pieces that have broken text handling before: escapes whole and cut short, multibyte
/// characters, separators, NUL.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("%".to_string()),
        Just("%a".to_string()),
        Just("%C3".to_string()),
        Just("%A9".to_string()),
        Just("%2F".to_string()),
        Just("%00".to_string()),
        Just("%%".to_string()),
        Just("%zz".to_string()),
        Just("é".to_string()),
        Just("✓".to_string()),
        Just("🎬".to_string()),
        Just("/".to_string()),
        Just("\\".to_string()),
        Just("..".to_string()),
        Just("~".to_string()),
        Just(" ".to_string()),
        Just("\0".to_string()),
        Just(",".to_string()),
        Just(";".to_string()),
        Just("=".to_string()),
        "[a-zA-Z0-9._-]{1,8}",
        any::<char>().prop_map(String::from),
    ]
}

fn pieces() -> impl Strategy<Value = String> {
    prop::collection::vec(piece(), 0..16).prop_map(|p| p.concat())
}

fn base64_of(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A `data:` URL: odd media types and parameters, valid and broken base64, big payloads.
fn data_url() -> impl Strategy<Value = String> {
    let media_type = prop_oneof![
        Just("image/png".to_string()),
        Just("video/webm".to_string()),
        Just("".to_string()),
        Just("image/png;charset=é".to_string()),
        Just("image/png;base64;base64".to_string()),
        pieces(),
    ];
    let encoding = prop_oneof![Just(";base64"), Just(";BASE64"), Just(""), Just(";base32")];
    let payload = prop_oneof![
        prop::collection::vec(any::<u8>(), 0..256).prop_map(|b| base64_of(&b)),
        // More than the small limits below: 3 MB once decoded.
        Just("QUFB".repeat(1_000_000)),
        pieces(),
        "[A-Za-z0-9+/=_ -]{0,64}",
    ];
    (media_type, encoding, payload).prop_map(|(t, e, p)| format!("data:{t}{e},{p}"))
}

/// Anything a client might send as a source. Never an http(s) URL off this machine: the only
/// URLs are to a closed port on loopback.
fn source_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        pieces(),
        pieces().prop_map(|p| format!("file://{p}")),
        pieces().prop_map(|p| format!("file:///{p}")),
        pieces().prop_map(|p| format!("FILE://{p}")),
        data_url(),
        pieces().prop_map(|p| format!("~/{p}")),
        pieces().prop_map(|p| format!("./{p}")),
        pieces().prop_map(|p| format!("{p}://{p}")),
        pieces().prop_map(|p| format!("http://127.0.0.1:1/{p}")),
    ]
    .prop_filter("no URL off this machine", |s| stays_local(s))
}

fn stays_local(source: &str) -> bool {
    let lower = source.trim().to_ascii_lowercase();
    !(lower.starts_with("http://") || lower.starts_with("https://"))
        || lower.starts_with("http://127.0.0.1:1/")
}

#[test]
fn resolving_any_source_answers_without_panicking() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let http = reqwest::Client::builder()
        .no_proxy()
        .timeout(Duration::from_secs(2))
        .build()
        .unwrap();
    let downloads = tempfile::tempdir().unwrap();
    let workspace = tempfile::tempdir().unwrap();
    std::fs::write(workspace.path().join("clip.webm"), b"x").unwrap();
    let bases = vec![workspace.path().to_path_buf()];
    let limits = prop_oneof![Just(0u64), Just(1024), Just(u64::MAX)];
    let mut runner = TestRunner::new(config(256));
    runner
        .run(&(source_text(), limits), |(text, limit)| {
            let deadline = Instant::now() + Duration::from_secs(5);
            // Ok or Err are both answers; only a panic fails (and fails the test).
            let _ = runtime.block_on(source::resolve(
                &text,
                &bases,
                &http,
                downloads.path(),
                limit,
                deadline,
            ));
            Ok(())
        })
        .unwrap_or_else(|failure| panic!("{failure}"));
}

/// The start of each format Vaider sniffs, so random bytes behind it reach that format's checks.
const MAGIC: &[&[u8]] = &[
    b"",
    b"\xFF\xD8\xFF",
    b"\x89PNG\r\n\x1a\n",
    b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR",
    b"GIF89a",
    b"GIF87a",
    b"RIFF\x10\0\0\0AVI ",
    b"RIFF\xff\xff\xff\x7fWEBP",
    b"RIFF\x04\0\0\0WEBPVP8 ",
    b"\x1A\x45\xDF\xA3",
    b"\x1A\x45\xDF\xA3\x9F\x42\x82\x84webm",
    b"\x1A\x45\xDF\xA3\x01\0\0\0\0\0\0\x1F\x42\x82\x88matroska",
    b"\0\0\0\x18ftypisom",
    b"\0\0\0\x01ftypqt  ",
    b"\0\0\0\0moov",
    b"\0\0\0\x08mdat",
];

fn media_file() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::sample::select(MAGIC),
        prop::collection::vec(any::<u8>(), 0..600),
    )
        .prop_map(|(magic, rest)| [magic, &rest[..]].concat())
}

#[test]
fn inspecting_any_file_answers_without_panicking() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("media");
    let expected = prop_oneof![
        Just(None),
        Just(Some(MediaKind::Video)),
        Just(Some(MediaKind::Image))
    ];
    let mut runner = TestRunner::new(config(500));
    runner
        .run(&(media_file(), expected), |(bytes, expected)| {
            std::fs::write(&path, &bytes).unwrap();
            let _ = media::inspect(Path::new(&path), media::MAX_MEDIA_BYTES, expected);
            Ok(())
        })
        .unwrap_or_else(|failure| panic!("{failure}"));
}
