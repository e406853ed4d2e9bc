//! The set's labels as `scripts/eval-set.sh` writes them: `manifest.json` lists the items,
//! each item's JSON gives its media, defect classes (none for a control), the expectations an
//! agent would state with their true verdicts, and where the defect is. A failing run's labels
//! add its trace, the step that failed, the first wrong moment and the cause; a flaky pair's,
//! both attempts' files, the step where they parted and what differed.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};

/// The defect classes of the set, as the labels and the eval prompt name them.
pub const CLASSES: &[&str] = &[
    "text-overflow",
    "overlap",
    "wrong-text",
    "missing-extra-element",
    "wrong-colour-state",
    "layout-shift",
    "flash-error-toast",
    "endless-spinner",
    "wrong-page",
    "unmentioned-change",
];

/// The kinds `--only` also takes, for the failing runs and the flaky pairs.
pub const KIND_NAMES: &[(&str, Kind)] =
    &[("failing-run", Kind::Failure), ("flaky-pair", Kind::Flaky)];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Recording,
    Pair,
    /// A Playwright test that failed at a known step: its video and trace.
    Failure,
    /// A test that failed on its first attempt and passed on retry: both attempts' files.
    Flaky,
}

impl Kind {
    /// A recording or a pair: the items scored for defects found.
    pub fn is_defect_item(self) -> bool {
        matches!(self, Kind::Recording | Kind::Pair)
    }
}

/// A step of a test, as Vaider's timeline numbers them (1-based, in start order, the test's
/// own steps only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRef {
    pub number: u64,
    pub title: String,
}

/// The first moment a failing run's screen went wrong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FirstWrong {
    /// Seconds on the video's clock.
    pub at_s: f64,
    /// The outermost step running then.
    #[serde(default)]
    pub step: Option<StepRef>,
    /// Every step running then (a `test.step` block and the action inside it): naming any
    /// of them is right.
    #[serde(default)]
    pub running: Vec<StepRef>,
}

/// What a failing run's labels say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FailureLabel {
    /// The injected defect, as the recordings' classes name it.
    pub defect: String,
    /// The innermost step that failed.
    pub failing_step: StepRef,
    pub first_wrong: FirstWrong,
    /// The cause, in a sentence.
    pub cause: String,
}

/// One attempt of a flaky pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttemptLabel {
    pub number: u32,
    pub status: String,
    pub video: String,
    pub trace: String,
    #[serde(default)]
    pub error: Option<String>,
}

