//! A process's claim on the history rows it runs: a lock file in the data folder that the
//! process holds for as long as it lives. The OS drops the lock when the process dies, even on
//! SIGKILL, so another Vaider sharing the history can tell a call that is still running from
//! one a dead process left behind, without trusting pids that the OS may have reused.

use std::fs::{File, TryLockError};
use std::path::{Path, PathBuf};

use vaider_base::error::{Result, VaiderError};

pub struct Lease {
    owner: String,
    path: PathBuf,
    /// Holds the lock; dropped (and so released) with the lease.
    _file: File,
}

impl Lease {
    /// Takes a new lease for this process in `data_dir/owners/`.
    pub fn take(data_dir: &Path) -> Result<Lease> {
        let dir = owners_dir(data_dir);
        std::fs::create_dir_all(&dir).map_err(|e| {
            VaiderError::internal(format!("create the folder {}", dir.display()), e)
        })?;
        let owner = format!("{}-{}", std::process::id(), uuid::Uuid::new_v4().simple());
        let path = dir.join(format!("{owner}.lock"));
        let file = File::create(&path)
            .map_err(|e| VaiderError::internal(format!("create {}", path.display()), e))?;
        file.try_lock()
            .map_err(|e| VaiderError::internal(format!("lock {}", path.display()), e))?;
        Ok(Lease {
            owner,
            path,
            _file: file,
        })
    }

    /// The id written into each history row this process starts.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// Whether the process that took the lease `owner` still lives. An owner that is not a
    /// lease's id, or whose lock file is gone, is dead; when the OS cannot say, it is taken
    /// to be alive, so that a live call is never closed by mistake.
    pub fn is_alive(data_dir: &Path, owner: &str) -> bool {
        let Some(path) = lock_path(data_dir, owner) else {
            return false;
        };
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return false,
            Err(_) => return true,
        };
        match file.try_lock_shared() {
            Ok(()) => false,
            Err(TryLockError::WouldBlock) => true,
            Err(TryLockError::Error(_)) => true,
        }
    }

    /// Removes the lock file a dead owner left.
    pub fn forget(data_dir: &Path, owner: &str) {
        if let Some(path) = lock_path(data_dir, owner) {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        // A clean exit leaves nothing behind; after a crash the next start removes the file.
        let _ = std::fs::remove_file(&self.path);
    }
}

fn owners_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("owners")
}

/// The lock file of `owner`, if it has the shape of a lease id (so a row's text can never
/// name a path outside the owners folder).
fn lock_path(data_dir: &Path, owner: &str) -> Option<PathBuf> {
    let well_formed = !owner.is_empty()
        && owner.len() <= 64
        && owner.chars().all(|c| c.is_ascii_alphanumeric() || c == '-');
    well_formed.then(|| owners_dir(data_dir).join(format!("{owner}.lock")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_lease_is_alive_and_a_dropped_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let lease = Lease::take(dir.path()).unwrap();
        let owner = lease.owner().to_string();
        assert!(Lease::is_alive(dir.path(), &owner));
        drop(lease);
        assert!(!Lease::is_alive(dir.path(), &owner));
    }

    #[test]
    fn a_lock_file_left_by_a_dead_process_is_not_alive() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(owners_dir(dir.path())).unwrap();
        // What a killed process leaves: the file, but no lock on it.
        std::fs::write(owners_dir(dir.path()).join("123-abc.lock"), b"").unwrap();
        assert!(!Lease::is_alive(dir.path(), "123-abc"));
        Lease::forget(dir.path(), "123-abc");
        assert!(!owners_dir(dir.path()).join("123-abc.lock").exists());
    }

    #[test]
    fn an_owner_that_is_not_a_lease_id_names_no_file() {
        let dir = tempfile::tempdir().unwrap();
        assert!(lock_path(dir.path(), "../../etc/passwd").is_none());
        assert!(!Lease::is_alive(dir.path(), "../x"));
    }
}
