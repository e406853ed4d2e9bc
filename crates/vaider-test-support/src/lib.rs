//! What Vaider's tests share across crates, as a dev-dependency: the tests of one crate use
//! these instead of including another crate's test files by path. Each module is one fixture
//! of the repository's `tests/` folder.

pub mod animations;
pub mod loopback;
pub mod pictures;
pub mod pixelmatch;
pub mod playwright;
pub mod random;
pub mod shop;

use std::path::PathBuf;

/// The repository's root (this crate lives in `crates/vaider-test-support`).
pub fn repo_root() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../.."))
}
