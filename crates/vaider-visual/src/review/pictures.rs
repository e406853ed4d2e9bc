//! Which files a pending change may show, the one rule for every door (the review page's
//! picture route, `review_pending`'s paths): the change's own folder, or the baseline Vaider
//! keeps for it (a Playwright snapshot inside the project). A path written in change.json that
//! points anywhere else is never shown, and a link that leaves these folders is not followed.

use std::path::{Path, PathBuf};

use super::{BaselineKey, Baselines, ChangeSource, Changes, PendingChange};

/// The pictures a change can have, by the names the doors use.
pub const PICTURES: &[&str] = &[
    "baseline",
    "actual",
    "diff",
    "annotated",
    "heatmap",
    "closeups",
];

/// The file `which` names for `change`, if it has one where the review loop keeps pictures.
pub fn picture(project: &Path, change: &PendingChange, which: &str) -> Option<PathBuf> {
    let own = Changes::in_project(project)
        .change_dir(&change.id)
        .canonicalize()
        .ok()?;
    let inside = |path: &Path, dir: &Path| {
        path.canonicalize()
            .ok()
            .filter(|p| p.starts_with(dir) && p.extension().is_some_and(|e| e == "png"))
    };
    match which {
        "baseline" => match &change.source {
            ChangeSource::Vaider => {
                let key = BaselineKey::new(&change.name, &change.variant).ok()?;
                let path = Baselines::in_project(project).png_path(&key);
                path.is_file().then_some(path)
            }
            ChangeSource::Playwright { .. } => {
                inside(&change.baseline, &project.canonicalize().ok()?)
            }
        },
        "actual" => inside(&change.actual, &own),
        "diff" => inside(change.diff_image.as_deref()?, &own),
        "annotated" => inside(change.annotated.as_deref()?, &own),
        "heatmap" => inside(change.heat_map.as_deref()?, &own),
        "closeups" => inside(change.close_ups.as_deref()?, &own),
        _ => None,
    }
}