/// What a flaky pair's labels say.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlakyLabel {
    /// The failed attempt's failing step: where the attempts parted.
    pub parted_at: StepRef,
    /// What differed, in a sentence.
    pub difference: String,
    /// `timing`, `console`, `network` or `screen`.
    pub kind: String,
    /// For a `screen` difference: the words that name it (any of them).
    #[serde(default)]
    pub words: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Truth {
    Met,
    NotMet,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Expectation {
    pub text: String,
    pub truth: Truth,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimeRange {
    pub start_s: f64,
    pub end_s: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Box2 {
    pub x: i64,
    pub y: i64,
    pub width: i64,
    pub height: i64,
}

impl Box2 {
    pub fn intersects(&self, other: &Box2) -> bool {
        self.x < other.x + other.width
            && other.x < self.x + self.width
            && self.y < other.y + other.height
            && other.y < self.y + self.height
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Where {
    #[serde(default)]
    pub time: Option<TimeRange>,
    #[serde(default)]
    pub region: Option<Box2>,
}

/// One labelled item; `dir` is the folder its media are in (not in the JSON).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Item {
    pub id: String,
    pub kind: Kind,
    #[serde(default)]
    pub media: Option<String>,
    #[serde(default)]
    pub before: Option<String>,
    #[serde(default)]
    pub after: Option<String>,
    #[serde(default)]
    pub classes: Vec<String>,
    #[serde(default)]
    pub expectations: Vec<Expectation>,
    /// A failing run's trace.
    #[serde(default)]
    pub trace: Option<String>,
    /// A failing run's or flaky pair's test title.
    #[serde(default)]
    pub test: Option<String>,
    /// A failing run's Playwright error.
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub failure: Option<FailureLabel>,
    #[serde(default)]
    pub attempts: Vec<AttemptLabel>,
    #[serde(default)]
    pub flaky: Option<FlakyLabel>,
    /// A recording's length in seconds.
    #[serde(default)]
    pub duration_s: Option<f64>,
    #[serde(default, rename = "where")]
    pub place: Option<Where>,
    #[serde(skip)]
    pub dir: PathBuf,
}

impl Item {
    /// A recording or pair with no defect (failing runs and flaky pairs are no controls).
    pub fn is_control(&self) -> bool {
        self.kind.is_defect_item() && self.classes.is_empty()
    }

    /// A media file of the item, by its name in the labels.
    pub fn path(&self, name: &Option<String>) -> Result<PathBuf> {
        match name {
            Some(name) => Ok(self.dir.join(name)),
            None => bail!("item {} names no media", self.id),
        }
    }
}

#[derive(Deserialize)]
struct Manifest {
    items: Vec<String>,
}

/// The set's items in the manifest's order.
/// The labelled set used when none is named: `eval/set` in the current folder (a checkout of
/// the repository), else the one installed with Vaider, `<prefix>/share/vaider/eval/set` beside
/// `<prefix>/bin/vaider` (`/usr/share/vaider/eval/set` from the .deb and .rpm, `share/…` in the
/// release tarball). The boolean says whether it is the installed one.
pub fn default_set() -> Result<(PathBuf, bool)> {
    let here = PathBuf::from("eval/set");
    if here.join("manifest.json").is_file() {
        return Ok((here, false));
    }
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .unwrap_or_default();
    let installed = installed_set(&exe);
    match installed {
        Some(set) if set.join("manifest.json").is_file() => Ok((set, true)),
        _ => bail!(
            "no labelled set here (eval/set) and none installed beside {}: run `vaider eval` in a \
             checkout of the repository, install a package (it ships the set), or name one with --set",
            exe.display()
        ),
    }
}

/// `<prefix>/bin/vaider` → `<prefix>/share/vaider/eval/set`.
fn installed_set(exe: &Path) -> Option<PathBuf> {
    let prefix = exe.parent()?.parent()?;
    Some(prefix.join("share/vaider/eval/set"))
}

pub fn load(set: &Path) -> Result<Vec<Item>> {
    // Absolute, so the media resolve wherever the tools run (the compare's work folder).
    let set = &std::path::absolute(set).unwrap_or_else(|_| set.to_path_buf());
    let manifest = set.join("manifest.json");
    let text = std::fs::read_to_string(&manifest).with_context(|| {
        format!(
            "cannot read {}: make the set with `bash scripts/eval-set.sh` or name it with --set",
            manifest.display()
        )
    })?;
    let manifest: Manifest =
        serde_json::from_str(&text).with_context(|| format!("{}", manifest.display()))?;
    manifest
        .items
        .iter()
        .map(|relative| {
            let path = set.join(relative);
            let text = std::fs::read_to_string(&path)
                .with_context(|| format!("cannot read {}", path.display()))?;
            let mut item: Item =
                serde_json::from_str(&text).with_context(|| format!("{}", path.display()))?;
            item.dir = path.parent().unwrap_or(set).to_path_buf();
            Ok(item)
        })
        .collect()
}

/// The items `--only CLASS` and `--limit N` keep. `--only` keeps the class's items and, so
/// precision still means something, as many controls of the same kinds.
pub fn select(items: Vec<Item>, only: Option<&str>, limit: Option<usize>) -> Result<Vec<Item>> {
    let kind = only.and_then(|o| KIND_NAMES.iter().find(|(name, _)| *name == o));
    let mut kept = match only {
        None => items,
        Some(_) if kind.is_some() => {
            let kind = kind.map(|(_, k)| *k);
            items.into_iter().filter(|i| Some(i.kind) == kind).collect()
        }
        Some(class) => {
            if !CLASSES.contains(&class) {
                bail!(
                    "--only {class:?}: not a class; use one of {}, or {}",
                    CLASSES.join(", "),
                    KIND_NAMES
                        .iter()
                        .map(|(n, _)| *n)
                        .collect::<Vec<_>>()
                        .join(" or ")
                );
            }
            let with: Vec<Item> = items
                .iter()
                .filter(|i| i.classes.iter().any(|c| c == class))
                .cloned()
                .collect();
            let kinds: Vec<Kind> = with.iter().map(|i| i.kind).collect();
            let controls = items
                .into_iter()
                .filter(|i| i.is_control() && kinds.contains(&i.kind))
                .take(with.len());
            with.into_iter().chain(controls).collect()
        }
    };
    if let Some(limit) = limit {
        kept = interleave(kept);
        kept.truncate(limit);
    }
    Ok(kept)
}

/// The kinds taken in turn (a recording, a pair, a failing run, a flaky pair, ...), so a
/// small `--limit` has each kind.
fn interleave(items: Vec<Item>) -> Vec<Item> {
    let kinds = [Kind::Recording, Kind::Pair, Kind::Failure, Kind::Flaky];
    let mut queues: Vec<std::collections::VecDeque<Item>> = kinds
        .iter()
        .map(|k| items.iter().filter(|i| i.kind == *k).cloned().collect())
        .collect();
    let mut out = Vec::new();
    while queues.iter().any(|q| !q.is_empty()) {
        out.extend(queues.iter_mut().filter_map(|q| q.pop_front()));
    }
    out
}

#[cfg(test)]
mod installed_tests {
    use super::*;

    #[test]
    fn the_installed_set_lies_under_the_binarys_prefix() {
        assert_eq!(
            installed_set(Path::new("/usr/bin/vaider")),
            Some(PathBuf::from("/usr/share/vaider/eval/set"))
        );
        assert_eq!(
            installed_set(Path::new("/opt/vaider-0.1.0/bin/vaider")),
            Some(PathBuf::from("/opt/vaider-0.1.0/share/vaider/eval/set"))
        );
    }
}
