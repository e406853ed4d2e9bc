//! Turns what a client sent (`video_source`, `videoPath`) into a local file: an absolute path,
//! `~/…`, a `file://` URL, a path relative to the client's workspace, a `data:` URL, or an
//! http(s) URL that is downloaded (with a size cap and the call's deadline) into the data
//! folder, where the interaction files are kept beside it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use futures_util::StreamExt;
use tokio::io::AsyncWriteExt;

use crate::error::{Result, VaiderError};
use crate::media::MAX_MEDIA_BYTES;

pub async fn resolve(
    source: &str,
    base_dirs: &[PathBuf],
    http: &reqwest::Client,
    download_dir: &Path,
    limit_bytes: u64,
    deadline: Instant,
) -> Result<PathBuf> {
    let source = source.trim();
    if source.is_empty() {
        return Err(VaiderError::InvalidRequest(
            "No source given: pass the path of a video or image (absolute, or relative to the workspace), or an http(s) URL.".into(),
        ));
    }
    let lower = source.to_ascii_lowercase();
    if lower.starts_with("http://") || lower.starts_with("https://") {
        return download(source, http, download_dir, limit_bytes, deadline).await;
    }
    if lower.starts_with("data:") {
        return save_data_url(source, download_dir, limit_bytes);
    }
    if let Some(rest) = source.strip_prefix("file://") {
        return file_url_path(rest);
    }
    if let Some((scheme, _)) = source.split_once("://") {
        return Err(VaiderError::InvalidPath {
            message: format!(
                "{scheme}:// sources are not supported. Pass a local path or an http(s) URL."
            ),
        });
    }
    let expanded = expand_home(source);
    if expanded.is_absolute() {
        return Ok(expanded);
    }
    let server_cwd = std::env::current_dir().ok();
    let mut tried = Vec::new();
    for base in base_dirs.iter().chain(server_cwd.iter()) {
        let candidate = base.join(&expanded);
        if std::fs::symlink_metadata(&candidate).is_ok() {
            return Ok(candidate);
        }
        tried.push(candidate.display().to_string());
    }
    Err(VaiderError::InvalidPath {
        message: format!(
            "{source} was not found. As a relative path it was tried against {}. Pass an absolute path, or a `cwd` argument naming the project folder.",
            if tried.is_empty() {
                "nothing (no workspace roots, no cwd)".to_string()
            } else {
                tried.join(", ")
            }
        ),
    })
}

fn expand_home(source: &str) -> PathBuf {
    if let Some(rest) = source.strip_prefix("~/") {
        if let Some(home) = directories::BaseDirs::new().map(|b| b.home_dir().to_path_buf()) {
            return home.join(rest);
        }
    }
    PathBuf::from(source)
}

/// The path of a `file://` URL without its scheme: `/a%20b/c.webm` → `/a b/c.webm`. Escapes
/// are decoded as bytes, since a file name is bytes on Unix and an escape may stand for one
/// byte of a multibyte character (`%C3%A9` is `é`).
pub fn file_url_path(rest: &str) -> Result<PathBuf> {
    let bytes = percent_decode_bytes(rest);
    #[cfg(unix)]
    {
        // Unix file names are any bytes but NUL, so a name that is not UTF-8 is still a name.
        use std::os::unix::ffi::OsStringExt;
        Ok(PathBuf::from(std::ffi::OsString::from_vec(bytes)))
    }
    #[cfg(not(unix))]
    {
        String::from_utf8(bytes)
            .map(PathBuf::from)
            .map_err(|_| VaiderError::InvalidPath {
                message: format!(
                    "file://{rest} names a file whose escaped name is not UTF-8 text. Pass the path itself instead of a file:// URL."
                ),
            })
    }
}

/// `a b/c` → `a%20b%2Fc`: every byte but the unreserved characters (RFC 3986's letters,
/// digits, `-`, `_`, `.`, `~`) percent-encoded, so the text is one query value or path part.
pub fn percent_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// `a%20b` → `a b`, as text; an escape that decodes to bytes that are not UTF-8 becomes U+FFFD.
pub fn percent_decode(text: &str) -> String {
    String::from_utf8_lossy(&percent_decode_bytes(text)).into_owned()
}

