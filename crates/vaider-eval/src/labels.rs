//! The set's labels as `scripts/eval-set.sh` writes them: `manifest.json` lists the items,
//! each item's JSON gives its media, defect classes (none for a control), the expectations an
//! agent would state with their true verdicts, and where the defect is.

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

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Recording,
    Pair,
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
    pub classes: Vec<String>,
    pub expectations: Vec<Expectation>,
    /// A recording's length in seconds.
    #[serde(default)]
    pub duration_s: Option<f64>,
    #[serde(default, rename = "where")]
    pub place: Option<Where>,
    #[serde(skip)]
    pub dir: PathBuf,
}

impl Item {
    pub fn is_control(&self) -> bool {
        self.classes.is_empty()
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
    let mut kept = match only {
        None => items,
        Some(class) => {
            if !CLASSES.contains(&class) {
                bail!(
                    "--only {class:?}: not a class; use one of {}",
                    CLASSES.join(", ")
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

/// Recordings and pairs taken in turn, so a small `--limit` has both kinds.
fn interleave(items: Vec<Item>) -> Vec<Item> {
    let (mut recordings, mut pairs): (Vec<Item>, Vec<Item>) =
        items.into_iter().partition(|i| i.kind == Kind::Recording);
    recordings.reverse();
    pairs.reverse();
    let mut out = Vec::new();
    while !recordings.is_empty() || !pairs.is_empty() {
        out.extend(recordings.pop());
        out.extend(pairs.pop());
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
