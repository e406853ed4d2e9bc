//! Who may call the server, and as whom. The bearer token is for agents and the CLI. The web
//! UI never holds it: `vaider ui` (holding the token) or the tray app (in-process) mints a
//! one-time login code that lives [`LOGIN_CODE_TTL`], and the page trades the code for a UI
//! session, a random secret unrelated to the token that it sends in the
//! [`SESSION_HEADER`] on the UI's own routes. A session is kept in memory only and ends by
//! signing out, by [`SESSION_IDLE`] unused, by a token rotation (noticed on the next request)
//! or by a restart. A request's [`Caller`] says which of the two let it in.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant, SystemTime};

/// The header `vaider ui` sends the data folder's login key in, to have a login code minted.
pub const LOGIN_KEY_HEADER: &str = "x-vaider-login-key";
/// The header the UI's page sends its session in (never a cookie: browsers send cookies to
/// every port of 127.0.0.1, so another local server would receive it).
pub const SESSION_HEADER: &str = "x-vaider-session";
/// How long a login code may wait for its page.
pub const LOGIN_CODE_TTL: Duration = Duration::from_secs(60);
/// Wrong codes tried before every outstanding code is burnt: a code faces at most this many
/// guesses (of 2^122), and whoever runs `vaider ui` again gets a fresh one.
const MAX_WRONG_CODES: u32 = 10;
/// At most this many codes wait at once; the oldest goes first.
const MAX_CODES: usize = 16;

/// Who let a request in, set by the guard as a request extension. The bearer token alone
/// never stands for a person's decision; a UI session signed in through a login code (which
/// only `vaider ui` or the tray app hands to a browser) does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caller {
    /// `Authorization: Bearer <token>`: an agent, the CLI or a script.
    Token,
    /// A UI session that was signed in with a one-time login code.
    SignedInUi,
}

/// Why a login code was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("This login code is unknown, used already or expired (a code works once, for 60 seconds). Open the page again with `vaider ui` or from the tray menu.")]
pub struct CodeRefused;

/// How long a UI session lives without a request.
pub const SESSION_IDLE: Duration = Duration::from_secs(12 * 60 * 60);
/// At most this many live sessions (tabs, windows); the least recently used goes first.
const MAX_SESSIONS: usize = 64;

pub struct Auth {
    token: RwLock<Arc<str>>,
    /// The token file this server follows (absent when the token came from `VAIDER_TOKEN` or
    /// a test), with what it looked like when last read.
    file: Option<(PathBuf, Mutex<Option<Stamp>>)>,
    sessions: Mutex<Vec<Session>>,
    codes: Mutex<Codes>,
    /// The data folder's login key ([`vaider_core::secrets::ui_login_key`]): what a request
    /// for a login code must show besides the token. None: no code is minted over HTTP.
    login_key: Option<String>,
}

/// The login codes waiting for their page, and how many wrong ones were tried.
#[derive(Default)]
struct Codes {
    waiting: Vec<(String, Instant)>,
    wrong: u32,
}

/// What changes when the token file is rewritten (an atomic write is a new file).
type Stamp = (Option<SystemTime>, u64, u64);

struct Session {
    secret: String,
    last_used: Instant,
}

impl Auth {
    /// A token that never changes while the server runs.
    pub fn fixed(token: &str) -> Auth {
        Auth {
            token: RwLock::new(Arc::from(token)),
            file: None,
            sessions: Mutex::new(Vec::new()),
            codes: Mutex::new(Codes::default()),
            login_key: None,
        }
    }

    /// Login codes may be minted over HTTP for a caller that shows `key` too.
    pub fn with_login_key(mut self, key: Option<String>) -> Auth {
        self.login_key = key;
        self
    }

    /// Whether `given` is this server's login key.
    pub fn login_key_ok(&self, given: &str) -> bool {
        self.login_key
            .as_deref()
            .is_some_and(|key| constant_time_eq(given.trim().as_bytes(), key.as_bytes()))
    }

    /// `token`, as read from `file`: a rotation that rewrites the file replaces it and ends
    /// every UI session.
    pub fn following(token: &str, file: PathBuf) -> Auth {
        let stamp = stamp(&file);
        Auth {
            file: Some((file, Mutex::new(stamp))),
            ..Auth::fixed(token)
        }
    }

