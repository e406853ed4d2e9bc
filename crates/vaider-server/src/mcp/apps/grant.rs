//! One-time approval grants: what lets a click in the review view decide on a pending change
//! while the bearer token alone does not. `review_pending`'s result carries, in the view's
//! `_meta` only, one grant per change it lists: the project and the change, an expiry and a
//! random nonce, signed with a key made at start and kept in memory. The view's decide tool
//! takes a grant once; a second use, another change, an altered or expired grant, or a grant
//! from before a restart is refused. The model never sees a grant as long as the host keeps
//! results' `_meta` and app-only tools from it, as MCP Apps asks (docs/chat-views.md).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// How long a grant may be used after the view got it.
pub const TTL: Duration = Duration::from_secs(15 * 60);

/// Why a grant was refused; the message says what to do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("This decision carries no valid grant: only a click in Vaider's review view decides, and the model's own call never does.")]
    Invalid,
    #[error("This review view's grant expired: ask the agent to show the pending changes again (review_pending), or decide in `vaider ui` (#/review).")]
    Expired,
    #[error("This grant was already used: each click decides once. Ask the agent to show the pending changes again.")]
    Used,
    #[error("This grant is for another change.")]
    OtherChange,
}

/// What a grant lets decide.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Granted {
    pub project: PathBuf,
    pub change: String,
}

fn key() -> &'static [u8; 32] {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    KEY.get_or_init(rand::random)
}

/// The nonces used, with their expiry, so a grant decides once; pruned as they expire.
fn used() -> &'static Mutex<HashMap<String, u64>> {
    static USED: OnceLock<Mutex<HashMap<String, u64>>> = OnceLock::new();
    USED.get_or_init(Mutex::default)
}

/// A grant to decide on `change` in `project`, valid for [`TTL`].
pub fn issue(project: &Path, change: &str) -> String {
    issue_with(key(), project, change, now() + TTL.as_secs())
}

/// Takes the grant for `change`: the project it was issued for, once.
pub fn redeem(grant: &str, change: &str) -> Result<Granted, Refusal> {
    let (granted, nonce, expires) = open(key(), grant)?;
    if granted.change != change {
        return Err(Refusal::OtherChange);
    }
    let now = now();
    if now >= expires {
        return Err(Refusal::Expired);
    }
    let mut used = used().lock().map_err(|_| Refusal::Invalid)?;
    used.retain(|_, until| *until > now);
    if used.insert(nonce, expires).is_some() {
        return Err(Refusal::Used);
    }
    Ok(granted)
}

fn issue_with(key: &[u8], project: &Path, change: &str, expires: u64) -> String {
    let nonce = hex::encode(rand::random::<[u8; 16]>());
    let payload = format!("{}\n{change}\n{nonce}\n{expires}", project.display());
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    format!(
        "{}.{}",
        b64.encode(payload.as_bytes()),
        hex::encode(mac(key, &payload))
    )
}

/// The grant's contents if its signature holds: what it grants, its nonce and expiry.
fn open(key: &[u8], grant: &str) -> Result<(Granted, String, u64), Refusal> {
    let (payload, sig) = grant.split_once('.').ok_or(Refusal::Invalid)?;
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let payload = b64.decode(payload).map_err(|_| Refusal::Invalid)?;
    let payload = String::from_utf8(payload).map_err(|_| Refusal::Invalid)?;
    let given = hex::decode(sig).map_err(|_| Refusal::Invalid)?;
    if !crate::auth::constant_time_eq(&given, &mac(key, &payload)) {
        return Err(Refusal::Invalid);
    }
    let mut lines = payload.rsplitn(4, '\n');
    let expires = lines.next().and_then(|e| e.parse().ok());
    let nonce = lines.next();
    let change = lines.next();
    let project = lines.next();
    match (project, change, nonce, expires) {
        (Some(project), Some(change), Some(nonce), Some(expires)) => Ok((
            Granted {
                project: PathBuf::from(project),
                change: change.to_string(),
            },
            nonce.to_string(),
            expires,
        )),
        _ => Err(Refusal::Invalid),
    }
}

fn mac(key: &[u8], payload: &str) -> [u8; 32] {
    let Ok(mut mac) = <Hmac<Sha256> as KeyInit>::new_from_slice(key) else {
        return [0; 32];
    };
    mac.update(format!("vaider-grant\n{payload}").as_bytes());
    mac.finalize().into_bytes().into()
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_grant_decides_once_for_its_change() {
        let grant = issue(Path::new("/tmp/shop"), "c1");
        assert_eq!(redeem(&grant, "c2"), Err(Refusal::OtherChange));
        let granted = redeem(&grant, "c1").unwrap();
        assert_eq!(granted.project, PathBuf::from("/tmp/shop"));
        assert_eq!(redeem(&grant, "c1"), Err(Refusal::Used));
    }

    #[test]
    fn an_altered_expired_or_foreign_grant_is_refused() {
        let expired = issue_with(key(), Path::new("/p"), "c", now() - 1);
        assert_eq!(redeem(&expired, "c"), Err(Refusal::Expired));
        let foreign = issue_with(b"another run's key", Path::new("/p"), "c", now() + 60);
        assert_eq!(redeem(&foreign, "c"), Err(Refusal::Invalid));
        let grant = issue(Path::new("/p"), "c");
        let (payload, sig) = grant.split_once('.').unwrap();
        let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
        let text = String::from_utf8(b64.decode(payload).unwrap()).unwrap();
        let moved = b64.encode(text.replacen("/p", "/etc", 1));
        assert_eq!(
            redeem(&format!("{moved}.{sig}"), "c"),
            Err(Refusal::Invalid)
        );
        for junk in ["", "x", "a.b", "..", "Zm9v.zz"] {
            assert_eq!(redeem(junk, "c"), Err(Refusal::Invalid), "{junk}");
        }
    }
}
