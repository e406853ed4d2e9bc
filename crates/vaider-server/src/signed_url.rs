//! Short-lived signed URLs: what a page may load where it cannot send a header (`<video>`,
//! `<img>`, a view in an MCP client). The server signs a path and its query with a random key
//! made at start (kept in memory only, so a restart invalidates every URL) and an expiry;
//! the guard lets a `GET` of a signed URL in while it is unexpired and unaltered. A URL
//! carries no session and no token: one that leaks (a browser's history, another local
//! server it was sent to) opens that one file for a few minutes, nothing else.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// How long a media URL the UI is handed stays valid.
pub const MEDIA_TTL: Duration = Duration::from_secs(5 * 60);

/// Expiries are rounded up to this step, so the same file gets the same URL for a while and
/// the browser's cache keeps working across the detail's reloads.
const STEP_SECS: u64 = 60;

/// Why a signed URL was refused; the message says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("This signed link has no valid `exp` and `sig` at the end of its query.")]
    Malformed,
    #[error(
        "This signed link expired: reload the page to get a fresh one (links last a few minutes)."
    )]
    Expired,
    #[error(
        "This signed link was altered or was signed by another run of the server: reload the page."
    )]
    BadSignature,
}

/// The process's key: 256 random bits, never written anywhere.
fn key() -> &'static [u8; 32] {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    KEY.get_or_init(rand::random)
}

/// `path_and_query` with `exp` and `sig` appended, valid for `ttl` (rounded up to a minute).
pub fn sign(path_and_query: &str, ttl: Duration) -> String {
    let expires = (now_secs() + ttl.as_secs()).div_ceil(STEP_SECS) * STEP_SECS;
    sign_until(path_and_query, expires)
}

/// `path_and_query` signed to expire at `expires` (seconds since 1970): for tests of expiry
/// and for callers that need an exact end.
pub fn sign_until(path_and_query: &str, expires: u64) -> String {
    sign_with(key(), path_and_query, expires)
}

/// Whether a request for `path` with the raw `query` (as sent, without the `?`) carries a
/// valid signature made by [`sign`].
pub fn verify(path: &str, query: Option<&str>) -> Result<(), Refusal> {
    verify_with(key(), path, query, now_secs())
}

/// Whether the query ends with a signature; the guard tries [`verify`] only then.
pub fn is_signed(query: Option<&str>) -> bool {
    query.is_some_and(|q| split(q).is_some())
}

fn sign_with(key: &[u8], path_and_query: &str, expires: u64) -> String {
    let (path, query) = match path_and_query.split_once('?') {
        Some((path, query)) => (path, query),
        None => (path_and_query, ""),
    };
    let sig = hex::encode(mac(key, path, query, expires));
    let joiner = if query.is_empty() { "" } else { "&" };
    format!("{path}?{query}{joiner}exp={expires}&sig={sig}")
}

fn verify_with(key: &[u8], path: &str, query: Option<&str>, now: u64) -> Result<(), Refusal> {
    let (rest, expires, sig) = query.and_then(split).ok_or(Refusal::Malformed)?;
    let given = hex::decode(sig).map_err(|_| Refusal::Malformed)?;
    // The signature first: an altered expiry is an altered link, not an expired one.
    let expected = mac(key, path, rest, expires);
    if !crate::auth::constant_time_eq(&given, &expected) {
        return Err(Refusal::BadSignature);
    }
    if now >= expires {
        return Err(Refusal::Expired);
    }
    Ok(())
}

/// The query's parts: what was signed, the expiry and the signature, which must be its last
/// two parameters, in that order (a parameter added after them is an alteration).
fn split(query: &str) -> Option<(&str, u64, &str)> {
    let (before, sig) = query.rsplit_once("&sig=")?;
    let (rest, expires) = match before.rsplit_once("&exp=") {
        Some((rest, expires)) => (rest, expires),
        None => ("", before.strip_prefix("exp=")?),
    };
    if sig.contains('&') {
        return None;
    }
    Some((rest, expires.parse().ok()?, sig))
}

/// The MAC over the path, the query before the signature and the expiry, each on its own
/// line, so no part can be moved into another.
fn mac(key: &[u8], path: &str, query: &str, expires: u64) -> [u8; 32] {
    let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(key) else {
        // HMAC takes a key of any length, so this cannot happen; a zero MAC matches nothing
        // a caller could compute without the key either way.
        return [0; 32];
    };
    mac.update(format!("vaider-url\n{path}\n{query}\n{expires}").as_bytes());
    mac.finalize().into_bytes().into()
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &[u8] = b"0123456789abcdef0123456789abcdef";

    fn parts(url: &str) -> (&str, Option<&str>) {
        match url.split_once('?') {
            Some((path, query)) => (path, Some(query)),
            None => (url, None),
        }
    }

    #[test]
    fn a_signed_url_opens_until_it_expires() {
        let url = sign_with(KEY, "/api/interactions/a/media?which=expected", 1_020);
        assert!(url.starts_with("/api/interactions/a/media?which=expected&exp=1020&sig="));
        let (path, query) = parts(&url);
        assert_eq!(verify_with(KEY, path, query, 999), Ok(()));
        assert_eq!(verify_with(KEY, path, query, 1_020), Err(Refusal::Expired));
        let bare = sign_with(KEY, "/api/interactions/a/media", 1_020);
        assert!(bare.starts_with("/api/interactions/a/media?exp=1020&sig="));
        let (path, query) = parts(&bare);
        assert_eq!(verify_with(KEY, path, query, 999), Ok(()));
    }

    #[test]
    fn an_altered_url_is_refused() {
        let url = sign_with(KEY, "/api/interactions/a/media?which=expected", 1_020);
        let (path, query) = parts(&url);
        let query = query.unwrap();
        let refused = |path: &str, query: &str| verify_with(KEY, path, Some(query), 0);
        assert_eq!(
            refused("/api/interactions/b/media", query),
            Err(Refusal::BadSignature)
        );
        assert_eq!(
            refused(path, &query.replace("which=expected", "which=actual")),
            Err(Refusal::BadSignature)
        );
        assert_eq!(
            refused(path, &query.replace("exp=1020", "exp=9999999999")),
            Err(Refusal::BadSignature)
        );
        assert_eq!(
            refused(path, &format!("{query}&which=trace")),
            Err(Refusal::Malformed)
        );
        assert_eq!(refused(path, "which=expected"), Err(Refusal::Malformed));
        // Another key (another run of the server) signed it.
        assert_eq!(
            verify_with(b"another key", path, Some(query), 0),
            Err(Refusal::BadSignature)
        );
        let mut flipped = query.to_string();
        let last = flipped.pop().unwrap();
        flipped.push(if last == '0' { '1' } else { '0' });
        assert_eq!(refused(path, &flipped), Err(Refusal::BadSignature));
    }

    #[test]
    fn the_process_key_signs_and_verifies() {
        let url = sign("/api/interactions/x/media", MEDIA_TTL);
        let exp: u64 = url
            .split("exp=")
            .nth(1)
            .unwrap()
            .split('&')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(exp % STEP_SECS, 0);
        assert!(exp >= now_secs() + MEDIA_TTL.as_secs());
        let (path, query) = parts(&url);
        assert!(is_signed(query));
        assert_eq!(verify(path, query), Ok(()));
        assert!(!is_signed(Some("which=expected")));
        assert!(!is_signed(None));
    }
}
