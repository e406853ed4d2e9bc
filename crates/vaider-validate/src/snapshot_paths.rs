//! Where a project's Playwright keeps a `toHaveScreenshot` snapshot, computed as Playwright
//! computes it (its worker's `_resolveSnapshotPaths` and `_applyPathTemplate`): the project's
//! config is loaded by its own Playwright, the way a validation run loads it (so a TypeScript
//! or ES module config loads as in a test run), each project's `testDir`, `snapshotDir` and
//! template resolved by Playwright's rules (`expect.toHaveScreenshot.pathTemplate`, else
//! `snapshotPathTemplate`, else the default), then the template's tokens filled in. Writing
//! an approved picture there is what `npx playwright test --update-snapshots` would do.

use std::path::{Component, Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde::Deserialize;

use crate::runner::{self, RunError};

/// Playwright's template when the config sets none (its `legacyTemplate`).
pub const DEFAULT_TEMPLATE: &str =
    "{snapshotDir}/{testFileDir}/{testFileName}-snapshots/{arg}{-projectName}{-snapshotSuffix}{ext}";

/// How long loading a config may take: it runs only the config file, not the tests.
const LOAD_TIMEOUT: Duration = Duration::from_secs(60);

/// What of a project's config decides where its snapshots are.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotConfig {
    /// The config file's folder: a template's relative result is resolved against it.
    pub config_dir: PathBuf,
    /// The top-level `testDir`: the JSON report names spec files relative to it.
    pub root_dir: PathBuf,
    /// Node's `process.platform`: `{platform}`, and `{snapshotSuffix}` (Playwright sets the
    /// suffix to the platform).
    pub platform: String,
    pub projects: Vec<SnapshotProject>,
}

/// One project of the config, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotProject {
    pub name: String,
    /// Unique among the projects: the name, with a number when two share it.
    #[serde(default)]
    pub id: String,
    pub test_dir: PathBuf,
    pub snapshot_dir: PathBuf,
    /// The template a screenshot's path is made from.
    pub template: String,
}

/// One screenshot a test takes.
#[derive(Debug, Clone, Copy)]
pub struct Screenshot<'a> {
    /// The test file, absolute.
    pub test_file: &'a Path,
    /// `{testName}`: see [`test_name`].
    pub test_name: &'a str,
    /// `{arg}`: the name given to `toHaveScreenshot`, without its extension ("home").
    pub arg: &'a str,
    /// `{ext}`: ".png".
    pub ext: &'a str,
}

impl SnapshotConfig {
    /// Loads the config of the Playwright project in `project_dir` (`config`, or the
    /// `playwright.config.*` there) with the project's own Node and Playwright.
    pub async fn load(
        project_dir: &Path,
        config: Option<&Path>,
    ) -> Result<SnapshotConfig, RunError> {
        let node = runner::find_node()?;
        let cli = runner::find_playwright(project_dir)?;
        let config = match config {
            Some(c) => c.to_path_buf(),
            None => runner::config_in(project_dir).ok_or_else(|| {
                RunError::Io(format!(
                    "find a playwright.config.* in {}: run `vaider check` in the Playwright project's folder",
                    project_dir.display()
                ))
            })?,
        };
        let work = tempfile_dir()?;
        let loader = work.join(runner::wrapper_name(Some(&config)));
        let out = work.join("snapshot-config.json");
        let written = std::fs::write(&loader, loader_script(&config));
        let result = match written {
            Ok(()) => run_loader(&node, &cli, &loader, &out, project_dir).await,
            Err(e) => Err(RunError::Io(format!("write {}: {e}", loader.display()))),
        };
        let _ = std::fs::remove_dir_all(&work);
        result
    }

    /// The project a test ran in: by its id or name as the report gives it; the only one
    /// when the report names none.
    pub fn project(&self, id_or_name: Option<&str>) -> Option<&SnapshotProject> {
        match id_or_name.filter(|n| !n.is_empty()) {
            Some(n) => self
                .projects
                .iter()
                .find(|p| p.id == n)
                .or_else(|| self.projects.iter().find(|p| p.name == n)),
            None => match self.projects.as_slice() {
                [only] => Some(only),
                _ => self.projects.iter().find(|p| p.name.is_empty()),
            },
        }
    }