/// Decodes `%XX` escapes to the bytes they stand for. A `%` not followed by two hex digits is
/// kept as it is, as browsers do, so `100%` and `%aé` stay readable.
pub fn percent_decode_bytes(text: &str) -> Vec<u8> {
    fn hex(digit: u8) -> Option<u8> {
        match digit {
            b'0'..=b'9' => Some(digit - b'0'),
            b'a'..=b'f' => Some(digit - b'a' + 10),
            b'A'..=b'F' => Some(digit - b'A' + 10),
            _ => None,
        }
    }
    let mut out = Vec::with_capacity(text.len());
    let mut bytes = text.bytes();
    while let Some(byte) = bytes.next() {
        if byte == b'%' {
            let mut ahead = bytes.clone();
            if let (Some(high), Some(low)) =
                (ahead.next().and_then(hex), ahead.next().and_then(hex))
            {
                out.push(high << 4 | low);
                bytes = ahead;
                continue;
            }
        }
        out.push(byte);
    }
    out
}

/// Whether resolving `source` makes a new file in the download folder (a URL or `data:`).
pub fn is_download(source: &str) -> bool {
    let lower: String = source.trim_start().chars().take(8).collect();
    let lower = lower.to_ascii_lowercase();
    lower.starts_with("http://") || lower.starts_with("https://") || lower.starts_with("data:")
}

/// The source as the history, request.json and the UI show it: as given, except that a
/// `data:` URL is named by its media type and size rather than kept whole.
pub fn label(source: &str) -> String {
    let trimmed = source.trim_start();
    let scheme: String = trimmed.chars().take(5).collect();
    if !scheme.eq_ignore_ascii_case("data:") {
        return source.to_string();
    }
    let header = trimmed.split(',').next().unwrap_or_default();
    let header: String = header.chars().take(80).collect();
    format!("{header},… ({} bytes of data URL)", source.len())
}

/// `data:image/png;base64,....` → a file in the download folder, refused before decoding
/// when it would be larger than `limit_bytes`.
fn save_data_url(source: &str, download_dir: &Path, limit_bytes: u64) -> Result<PathBuf> {
    use base64::Engine as _;
    let bad = |why: &str| VaiderError::InvalidPath {
        message: format!("The data: URL is not usable ({why}). Send `data:<mime>;base64,<data>`."),
    };
    let (header, data) = source.split_once(',').ok_or_else(|| bad("no comma"))?;
    if !header.to_ascii_lowercase().ends_with(";base64") {
        return Err(bad("only base64 data URLs are supported"));
    }
    // Four base64 characters carry three bytes.
    let decoded_size = (data.len() as u64 / 4).saturating_mul(3);
    if decoded_size > limit_bytes.min(MAX_MEDIA_BYTES) {
        return Err(VaiderError::InvalidPath {
            message: format!(
                "The data: URL holds about {decoded_size} bytes, over the limit of {} bytes (download_limit_mb). Save the file and pass its path instead.",
                limit_bytes.min(MAX_MEDIA_BYTES)
            ),
        });
    }
    let data: String = data.chars().filter(|c| !c.is_whitespace()).collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim_end_matches('='))
        .or_else(|_| {
            base64::engine::general_purpose::STANDARD_NO_PAD.decode(data.trim_end_matches('='))
        })
        .or_else(|_| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(data.trim_end_matches('='))
        })
        .map_err(|_| bad("the base64 does not decode"))?;
    std::fs::create_dir_all(download_dir)
        .map_err(|e| VaiderError::internal(format!("create {}", download_dir.display()), e))?;
    let path = download_dir.join(format!("{}-data", uuid::Uuid::now_v7().simple()));
    std::fs::write(&path, bytes)
        .map_err(|e| VaiderError::internal(format!("write {}", path.display()), e))?;
    Ok(path)
}

