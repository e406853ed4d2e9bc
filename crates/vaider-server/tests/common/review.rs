//! The review loop's setup the server's tests share: a pending change made by pixels alone, and
//! where its baseline goes.

use std::path::{Path, PathBuf};

use vaider_test_support::pictures::solid_png;
use vaider_visual::review::{self, BaselineKey, Baselines, CheckRequest};

/// A 40x30 picture of one colour, as PNG bytes.
pub fn png(rgb: [u8; 3]) -> Vec<u8> {
    solid_png(40, 30, rgb)
}

/// A capture of `name` with no baseline yet: a pending `new` change, by pixels alone.
pub async fn pending_change(project: &Path, name: &str) -> review::PendingChange {
    let bytes = png([20, 120, 220]);
    let request = CheckRequest {
        project,
        key: BaselineKey::new(name, "40x30").unwrap(),
        png: &bytes,
        ignored: Vec::new(),
        proposed_ignore: Vec::new(),
        expected_changes: Vec::new(),
        ask_model: false,
        door: vaider_core::Door::Cli,
        model: None,
    };
    review::check_capture(None, request)
        .await
        .unwrap()
        .change
        .expect("a new capture is a pending change")
}

/// Where the baseline of `name` is written.
pub fn baseline(project: &Path, name: &str) -> PathBuf {
    Baselines::in_project(project).png_path(&BaselineKey::new(name, "40x30").unwrap())
}