    /// The snapshot file of `shot` in `project`: Playwright's template filled in, in its own
    /// order of tokens, resolved against the config's folder and normalized.
    pub fn screenshot_path(&self, project: &SnapshotProject, shot: &Screenshot) -> PathBuf {
        let relative = relative_path(&project.test_dir, shot.test_file);
        let relative_text = slashes(&relative);
        let file_dir = relative.parent().map(slashes).unwrap_or_default();
        let file_name = relative
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let file_base = match file_name.rfind('.') {
            Some(dot) if dot > 0 => file_name[..dot].to_string(),
            _ => file_name.clone(),
        };
        let project_segment = sanitize_for_file_path(&project.name);
        let test_dir = slashes(&project.test_dir);
        let snapshot_dir = slashes(&project.snapshot_dir);
        // (token, value, whether an empty value drops the token's prefix character too)
        let tokens: [(&str, &str, bool); 12] = [
            ("testDir", &test_dir, false),
            ("snapshotDir", &snapshot_dir, false),
            ("snapshotSuffix", &self.platform, true),
            ("testFileDir", &file_dir, false),
            ("platform", &self.platform, false),
            ("projectName", &project_segment, true),
            ("testName", shot.test_name, false),
            ("testFileBaseName", &file_base, false),
            ("testFileName", &file_name, false),
            ("testFilePath", &relative_text, false),
            ("arg", shot.arg, false),
            ("ext", shot.ext, true),
        ];
        let mut path = project.template.clone();
        for (token, value, drop_empty) in tokens {
            path = replace_token(&path, token, value, drop_empty);
        }
        normalize(&self.config_dir.join(path))
    }
}

/// `{testName}` of a test whose titles (its describe blocks' and its own, not the file's)
/// are `titles`: joined by spaces, shortened as Playwright shortens it, made a file name.
pub fn test_name(titles: &[String]) -> String {
    sanitize_for_file_path(&trim_long_string(&titles.join(" "), 100))
}

/// Playwright's `sanitizeForFilePath`: every run of characters a file name should not hold
/// (ASCII punctuation, space and control characters except '-') becomes one '-'.
pub fn sanitize_for_file_path(text: &str) -> String {
    let unsafe_char = |c: char| matches!(c as u32, 0x00..=0x2C | 0x2E..=0x2F | 0x3A..=0x40 | 0x5B..=0x60 | 0x7B..=0x7F);
    let mut out = String::with_capacity(text.len());
    let mut in_run = false;
    for c in text.chars() {
        if unsafe_char(c) {
            if !in_run {
                out.push('-');
            }
            in_run = true;
        } else {
            out.push(c);
            in_run = false;
        }
    }
    out
}

/// Playwright's `trimLongString`: a text longer than `length` (in UTF-16 units, as in
/// JavaScript) keeps its start and end around the first five hex digits of its SHA-1.
pub fn trim_long_string(text: &str, length: usize) -> String {
    let units: Vec<u16> = text.encode_utf16().collect();
    if units.len() <= length {
        return text.to_string();
    }
    use sha1::Digest;
    let hash = hex_string(&sha1::Sha1::digest(text.as_bytes()));
    let middle = format!("-{}-", &hash[..5]);
    let start = (length - middle.len()) / 2;
    let end = length - middle.len() - start;
    format!(
        "{}{middle}{}",
        String::from_utf16_lossy(&units[..start]),
        String::from_utf16_lossy(&units[units.len() - end..])
    )
}

