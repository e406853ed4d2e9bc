//! The devices a web page can be captured as, by the names Playwright gives them ("iPhone 13",
//! "Pixel 7", "Desktop Chrome"): the descriptors of the project's own installed Playwright
//! when it has one (its `deviceDescriptorsSource.json`, or the `devices` that newer versions
//! bundle, asked of Node), else the copy of Playwright 1.65's list kept here (`devices.json`,
//! from playwright-core, Apache-2.0, Microsoft Corporation). A name not in the list is refused
//! with the closest names.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;
use vaider_browser::{Device, Viewport};

/// Playwright 1.65's descriptors, for a project without Playwright of its own.
const BUILT_IN: &str = include_str!("devices.json");

/// One of Playwright's device descriptors (the fields a capture uses).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Descriptor {
    user_agent: String,
    viewport: Size,
    device_scale_factor: f64,
    is_mobile: bool,
    has_touch: bool,
}

#[derive(Debug, Clone, Copy, Deserialize)]
struct Size {
    width: u32,
    height: u32,
}

/// The device `name` names, from the descriptors of the Playwright installed for `project`
/// (when there is one) or Vaider's copy; an unknown name is an error listing close ones.
pub async fn find_device(name: &str, project: Option<&Path>) -> Result<Device, String> {
    let installed = match project.and_then(installed_core) {
        Some(core) => installed_descriptors(&core).await,
        None => None,
    };
    let list = match installed {
        Some(list) => list,
        None => serde_json::from_str(BUILT_IN).map_err(|e| format!("Vaider's device list: {e}"))?,
    };
    pick(name, &list)
}

fn pick(name: &str, list: &BTreeMap<String, Descriptor>) -> Result<Device, String> {
    let wanted = name.trim();
    let found = list.get_key_value(wanted).or_else(|| {
        list.iter()
            .find(|(known, _)| known.eq_ignore_ascii_case(wanted))
    });
    let Some((known, d)) = found else {
        return Err(format!(
            "no device named {wanted:?} in Playwright's list; the closest: {}",
            close_names(wanted, list.keys()).join(", ")
        ));
    };
    let usable = d.device_scale_factor.is_finite() && d.device_scale_factor > 0.0;
    if !usable || d.viewport.width == 0 || d.viewport.height == 0 {
        return Err(format!(
            "the device {known:?} has no usable viewport or scale"
        ));
    }
    Ok(Device {
        name: known.clone(),
        viewport: Viewport {
            width: d.viewport.width,
            height: d.viewport.height,
        },
        scale: d.device_scale_factor,
        mobile: d.is_mobile,
        touch: d.has_touch,
        user_agent: d.user_agent.clone(),
    })
}

/// Up to five known names nearest to `wanted`: those containing it (or it them) first, then
/// by edit distance, case aside.
fn close_names<'a>(wanted: &str, known: impl Iterator<Item = &'a String>) -> Vec<String> {
    let wanted = wanted.to_lowercase();
    let mut scored: Vec<(bool, usize, &String)> = known
        .map(|name| {
            let lower = name.to_lowercase();
            let contains =
                lower.contains(&wanted) || (!wanted.is_empty() && wanted.contains(&lower));
            (!contains, edit_distance(&wanted, &lower), name)
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(5)
        .map(|(_, _, n)| n.clone())
        .collect()
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut previous = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (previous + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(here + 1);
            previous = here;
        }
    }
    row[b.len()]
}

/// The project's `node_modules/playwright-core`, in its folder or a parent up to the
/// repository's root (a workspace hoists it).
fn installed_core(project: &Path) -> Option<PathBuf> {
    for dir in project.ancestors() {
        let core = dir.join("node_modules/playwright-core");
        if core.join("package.json").is_file() {
            return Some(core);
        }
        if dir.join(".git").exists() {
            break;
        }
    }
    None
}

/// The installed Playwright's descriptors: its JSON file where the version ships one, else its
/// `devices` export asked of Node. None when neither answers.
async fn installed_descriptors(core: &Path) -> Option<BTreeMap<String, Descriptor>> {
    let file = core.join("lib/server/deviceDescriptorsSource.json");
    if let Ok(bytes) = std::fs::read(&file) {
        return serde_json::from_slice(&bytes).ok();
    }
    let script = format!(
        "process.stdout.write(JSON.stringify(require({}).devices))",
        serde_json::to_string(&core.display().to_string()).ok()?
    );
    // The project's code: no way to the desktop's Secret Service (see child_env).
    let mut command = vaider_core::child_env::project_command("node");
    command
        .args(["-e", &script])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(Duration::from_secs(30), command.output())
        .await
        .ok()?
        .ok()?;
    if !output.status.success() {
        return None;
    }
    serde_json::from_slice(&output.stdout).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn built_in() -> BTreeMap<String, Descriptor> {
        serde_json::from_str(BUILT_IN).unwrap()
    }

    #[test]
    fn a_known_device_gives_its_viewport_scale_and_user_agent() {
        let iphone = pick("iPhone 13", &built_in()).unwrap();
        assert_eq!((iphone.viewport.width, iphone.viewport.height), (390, 664));
        assert_eq!(iphone.scale, 3.0);
        assert!(iphone.mobile && iphone.touch);
        assert!(
            iphone.user_agent.contains("iPhone"),
            "{}",
            iphone.user_agent
        );
        // Case aside, the same device under its own name.
        assert_eq!(pick("pixel 7", &built_in()).unwrap().name, "Pixel 7");
    }

    #[test]
    fn an_unknown_device_is_refused_with_close_names() {
        let err = pick("iPhone 99", &built_in()).unwrap_err();
        assert!(err.contains("\"iPhone 99\""), "{err}");
        assert!(err.contains("iPhone"), "{err}");
        let err = pick("Pixle 7", &built_in()).unwrap_err();
        assert!(err.contains("Pixel 7"), "{err}");
    }
}