/// Downloads an http(s) source into the download folder, within the call's deadline and the
/// download limit.
async fn download(
    url: &str,
    http: &reqwest::Client,
    download_dir: &Path,
    limit_bytes: u64,
    deadline: Instant,
) -> Result<PathBuf> {
    let failed = |reason: String| VaiderError::InvalidPath {
        message: format!("Could not download {url}: {reason}"),
    };
    let response = tokio::time::timeout_at(deadline.into(), http.get(url).send())
        .await
        .map_err(|_| failed("it did not answer before the timeout".into()))?
        .map_err(|e| failed(e.without_url().to_string()))?;
    if let Some(reason) = refused_answer(&response) {
        return Err(failed(reason));
    }
    let limit = limit_bytes.min(MAX_MEDIA_BYTES);
    if response.content_length().is_some_and(|len| len > limit) {
        return Err(failed(too_large(limit, "nothing was downloaded")));
    }
    std::fs::create_dir_all(download_dir)
        .map_err(|e| VaiderError::internal(format!("create {}", download_dir.display()), e))?;
    let name = file_name_in(url);
    let path = download_dir.join(format!("{}-{name}", uuid::Uuid::now_v7().simple()));
    save_body(response, &path, limit, deadline, &failed).await?;
    Ok(path)
}

