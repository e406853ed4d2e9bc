//! The cache: a repeated question about the same bytes is answered from the history at no
//! cost. A file's sha256 is remembered by its path, size and modification time, so a file seen
//! before is not read again; a new one is hashed beside its upload (see `ask`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::engine::Vaider;
use crate::error::{Result, VaiderError};
use crate::media::MediaInfo;
use crate::prompts;

/// The sha256 of files seen before, by path, size and modification time; shared with the
/// hashing thread.
pub type Fingerprints = Arc<Mutex<HashMap<(PathBuf, u64, SystemTime), String>>>;

impl Vaider {
    /// The sha256 of a file seen before (same path, size and modification time), without
    /// reading it.
    pub(super) fn known_sha256(&self, path: &Path) -> Option<String> {
        let fingerprint = fingerprint(path).ok()?;
        self.fingerprints.lock().ok()?.get(&fingerprint).cloned()
    }

    /// The media's hashes when they cost next to nothing: files seen before, and new files
    /// small enough to hash in a few milliseconds (so a known file is never sent). None when
    /// a large new file must be hashed later ([`Vaider::hash_after`]).
    pub(super) async fn hashes_now(
        &self,
        media: impl Iterator<Item = &(PathBuf, MediaInfo)>,
    ) -> Option<Vec<String>> {
        let mut shas = Vec::new();
        for (path, info) in media {
            match self.known_sha256(path) {
                Some(sha) => shas.push(sha),
                None if info.size_bytes <= HASH_AT_ONCE_BYTES => {
                    // At normal priority: the call waits for this one.
                    let (path, memo) = (path.clone(), self.fingerprints.clone());
                    let hashed =
                        tokio::task::spawn_blocking(move || remembered_sha256(&path, &memo));
                    shas.push(hashed.await.ok()?.ok()?);
                }
                None => return None,
            }
        }
        Some(shas)
    }

    /// Hashes the files once `start` is notified (their upload is done), on a thread of their
    /// own at the lowest CPU priority. The hash only serves the cache: run beside a large
    /// upload on two cores it made the upload 1.3x slower, so it waits for the upload and
    /// then runs while the model works.
    pub(super) fn hash_after(
        &self,
        start: Arc<tokio::sync::Notify>,
        files: Vec<PathBuf>,
    ) -> tokio::sync::oneshot::Receiver<Result<Vec<String>>> {
        let (answer, hashed) = tokio::sync::oneshot::channel();
        let memo = self.fingerprints.clone();
        tokio::spawn(async move {
            start.notified().await;
            if let Ok(shas) = hash_on_own_thread(files, memo).await {
                let _ = answer.send(shas);
            }
        });
        hashed
    }
}

/// New files smaller than this are hashed before anything is sent (16 MiB: about 10 ms).
const HASH_AT_ONCE_BYTES: u64 = 16 * 1024 * 1024;

fn hash_on_own_thread(
    files: Vec<PathBuf>,
    memo: Fingerprints,
) -> tokio::sync::oneshot::Receiver<Result<Vec<String>>> {
    let (answer, hashed) = tokio::sync::oneshot::channel();
    let started = std::thread::Builder::new()
        .name("vaider-cache-hash".into())
        .spawn(move || {
            lower_this_threads_priority();
            let _ = answer.send(files.iter().map(|f| remembered_sha256(f, &memo)).collect());
        });
    if let Err(e) = started {
        tracing::warn!("could not start the hashing thread: {e}");
    }
    hashed
}

fn remembered_sha256(path: &Path, memo: &Fingerprints) -> Result<String> {
    let fingerprint = fingerprint(path)?;
    if let Some(sha) = memo.lock().ok().and_then(|m| m.get(&fingerprint).cloned()) {
        return Ok(sha);
    }
    let sha = sha256_file(path)?;
    if let Ok(mut memo) = memo.lock() {
        memo.insert(fingerprint, sha.clone());
    }
    Ok(sha)
}

/// Linux keeps a nice value per thread, so this lowers only the hashing thread.
#[cfg(target_os = "linux")]
fn lower_this_threads_priority() {
    // SAFETY: setpriority has no memory effects; 0 names the calling thread.
    unsafe {
        libc::setpriority(libc::PRIO_PROCESS, 0, 19);
    }
}

#[cfg(not(target_os = "linux"))]
fn lower_this_threads_priority() {}

/// What a call's cache key is made of besides the media's hashes, owned so that a hash
/// finished after the answer can still be recorded.
#[derive(Debug, Clone)]
pub(super) struct KeyParts {
    pub tool: &'static str,
    pub sampling: Option<&'static str>,
    /// A stretch watched closely (`Stretch::key`).
    pub stretch: Option<String>,
    pub provider: String,
    pub model: String,
    pub system: String,
    pub user: String,
}

impl KeyParts {
    pub fn key(&self, shas: &[String]) -> String {
        let mut parts = vec![
            shas.join("+"),
            self.tool.to_string(),
            self.provider.clone(),
            self.model.clone(),
            self.system.clone(),
            self.user.clone(),
        ];
        parts.extend(self.sampling.map(str::to_string));
        parts.extend(self.stretch.clone());
        key(&parts.iter().map(String::as_str).collect::<Vec<_>>())
    }
}

/// The cache key of a call's parts (see `Call::cache_key`), under the prompts' version.
pub(super) fn key(parts: &[&str]) -> String {
    let mut hasher = Sha256::new();
    hasher.update(prompts::PROMPT_VERSION.to_le_bytes());
    for part in parts {
        hasher.update(part.as_bytes());
        hasher.update([0u8]);
    }
    hex::encode(hasher.finalize())
}

/// What identifies a file's bytes without reading them: path, size and modification time.
fn fingerprint(path: &Path) -> Result<(PathBuf, u64, SystemTime)> {
    let meta = std::fs::metadata(path)
        .map_err(|e| VaiderError::internal(format!("read {}", path.display()), e))?;
    Ok((
        path.to_path_buf(),
        meta.len(),
        meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
    ))
}

pub fn sha256_file(path: &Path) -> Result<String> {
    use std::io::Read;
    let mut file = std::fs::File::open(path)
        .map_err(|e| VaiderError::internal(format!("open {}", path.display()), e))?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = file
            .read(&mut buffer)
            .map_err(|e| VaiderError::internal(format!("read {}", path.display()), e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cache_key_changes_with_each_input() {
        let base = key(&["sha", "gemini", "m", "p"]);
        assert_ne!(base, key(&["sha2", "gemini", "m", "p"]));
        assert_ne!(base, key(&["sha", "openai", "m", "p"]));
        assert_ne!(base, key(&["sha", "gemini", "m", "p2"]));
        assert_eq!(base, key(&["sha", "gemini", "m", "p"]));
    }
}
