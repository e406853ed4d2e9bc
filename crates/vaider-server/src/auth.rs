//! Who may call the server: the bearer token (agents, the CLI, the UI page's own fetches) and
//! the UI's sessions (the cookie that `<video>` and `EventSource` send, since they cannot send a
//! header). A session is a random secret minted by `POST /api/session`, unrelated to the token
//! (a page on another local port that receives the cookie learns nothing it could send as a
//! bearer), kept in memory only, and ended by signing out, by [`SESSION_IDLE`] unused, by a
//! token rotation (`vaider token --rotate`, noticed on the next request) or by a restart.

use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::{Duration, Instant, SystemTime};

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
        }
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

    /// A new session's secret: 244 random bits, nothing to do with the token.
    pub fn mint_session(&self) -> String {
        let secret = format!(
            "{}{}",
            uuid::Uuid::new_v4().simple(),
            uuid::Uuid::new_v4().simple()
        );
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
        assert!(auth.bearer_ok("old") && auth.session_ok(&session));
        vaider_core::atomic_file::write(&file, b"new\n", vaider_core::atomic_file::Sync::ToDisk)
            .unwrap();
        assert!(!auth.bearer_ok("old"));
        assert!(auth.bearer_ok("new"));
        assert!(!auth.session_ok(&session));
    }
}
