//! The cache: a repeated question about the same bytes is answered from the history at no
//! cost. A file's sha256 is remembered by its path, size and modification time, so a file seen
//! before is not read again; a new one is hashed beside its upload (see `ask`).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use crate::engine::Vaider;
use crate::error::{Result, VaiderError};
use crate::prompts;

impl Vaider {
    /// The sha256 of a file seen before (same path, size and modification time), without
    /// reading it.
    pub(super) fn known_sha256(&self, path: &Path) -> Option<String> {
        let fingerprint = fingerprint(path).ok()?;
        self.fingerprints.lock().ok()?.get(&fingerprint).cloned()
    }

    pub(super) async fn media_sha256(&self, path: &Path) -> Result<String> {
        if let Some(sha) = self.known_sha256(path) {
            return Ok(sha);
        }
        let fingerprint = fingerprint(path)?;
        let owned = path.to_path_buf();
        let sha = tokio::task::spawn_blocking(move || sha256_file(&owned))
            .await
            .map_err(|e| VaiderError::internal("hash the file", e))??;
        if let Ok(mut memo) = self.fingerprints.lock() {
            memo.insert(fingerprint, sha.clone());
        }
        Ok(sha)
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