fn hex_string(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Every `{token}` or `{Xtoken}` (X one character, as Playwright's `\{(.)?token\}`) replaced
/// by X and the value; with `drop_empty`, an empty value takes its X away too.
fn replace_token(text: &str, token: &str, value: &str, drop_empty: bool) -> String {
    let closing = format!("{token}}}");
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let prefix = after.chars().next().filter(|c| *c != '\n' && *c != '\r');
        let (matched, consumed) = if after.starts_with(&closing) {
            (Some(None), 1 + closing.len())
        } else if let Some(c) = prefix.filter(|c| after[c.len_utf8()..].starts_with(&closing)) {
            (Some(Some(c)), 1 + c.len_utf8() + closing.len())
        } else {
            (None, 1)
        };
        match matched {
            Some(prefix) => {
                if !(drop_empty && value.is_empty()) {
                    out.extend(prefix);
                    out.push_str(value);
                }
            }
            None => out.push('{'),
        }
        rest = &rest[open + consumed..];
    }
    out.push_str(rest);
    out
}

/// Node's `path.relative(from, to)` for absolute paths, lexically.
fn relative_path(from: &Path, to: &Path) -> PathBuf {
    let (from, to) = (normalize(from), normalize(to));
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut relative = PathBuf::new();
    for _ in common..from.len() {
        relative.push("..");
    }
    for part in &to[common..] {
        relative.push(part.as_os_str());
    }
    relative
}

/// Node's `path.normalize` of an absolute path: `.` dropped, `..` taken back, `//` one.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

fn slashes(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

fn tempfile_dir() -> Result<PathBuf, RunError> {
    let dir = std::env::temp_dir().join(format!(
        "vaider-snapshot-config-{}-{}",
        std::process::id(),
        vaider_core::job::new_id()
    ));
    std::fs::create_dir_all(&dir)
        .map_err(|e| RunError::Io(format!("create {}: {e}", dir.display())))?;
    Ok(dir)
}

/// Runs Playwright on the loader as its config: the loader writes what it resolved and ends
/// the process before any test file is read.
async fn run_loader(
    node: &Path,
    cli: &Path,
    loader: &Path,
    out: &Path,
    project_dir: &Path,
) -> Result<SnapshotConfig, RunError> {
    // The project's code: no way to the desktop's Secret Service (see child_env).
    let mut command = vaider_core::child_env::project_command(node);
    command
        .arg(cli)
        .args(["test", "--list", "--config"])
        .arg(loader)
        .current_dir(project_dir)
        .env("FORCE_COLOR", "0")
        // A hand-over to the loader below, read by it alone: not one of Vaider's variables.
        .env("SNAPSHOT_PATHS_OUT", out)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    let child = command
        .spawn()
        .map_err(|e| RunError::Io(format!("start Playwright ({}): {e}", cli.display())))?;
    let output = tokio::time::timeout(LOAD_TIMEOUT, child.wait_with_output())
        .await
        .map_err(|_| RunError::Io("load the Playwright config within a minute".into()))?
        .map_err(|e| RunError::Io(format!("wait for Playwright: {e}")))?;
    let text = std::fs::read(out).map_err(|_| {
        let stderr = String::from_utf8_lossy(&output.stderr);
        let last: Vec<&str> = stderr.lines().rev().take(6).collect();
        let last: Vec<&str> = last.into_iter().rev().collect();
        RunError::Io(format!(
            "load the Playwright config (Playwright said: {})",
            last.join(" ").trim()
        ))
    })?;
    serde_json::from_slice(&text).map_err(|e| {
        RunError::Io(format!(
            "read the Playwright config's snapshot settings: {e}"
        ))
    })
}

/// The loader: the project's config imported as Playwright imports it, each project resolved
/// by Playwright's own rules (its `FullProjectInternal`), written to $SNAPSHOT_PATHS_OUT.
fn loader_script(config: &Path) -> String {
    let js = |p: &Path| serde_json::to_string(&p.display().to_string()).unwrap_or_default();
    let config_dir = config.parent().unwrap_or(Path::new("/"));
    let head = match runner::is_module(config) {
        true => "import path from 'node:path';\nimport fs from 'node:fs';",
        false => "const path = require('node:path');\nconst fs = require('node:fs');",
    };
    let load = runner::load_config_js(config);
    format!(
        r#"// Written by Vaider to read where this project's Playwright keeps its snapshots.
{head}
{load}
const configDir = {config_dir};
const resolve = (p) => (p ? path.resolve(configDir, p) : undefined);
const first = (...values) => values.find((v) => v !== undefined);
const legacy = {legacy};
const ids = new Set();
const projects = (base.projects || [base]).map((p) => {{
  const testDir = first(resolve(p.testDir), resolve(base.testDir), configDir);
  const expect = first(p.expect, base.expect, {{}});
  const name = first(p.name, base.name, '');
  let id = name;
  for (let i = 1; ids.has(id); i++) id = name + i;
  ids.add(id);
  return {{
    name,
    id,
    testDir,
    snapshotDir: first(resolve(p.snapshotDir), resolve(base.snapshotDir), testDir),
    template: expect?.toHaveScreenshot?.pathTemplate || first(p.snapshotPathTemplate, base.snapshotPathTemplate) || legacy,
  }};
}});
const rootDir = resolve(base.testDir) || configDir;
fs.writeFileSync(process.env.SNAPSHOT_PATHS_OUT, JSON.stringify({{ configDir, rootDir, platform: process.platform, projects }}));
process.exit(0);
"#,
        config_dir = js(config_dir),
        legacy = serde_json::to_string(DEFAULT_TEMPLATE).unwrap_or_default(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(template: &str) -> (SnapshotConfig, SnapshotProject) {
        let project = SnapshotProject {
            name: "Mobile Chrome".into(),
            id: "Mobile Chrome".into(),
            test_dir: "/p/tests".into(),
            snapshot_dir: "/p/tests".into(),
            template: template.into(),
        };
        let config = SnapshotConfig {
            config_dir: "/p".into(),
            root_dir: "/p/tests".into(),
            platform: "linux".into(),
            projects: vec![project.clone()],
        };
        (config, project)
    }

    fn path_of(template: &str, file: &str) -> String {
        let (config, project) = config(template);
        let shot = Screenshot {
            test_file: Path::new(file),
            test_name: &test_name(&["cart".into(), "shows the total".into()]),
            arg: "home",
            ext: ".png",
        };
        config
            .screenshot_path(&project, &shot)
            .display()
            .to_string()
    }

    #[test]
    fn templates_are_filled_as_playwright_fills_them() {
        assert_eq!(
            path_of(DEFAULT_TEMPLATE, "/p/tests/shop/cart.spec.ts"),
            "/p/tests/shop/cart.spec.ts-snapshots/home-Mobile-Chrome-linux.png"
        );
        // A file right in testDir: `{testFileDir}` is empty, its '/' stays and normalizes away.
        assert_eq!(
            path_of(DEFAULT_TEMPLATE, "/p/tests/cart.spec.ts"),
            "/p/tests/cart.spec.ts-snapshots/home-Mobile-Chrome-linux.png"
        );
        assert_eq!(
            path_of(
                "__screenshots__/{platform}/{testFilePath}/{testName}/{arg}{ext}",
                "/p/tests/shop/cart.spec.ts"
            ),
            "/p/__screenshots__/linux/shop/cart.spec.ts/cart-shows-the-total/home.png"
        );
        assert_eq!(
            path_of(
                "{testDir}/../shots/{testFileBaseName}{_projectName}/{arg}{ext}",
                "/p/tests/cart.spec.ts"
            ),
            "/p/shots/cart.spec_Mobile-Chrome/home.png"
        );
    }

    #[test]
    fn tokens_take_any_one_prefix_character_and_unknown_ones_stay() {
        assert_eq!(replace_token("a{-x}b{x}c{+x}", "x", "v", true), "a-vbvc+v");
        assert_eq!(replace_token("a{-x}b{x}", "x", "", true), "ab");
        assert_eq!(replace_token("a{/x}b", "x", "", false), "a/b");
        assert_eq!(replace_token("{y}{-y}{", "x", "v", false), "{y}{-y}{");
        assert_eq!(replace_token("{{x}", "x", "v", false), "{v");
    }

    #[test]
    fn names_are_sanitized_and_long_ones_trimmed_as_playwright_does() {
        assert_eq!(sanitize_for_file_path("a b/c.d:é--e"), "a-b-c-d-é--e");
        // Playwright's own answer: require('playwright-core/lib/coreBundle').utils.trimLongString
        let expected = format!("{}-ceb28-{}", "x".repeat(46), "x".repeat(47));
        assert_eq!(trim_long_string(&"x".repeat(120), 100), expected);
        assert_eq!(trim_long_string("short", 100), "short");
    }
}