    /// The current token, re-read when its file changed.
    pub fn token(&self) -> Arc<str> {
        self.refresh();
        self.token
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    pub fn bearer_ok(&self, given: &str) -> bool {
        constant_time_eq(given.trim().as_bytes(), self.token().as_bytes())
    }

    /// A one-time login code for a browser page, valid [`LOGIN_CODE_TTL`]: what `vaider ui`
    /// and the tray put in the page's address instead of the token.
    pub fn mint_login_code(&self) -> String {
        let code = hex::encode(rand::random::<[u8; 16]>());
        let mut codes = self.codes();
        let now = Instant::now();
        codes
            .waiting
            .retain(|(_, made)| now.saturating_duration_since(*made) < LOGIN_CODE_TTL);
        if codes.waiting.len() >= MAX_CODES {
            codes.waiting.remove(0);
        }
        codes.waiting.push((code.clone(), now));
        codes.wrong = 0;
        code
    }

    /// Trades a login code for a new UI session's secret; the code is spent either way.
    pub fn sign_in_with_code(&self, code: &str) -> Result<String, CodeRefused> {
        self.refresh();
        self.take_code(code, Instant::now())?;
        Ok(self.mint_session())
    }

    fn take_code(&self, code: &str, now: Instant) -> Result<(), CodeRefused> {
        let mut codes = self.codes();
        codes
            .waiting
            .retain(|(_, made)| now.saturating_duration_since(*made) < LOGIN_CODE_TTL);
        let found = codes
            .waiting
            .iter()
            .position(|(waiting, _)| constant_time_eq(waiting.as_bytes(), code.trim().as_bytes()));
        match found {
            Some(i) => {
                codes.waiting.swap_remove(i);
                Ok(())
            }
            None => {
                codes.wrong += 1;
                if codes.wrong >= MAX_WRONG_CODES {
                    codes.waiting.clear();
                    codes.wrong = 0;
                    tracing::warn!(
                        "{MAX_WRONG_CODES} wrong login codes tried: every waiting code was burnt"
                    );
                }
                Err(CodeRefused)
            }
        }
    }

    fn codes(&self) -> std::sync::MutexGuard<'_, Codes> {
        self.codes.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The answer to a challenge sent to `/v1/health` on `port`: proves this server holds the
    /// token without revealing it. The port is in the message so that a program holding the
    /// port a client asked cannot pass the challenge on to a real Vaider on another port.
    pub fn proof(&self, port: u16, nonce: &str) -> String {
        proof(&self.token(), port, nonce)
    }

    /// A new session's secret: 256 random bits, nothing to do with the token.
    fn mint_session(&self) -> String {
        let secret = hex::encode(rand::random::<[u8; 32]>());
        let mut sessions = self.sessions();
        if sessions.len() >= MAX_SESSIONS {
            if let Some(oldest) = (0..sessions.len()).min_by_key(|&i| sessions[i].last_used) {
                sessions.swap_remove(oldest);
            }
        }
        sessions.push(Session {
            secret: secret.clone(),
            last_used: Instant::now(),
        });
        secret
    }

    /// Whether `secret` is a live session; using it keeps it alive.
    pub fn session_ok(&self, secret: &str) -> bool {
        self.refresh();
        self.session_ok_at(secret, Instant::now())
    }

    fn session_ok_at(&self, secret: &str, now: Instant) -> bool {
        let mut sessions = self.sessions();
        sessions.retain(|s| now.saturating_duration_since(s.last_used) < SESSION_IDLE);
        let found = sessions
            .iter_mut()
            .find(|s| constant_time_eq(s.secret.as_bytes(), secret.as_bytes()));
        match found {
            Some(session) => {
                session.last_used = now;
                true
            }
            None => false,
        }
    }

    /// Signs one session out; whether it was live.
    pub fn end_session(&self, secret: &str) -> bool {
        let mut sessions = self.sessions();
        let before = sessions.len();
        sessions.retain(|s| !constant_time_eq(s.secret.as_bytes(), secret.as_bytes()));
        sessions.len() < before
    }

    pub fn session_count(&self) -> usize {
        self.sessions().len()
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, Vec<Session>> {
        self.sessions.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Picks up a rotated token: a stat per request, a read only when the file changed. A
    /// new token ends every session, so a rotation signs every browser out.
    fn refresh(&self) {
        let Some((path, seen)) = &self.file else {
            return;
        };
        let now = stamp(path);
        let mut seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
        if *seen == now {
            return;
        }
        *seen = now;
        let Ok(text) = std::fs::read_to_string(path) else {
            return;
        };
        let text = text.trim();
        let mut token = self.token.write().unwrap_or_else(PoisonError::into_inner);
        if !text.is_empty() && **token != *text {
            *token = Arc::from(text);
            self.sessions().clear();
            self.codes().waiting.clear();
            tracing::info!("the token file changed: new token in use, every UI session ended");
        }
    }
}

fn stamp(path: &std::path::Path) -> Option<Stamp> {
    let meta = std::fs::metadata(path).ok()?;
    #[cfg(unix)]
    let inode = std::os::unix::fs::MetadataExt::ino(&meta);
    #[cfg(not(unix))]
    let inode = 0;
    Some((meta.modified().ok(), meta.len(), inode))
}

/// `HMAC-SHA256(token, "vaider-proof:{port}:{nonce}")` in hex: what a server holding `token`
/// answers to a challenge on `port`, and what a client holding it expects.
pub fn proof(token: &str, port: u16, nonce: &str) -> String {
    use hmac::{Hmac, KeyInit, Mac};
    let Ok(mut mac) = <Hmac<sha2::Sha256> as KeyInit>::new_from_slice(token.as_bytes()) else {
        // HMAC takes a key of any length; an empty answer proves nothing.
        return String::new();
    };
    mac.update(format!("vaider-proof:{port}:{nonce}").as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

/// Compares without an early exit, so response time does not reveal how much of a guess matched.
pub fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sessions_are_random_and_not_the_token() {
        let auth = Auth::fixed("vdr_token");
        let a = auth.mint_session();
        let b = auth.mint_session();
        assert_ne!(a, b);
        assert!(!a.contains("vdr_token") && a.len() == 64);
        assert!(auth.session_ok(&a) && auth.session_ok(&b));
        assert!(!auth.session_ok("vdr_token"));
        assert!(!auth.bearer_ok(&a));
    }

    #[test]
    fn sessions_end_when_idle_or_signed_out() {
        let auth = Auth::fixed("t");
        let a = auth.mint_session();
        let b = auth.mint_session();
        let now = Instant::now();
        assert!(auth.session_ok_at(&a, now + SESSION_IDLE - Duration::from_secs(1)));
        // `a` was just used; `b` was not used for longer than the idle limit.
        assert!(!auth.session_ok_at(&b, now + SESSION_IDLE + Duration::from_secs(1)));
        assert!(auth.end_session(&a));
        assert!(!auth.session_ok(&a));
    }

    #[test]
    fn tokens_compare_whole() {
        assert!(constant_time_eq(b"abc", b"abc"));
        assert!(!constant_time_eq(b"abc", b"abd"));
        assert!(!constant_time_eq(b"abc", b"abcd"));
    }

    #[test]
    fn sessions_are_capped() {
        let auth = Auth::fixed("t");
        let first = auth.mint_session();
        for _ in 0..MAX_SESSIONS {
            auth.mint_session();
        }
        assert_eq!(auth.session_count(), MAX_SESSIONS);
        assert!(!auth.session_ok(&first));
    }

    #[test]
    fn a_rewritten_token_file_replaces_the_token_and_ends_sessions() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "old").unwrap();
        let auth = Auth::following("old", file.clone());
        let session = auth.mint_session();
        let code = auth.mint_login_code();
        assert!(auth.bearer_ok("old") && auth.session_ok(&session));
        vaider_core::atomic_file::write(&file, b"new\n", vaider_core::atomic_file::Sync::ToDisk)
            .unwrap();
        assert!(!auth.bearer_ok("old"));
        assert!(auth.bearer_ok("new"));
        assert!(!auth.session_ok(&session));
        assert_eq!(auth.sign_in_with_code(&code), Err(CodeRefused));
    }

    #[test]
    fn a_login_code_works_once() {
        let auth = Auth::fixed("vdr_token");
        let code = auth.mint_login_code();
        assert_eq!(code.len(), 32);
        assert!(!code.contains("vdr_token"));
        let session = auth.sign_in_with_code(&code).unwrap();
        assert!(auth.session_ok(&session));
        assert_eq!(auth.sign_in_with_code(&code), Err(CodeRefused));
        // The token is not a code, and a session is not a code.
        assert_eq!(auth.sign_in_with_code("vdr_token"), Err(CodeRefused));
        assert_eq!(auth.sign_in_with_code(&session), Err(CodeRefused));
    }

    #[test]
    fn a_login_code_expires() {
        let auth = Auth::fixed("t");
        let code = auth.mint_login_code();
        let later = Instant::now() + LOGIN_CODE_TTL + Duration::from_secs(1);
        assert_eq!(auth.take_code(&code, later), Err(CodeRefused));
        let fresh = auth.mint_login_code();
        let soon = Instant::now() + LOGIN_CODE_TTL - Duration::from_secs(5);
        assert_eq!(auth.take_code(&fresh, soon), Ok(()));
    }

    #[test]
    fn guessing_burns_every_waiting_code() {
        let auth = Auth::fixed("t");
        let code = auth.mint_login_code();
        for guess in 0..MAX_WRONG_CODES {
            assert_eq!(
                auth.sign_in_with_code(&format!("{guess:032x}")),
                Err(CodeRefused)
            );
        }
        // The right code, after too many wrong ones, is refused too.
        assert_eq!(auth.sign_in_with_code(&code), Err(CodeRefused));
        let next = auth.mint_login_code();
        assert!(auth.sign_in_with_code(&next).is_ok());
    }

    #[test]
    fn the_proof_needs_the_token_and_names_the_port() {
        let auth = Auth::fixed("vdr_token");
        let answer = auth.proof(3456, "nonce");
        assert_eq!(answer, proof("vdr_token", 3456, "nonce"));
        assert_eq!(answer.len(), 64);
        assert_ne!(answer, proof("vdr_other", 3456, "nonce"));
        assert_ne!(answer, proof("vdr_token", 3457, "nonce"));
        assert_ne!(answer, proof("vdr_token", 3456, "nonce2"));
        assert!(!answer.contains("vdr_token"));
    }
}