/// Why an answer that is not the file is refused, or `None` for a success.
fn refused_answer(response: &reqwest::Response) -> Option<String> {
    if response.status().is_redirection() {
        // reqwest follows http(s) redirects itself; one left over points somewhere else.
        let location = response
            .headers()
            .get(reqwest::header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .unwrap_or("");
        let scheme = location
            .split_once(':')
            .map(|(s, _)| s)
            .unwrap_or("an unknown");
        return Some(format!(
            "it redirects to a {scheme}: URL; only redirects to http(s) URLs are followed (a non-http(s) redirect is refused)"
        ));
    }
    if !response.status().is_success() {
        return Some(format!(
            "the server answered HTTP {}",
            response.status().as_u16()
        ));
    }
    None
}

fn too_large(limit: u64, what: &str) -> String {
    format!(
        "it is larger than the {:.1} MB download limit (download_limit_mb); {what}",
        limit as f64 / 1e6
    )
}

/// The URL's last path segment, kept to safe characters, so the saved file is recognisable.
fn file_name_in(url: &str) -> String {
    url.split(['?', '#'])
        .next()
        .and_then(|u| u.rsplit('/').next())
        .filter(|n| !n.is_empty())
        .map(|n| {
            n.chars()
                .filter(|c| c.is_ascii_alphanumeric() || ".-_".contains(*c))
                .collect::<String>()
        })
        .unwrap_or_else(|| "download".to_string())
}

/// Streams the body to `path` within the deadline and the size limit; a download stopped
/// for either leaves no partial file behind.
async fn save_body(
    response: reqwest::Response,
    path: &Path,
    limit: u64,
    deadline: Instant,
    failed: &(dyn Fn(String) -> VaiderError + Sync),
) -> Result<()> {
    let mut file = tokio::fs::File::create(path)
        .await
        .map_err(|e| VaiderError::internal(format!("create {}", path.display()), e))?;
    let mut stream = response.bytes_stream();
    let mut written: u64 = 0;
    loop {
        let next = tokio::time::timeout_at(deadline.into(), stream.next()).await;
        let chunk = match next {
            Err(_) => {
                let _ = tokio::fs::remove_file(path).await;
                return Err(failed("it did not finish before the timeout".into()));
            }
            Ok(None) => break,
            Ok(Some(Err(e))) => {
                let _ = tokio::fs::remove_file(path).await;
                return Err(failed(e.without_url().to_string()));
            }
            Ok(Some(Ok(chunk))) => chunk,
        };
        written += chunk.len() as u64;
        if written > limit {
            drop(file);
            let _ = tokio::fs::remove_file(path).await;
            return Err(failed(too_large(limit, "the download was stopped")));
        }
        file.write_all(&chunk)
            .await
            .map_err(|e| VaiderError::internal(format!("write {}", path.display()), e))?;
    }
    file.flush()
        .await
        .map_err(|e| VaiderError::internal(format!("write {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(5)
    }

    #[tokio::test]
    async fn relative_paths_try_each_base_and_name_them_when_missing() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        std::fs::write(b.path().join("clip.webm"), b"x").unwrap();
        let http = reqwest::Client::new();
        let bases = vec![a.path().to_path_buf(), b.path().to_path_buf()];
        let found = resolve("clip.webm", &bases, &http, a.path(), u64::MAX, soon())
            .await
            .unwrap();
        assert_eq!(found, b.path().join("clip.webm"));

        let err = resolve("missing.webm", &bases, &http, a.path(), u64::MAX, soon())
            .await
            .unwrap_err();
        let message = err.to_string();
        assert!(
            message.contains(&a.path().join("missing.webm").display().to_string()),
            "{message}"
        );
        assert!(
            message.contains(&b.path().join("missing.webm").display().to_string()),
            "{message}"
        );
    }

    #[tokio::test]
    async fn file_urls_and_other_schemes() {
        let http = reqwest::Client::new();
        let dir = tempfile::tempdir().unwrap();
        let path = resolve(
            "file:///tmp/a%20b.webm",
            &[],
            &http,
            dir.path(),
            u64::MAX,
            soon(),
        )
        .await
        .unwrap();
        assert_eq!(path, PathBuf::from("/tmp/a b.webm"));
        let err = resolve(
            "ftp://host/x.webm",
            &[],
            &http,
            dir.path(),
            u64::MAX,
            soon(),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("ftp://"));
        let err = resolve("  ", &[], &http, dir.path(), u64::MAX, soon())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("No source"));
        let saved = resolve(
            "data:image/png;base64,aGVsbG8=",
            &[],
            &http,
            dir.path(),
            u64::MAX,
            soon(),
        )
        .await
        .unwrap();
        assert_eq!(std::fs::read(saved).unwrap(), b"hello");
        let err = resolve(
            "data:image/png,plain",
            &[],
            &http,
            dir.path(),
            u64::MAX,
            soon(),
        )
        .await
        .unwrap_err();
        assert!(err.to_string().contains("base64"));
    }

    /// `file:///%aé` used to panic (a slice inside `é`); each of these must resolve or fail
    /// with a message, and escapes decode byte by byte.
    #[tokio::test]
    async fn file_urls_with_odd_escapes_and_multibyte_text_resolve_without_panicking() {
        let http = reqwest::Client::new();
        let dir = tempfile::tempdir().unwrap();
        let resolve_file_url = |url: &'static str| {
            let http = http.clone();
            let dir = dir.path().to_path_buf();
            async move { resolve(url, &[], &http, &dir, u64::MAX, soon()).await }
        };
        // Not an escape: kept as written, as a browser would.
        assert_eq!(
            resolve_file_url("file:///%aé").await.unwrap(),
            PathBuf::from("/%aé")
        );
        for (url, path) in [
            ("file:///tmp/%", "/tmp/%"),
            ("file:///tmp/%é", "/tmp/%é"),
            ("file:///tmp/é%", "/tmp/é%"),
            ("file:///tmp/%2", "/tmp/%2"),
            ("file:///tmp/%zz", "/tmp/%zz"),
            ("file:///tmp/100%.png", "/tmp/100%.png"),
            // Two escapes that together are one character.
            ("file:///tmp/caf%C3%A9.webm", "/tmp/café.webm"),
            ("file:///tmp/%e2%9c%93", "/tmp/✓"),
        ] {
            assert_eq!(
                resolve_file_url(url).await.unwrap(),
                PathBuf::from(path),
                "{url}"
            );
        }
        // Half a character: on Unix the name is those bytes, which no file has here.
        let half = resolve_file_url("file:///tmp/%C3.webm").await;
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            assert_eq!(half.unwrap().as_os_str().as_bytes(), b"/tmp/\xC3.webm");
        }
        #[cfg(not(unix))]
        assert_eq!(
            half.unwrap_err().code(),
            crate::error::ErrorCode::InvalidPath
        );
        assert_eq!(percent_decode("a%20b%C3"), "a b\u{FFFD}");
    }

    #[test]
    fn percent_encoding_is_undone_by_percent_decoding() {
        let text = "/home/ada/my project/é?&=#%";
        assert_eq!(percent_encode("a b/c~d"), "a%20b%2Fc~d");
        assert_eq!(percent_decode(&percent_encode(text)), text);
    }

    #[tokio::test]
    async fn a_data_url_larger_than_the_download_limit_is_refused_before_decoding() {
        let http = reqwest::Client::new();
        let dir = tempfile::tempdir().unwrap();
        let source = format!("data:image/png;base64,{}", "AAAA".repeat(1000));
        let err = resolve(&source, &[], &http, dir.path(), 2999, soon())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("download_limit_mb"), "{err}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let saved = resolve(&source, &[], &http, dir.path(), 3000, soon())
            .await
            .unwrap();
        assert_eq!(std::fs::read(saved).unwrap().len(), 3000);
    }
}
