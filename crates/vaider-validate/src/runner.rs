//! Runs the project's own Playwright on one test file: its installed version and its config,
//! through a generated config that loads theirs the way Playwright itself would (`require` for
//! a CommonJS project, `import` for an ES module one) and merges into its `use` only what the
//! run needs: screenshots, trace, the JSON reporter, and video where Playwright can record it
//! (their file is not touched, nor any of their settings such as `video.show`). The run is
//! bounded by a timeout that kills its whole process group (Node, the workers, the browsers),
//! and the runner's stdout and stderr are kept in the run's folder.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

/// The config file names Playwright looks for, in its own order.
const CONFIG_NAMES: [&str; 6] = [
    "playwright.config.ts",
    "playwright.config.js",
    "playwright.config.mts",
    "playwright.config.mjs",
    "playwright.config.cts",
    "playwright.config.cjs",
];

/// What one run is given.
#[derive(Debug, Clone)]
pub struct RunPlan {
    /// The test file, absolute.
    pub test_file: PathBuf,
    /// Where Playwright runs (the config's folder), absolute.
    pub project_dir: PathBuf,
    /// The project's config, if it has one.
    pub config: Option<PathBuf>,
    pub grep: Option<String>,
    /// The run's own folder: the generated config, the report, test-results and the logs.
    pub run_dir: PathBuf,
    pub timeout: Duration,
    /// Whether Playwright's video recorder (its ffmpeg) is installed: Vaider asks for video
    /// only then, so a run never fails for a recording the project did not ask for.
    pub recorder: bool,
}

/// Where a finished (or stopped) run left its files.
#[derive(Debug, Clone)]
pub struct RunOutput {
    pub exit_code: Option<i32>,
    pub timed_out: bool,
    pub duration_ms: u64,
    pub report: PathBuf,
    pub output_dir: PathBuf,
    pub stdout_log: PathBuf,
    pub stderr_log: PathBuf,
    pub config: PathBuf,
    /// Whether Vaider asked for video (the project's own setting applies either way).
    pub video: bool,
}

/// A run that could not start, with what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("Node.js was not found on PATH: install Node.js 18 or newer (https://nodejs.org, or e.g. `apt-get install nodejs npm`) so Vaider can run the project's Playwright")]
    NodeMissing,
    #[error("Playwright is not installed for {0}: run `npm install -D @playwright/test` in the project (Vaider runs the project's own Playwright, which downloads no browser of its own here)")]
    PlaywrightMissing(String),
    #[error("could not {0}")]
    Io(String),
}

/// The folder of the nearest `playwright.config.*` above `test_file`, with that config; else
/// the nearest folder with a `package.json`, else the test's folder. The search never leaves
/// the [`project_root`]: a config or package in a parent folder (`/tmp`, the home folder) is
/// not the project's.
pub fn find_project(test_file: &Path) -> (PathBuf, Option<PathBuf>) {
    let start = test_file.parent().unwrap_or(Path::new("/"));
    for dir in within_project(start) {
        if let Some(config) = config_in(dir) {
            return (dir.to_path_buf(), Some(config));
        }
    }
    let package = within_project(start)
        .find(|d| d.join("package.json").is_file())
        .unwrap_or(start);
    (package.to_path_buf(), None)
}

/// The root of the project `start` is in: the nearest folder at or above it holding `.git`
/// (a repository, where a workspace may hoist node_modules), else the nearest with a
/// `package.json`, else `start` itself. Lookups stop there, never at `/`.
pub fn project_root(start: &Path) -> &Path {
    let with = |marker: &str| start.ancestors().find(|d| d.join(marker).exists());
    with(".git")
        .or_else(|| with("package.json"))
        .unwrap_or(start)
}

/// `start` and its parents up to its [`project_root`], nearest first.
fn within_project(start: &Path) -> impl Iterator<Item = &Path> {
    let root = project_root(start);
    let depth = start.ancestors().take_while(|d| *d != root).count() + 1;
    start.ancestors().take(depth)
}

/// The Playwright config in `dir`, if there is one.
pub fn config_in(dir: &Path) -> Option<PathBuf> {
    CONFIG_NAMES
        .iter()
        .map(|name| dir.join(name))
        .find(|p| p.is_file())
}

/// The project's Playwright command line (`@playwright/test`'s or `playwright`'s `cli.js`),
/// found as Node would resolve it from the project folder.
pub fn find_playwright(project_dir: &Path) -> Result<PathBuf, RunError> {
    for dir in within_project(project_dir) {
        for package in ["@playwright/test", "playwright"] {
            let cli = dir.join("node_modules").join(package).join("cli.js");
            if cli.is_file() {
                return Ok(cli);
            }
        }
    }
    Err(RunError::PlaywrightMissing(
        project_dir.display().to_string(),
    ))
}

/// `node` on PATH.
pub fn find_node() -> Result<PathBuf, RunError> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join("node"))
        .find(|p| p.is_file())
        .ok_or(RunError::NodeMissing)
}

/// Runs the test and waits for it, at most `plan.timeout`.
pub async fn run(plan: &RunPlan) -> Result<RunOutput, RunError> {
    let node = find_node()?;
    let cli = find_playwright(&plan.project_dir)?;
    std::fs::create_dir_all(&plan.run_dir)
        .map_err(|e| RunError::Io(format!("create {}: {e}", plan.run_dir.display())))?;
    let output = RunOutput {
        exit_code: None,
        timed_out: false,
        duration_ms: 0,
        report: plan.run_dir.join("report.json"),
        output_dir: plan.run_dir.join("test-results"),
        stdout_log: plan.run_dir.join("runner.stdout.log"),
        stderr_log: plan.run_dir.join("runner.stderr.log"),
        config: plan.run_dir.join(wrapper_name(plan.config.as_deref())),
        video: plan.recorder,
    };
    let wrapper = wrapper_config(plan, &output);
    std::fs::write(&output.config, wrapper)
        .map_err(|e| RunError::Io(format!("write {}: {e}", output.config.display())))?;
    let log = |path: &Path| {
        std::fs::File::create(path)
            .map_err(|e| RunError::Io(format!("create {}: {e}", path.display())))
    };
    // The project's code: no way to the desktop's Secret Service (see child_env).
    let mut command = vaider_core::child_env::project_command(node);
    command
        .arg(&cli)
        .arg("test")
        .arg("--config")
        .arg(&output.config)
        .arg(file_filter(&plan.test_file))
        .current_dir(&plan.project_dir)
        .env("FORCE_COLOR", "0")
        .stdin(Stdio::null())
        .stdout(log(&output.stdout_log)?)
        .stderr(log(&output.stderr_log)?);
    if let Some(grep) = plan.grep.as_deref().filter(|g| !g.is_empty()) {
        command.arg("--grep").arg(grep);
    }
    #[cfg(unix)]
    command.process_group(0);
    let started = Instant::now();
    let child = command
        .spawn()
        .map_err(|e| RunError::Io(format!("start Playwright ({}): {e}", cli.display())))?;
    let mut group = ProcessGroup::new(child);
    let waited = tokio::time::timeout(plan.timeout, group.child.wait()).await;
    let mut output = output;
    output.duration_ms = started.elapsed().as_millis() as u64;
    match waited {
        Ok(Ok(status)) => output.exit_code = status.code(),
        Ok(Err(e)) => return Err(RunError::Io(format!("wait for Playwright: {e}"))),
        Err(_) => output.timed_out = true,
    }
    // Whatever is left of the run (a browser a crashed worker left behind) goes with it.
    group.kill();
    if output.timed_out {
        let _ = group.child.wait().await;
    }
    Ok(output)
}

/// The run's Node process and everything it started; killed when dropped (a cancelled call).
struct ProcessGroup {
    child: tokio::process::Child,
    killed: bool,
}

impl ProcessGroup {
    fn new(child: tokio::process::Child) -> Self {
        ProcessGroup {
            child,
            killed: false,
        }
    }

    fn kill(&mut self) {
        if self.killed {
            return;
        }
        self.killed = true;
        #[cfg(unix)]
        if let Some(pid) = self.child.id() {
            // SAFETY: killpg only sends a signal; the group is the one this child leads.
            unsafe {
                libc::killpg(pid as libc::pid_t, libc::SIGKILL);
            }
        }
        let _ = self.child.start_kill();
    }
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The generated config is of the same module kind as the project's, so it loads theirs the
/// way Playwright does: `.cjs` (Playwright's require hook compiles a TypeScript config),
/// else `.mts` for a TypeScript config (Playwright transpiles the import) or `.mjs`.
pub(crate) fn wrapper_name(config: Option<&Path>) -> &'static str {
    if !config.is_some_and(is_module) {
        return "vaider.playwright.config.cjs";
    }
    let typescript = config
        .and_then(|c| c.extension())
        .is_some_and(|e| e == "ts" || e == "mts" || e == "cts");
    if typescript {
        "vaider.playwright.config.mts"
    } else {
        "vaider.playwright.config.mjs"
    }
}

/// Playwright's own rule (its `fileIsModule`): `.mjs`/`.mts` are ES modules, `.cjs`/`.cts`
/// CommonJS, anything else is what the nearest `package.json` says (`"type": "module"`).
pub fn is_module(config: &Path) -> bool {
    match config.extension().and_then(|e| e.to_str()) {
        Some("mjs" | "mts") => return true,
        Some("cjs" | "cts") => return false,
        _ => {}
    }
    let package = config
        .ancestors()
        .skip(1)
        .map(|d| d.join("package.json"))
        .find(|p| p.is_file());
    package
        .and_then(|p| std::fs::read(p).ok())
        .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
        .is_some_and(|v| v["type"] == "module")
}

/// Where the project's Playwright looks for its video recorder, by its registry's rules:
/// `ffmpeg-<revision>` (its `browsers.json`) under `PLAYWRIGHT_BROWSERS_PATH` (`0`: inside
/// playwright-core), else the user's cache folder's `ms-playwright`. None when the project has
/// no playwright-core to ask.
pub fn playwright_ffmpeg(project_dir: &Path) -> Option<PathBuf> {
    let core = within_project(project_dir)
        .map(|d| d.join("node_modules/playwright-core"))
        .find(|d| d.join("browsers.json").is_file())?;
    let text = std::fs::read(core.join("browsers.json")).ok()?;
    let value: serde_json::Value = serde_json::from_slice(&text).ok()?;
    let revision = value["browsers"]
        .as_array()?
        .iter()
        .find(|b| b["name"] == "ffmpeg")?["revision"]
        .as_str()?
        .to_string();
    let root = match std::env::var_os("PLAYWRIGHT_BROWSERS_PATH") {
        Some(p) if p == "0" => core.join(".local-browsers"),
        Some(p) if !p.is_empty() => project_dir.join(p),
        _ => directories::BaseDirs::new()?
            .cache_dir()
            .join("ms-playwright"),
    };
    let name = if cfg!(windows) {
        "ffmpeg-win64.exe"
    } else if cfg!(target_os = "macos") {
        "ffmpeg-mac"
    } else {
        "ffmpeg-linux"
    };
    Some(root.join(format!("ffmpeg-{revision}")).join(name))
}

/// A config that loads the project's and merges in only what the run needs. It lives in the
/// run's folder, so every path theirs gives relative to its own folder is made absolute.
/// Project-level `use` wins over the top level in Playwright, so a project's own `video`,
/// `trace` or `screenshot` is merged there too.
fn wrapper_config(plan: &RunPlan, output: &RunOutput) -> String {
    let js = |p: &Path| serde_json::to_string(&p.display().to_string()).unwrap_or_default();
    let module = plan.config.as_deref().is_some_and(is_module);
    let (head, load, export) = match (&plan.config, module) {
        (Some(config), true) => (
            "import path from 'node:path';",
            load_config_js(config),
            "export default config;",
        ),
        (Some(config), false) => (
            "const path = require('node:path');",
            load_config_js(config),
            "module.exports = config;",
        ),
        (None, _) => (
            "const path = require('node:path');",
            "const base = {};".to_string(),
            "module.exports = config;",
        ),
    };
    format!(
        r#"// Written by Vaider for one validation run: the project's config, with screenshots, trace,
// the JSON report and (when Playwright's recorder is installed) video merged into its own
// settings. The project's own file is unchanged.
{head}
{load}
const dir = {dir};
const recorder = {recorder};
const abs = (p) => (typeof p === 'string' && !path.isAbsolute(p) ? path.resolve(dir, p) : p);
// 'on', keeping the project's other options of an object setting ({{mode, show, size}} ...).
const turnOn = (v) => (v && typeof v === 'object' ? {{ ...v, mode: 'on' }} : 'on');
const off = (v) => v === undefined || v === 'off' || (!!v && typeof v === 'object' && (v.mode ?? 'off') === 'off');
// Video only where it can be recorded; a project's own choice (on, retain-on-failure) stays.
const video = (v) => (recorder && off(v) ? turnOn(v) : v);
function on(use, own) {{
  const u = {{ ...(use || {{}}) }};
  for (const key of ['screenshot', 'trace']) if (!own || key in u) u[key] = turnOn(u[key]);
  if (!own || 'video' in u) {{
    const v = video(u.video);
    if (v === undefined) delete u.video; else u.video = v;
  }}
  return u;
}}
const server = (s) => ({{ ...s, cwd: abs(s.cwd ?? '.') }});
// Playwright resolves snapshot paths against the config's folder, which is now the run's: a
// relative snapshotDir or path template must keep pointing into the project.
const template = (t) => (typeof t === 'string' && !path.isAbsolute(t) && !/^\{{(testDir|snapshotDir)\}}/.test(t) ? path.join(dir, t) : t);
function snapshots(c) {{
  const s = {{}};
  if (c.snapshotDir) s.snapshotDir = abs(c.snapshotDir);
  if (c.snapshotPathTemplate) s.snapshotPathTemplate = template(c.snapshotPathTemplate);
  if (c.expect) {{
    s.expect = {{ ...c.expect }};
    for (const key of ['toHaveScreenshot', 'toMatchSnapshot', 'toMatchAriaSnapshot']) {{
      const own = c.expect[key];
      if (own && own.pathTemplate) s.expect[key] = {{ ...own, pathTemplate: template(own.pathTemplate) }};
    }}
  }}
  return s;
}}
const config = {{
  ...base,
  ...snapshots(base),
  testDir: abs(base.testDir ?? '.'),
  outputDir: {out},
  reporter: [['list'], ['json', {{ outputFile: {report} }}]],
  use: on(base.use, false),
}};
if (base.globalSetup) config.globalSetup = Array.isArray(base.globalSetup) ? base.globalSetup.map(abs) : abs(base.globalSetup);
if (base.globalTeardown) config.globalTeardown = Array.isArray(base.globalTeardown) ? base.globalTeardown.map(abs) : abs(base.globalTeardown);
if (base.webServer) config.webServer = Array.isArray(base.webServer) ? base.webServer.map(server) : server(base.webServer);
if (Array.isArray(base.projects)) {{
  config.projects = base.projects.map(({{ outputDir, ...p }}) => ({{
    ...p,
    ...snapshots(p),
    ...(p.testDir ? {{ testDir: abs(p.testDir) }} : {{}}),
    use: on(p.use, true),
  }}));
}}
{export}
"#,
        dir = js(&plan.project_dir),
        recorder = plan.recorder,
        out = js(&output.output_dir),
        report = js(&output.report),
    )
}

/// The JavaScript that loads a project's Playwright config into `base` as Playwright reads it
/// (an ES module imported, else CommonJS required; its default export unwrapped), for the
/// scripts Vaider writes beside a project: a run's config and the snapshot-path loader.
pub(crate) fn load_config_js(config: &Path) -> String {
    let load = if is_module(config) {
        let url = serde_json::to_string(&file_url(config)).unwrap_or_default();
        format!("import * as loaded from {url};\nconst base = unwrap(loaded);")
    } else {
        let file = serde_json::to_string(&config.display().to_string()).unwrap_or_default();
        format!("const base = unwrap(require({file}));")
    };
    format!(
        "function unwrap(m) {{
  let c = m && 'default' in m ? m.default : m;
  if (c && c.__esModule && 'default' in c) c = c.default;
  return c || {{}};
}}
{load}"
    )
}

/// Playwright reads a file argument as a regular expression over the file's path: the path's
/// own `.`, `(`, `+`, `$` ... must match themselves.
fn file_filter(path: &Path) -> String {
    let mut pattern = String::new();
    for c in path.display().to_string().chars() {
        if "\\^$.|?*+()[]{}".contains(c) {
            pattern.push('\\');
        }
        pattern.push(c);
    }
    pattern
}

/// `file:///...` for an absolute path, so the import works whatever characters it has.
pub(crate) fn file_url(path: &Path) -> String {
    let text = path.display().to_string();
    let parts: Vec<String> = text
        .split('/')
        .map(vaider_core::source::percent_encode)
        .collect();
    format!("file://{}", parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_nearest_config_above_the_test_is_the_project() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::create_dir_all(root.join("e2e/auth")).unwrap();
        std::fs::write(root.join("package.json"), "{}").unwrap();
        std::fs::write(root.join("playwright.config.ts"), "").unwrap();
        let test = root.join("e2e/auth/login.spec.ts");
        assert_eq!(
            find_project(&test),
            (root.to_path_buf(), Some(root.join("playwright.config.ts")))
        );
        std::fs::write(root.join("e2e/playwright.config.mjs"), "").unwrap();
        assert_eq!(find_project(&test).0, root.join("e2e"));
    }

    #[test]
    fn the_lookup_stops_at_the_project_root() {
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path();
        // A config and a Playwright above the project: someone else's, never used.
        std::fs::write(outside.join("playwright.config.ts"), "").unwrap();
        let planted = outside.join("node_modules/@playwright/test");
        std::fs::create_dir_all(&planted).unwrap();
        std::fs::write(planted.join("cli.js"), "").unwrap();
        let project = outside.join("app");
        std::fs::create_dir_all(project.join("tests")).unwrap();
        std::fs::write(project.join("package.json"), "{}").unwrap();
        let test = project.join("tests/home.spec.ts");
        assert_eq!(find_project(&test), (project.clone(), None));
        assert!(matches!(
            find_playwright(&project),
            Err(RunError::PlaywrightMissing(_))
        ));
        // A repository's root bounds it too, above a package of a workspace.
        std::fs::create_dir_all(project.join(".git")).unwrap();
        let package = project.join("packages/web");
        std::fs::create_dir_all(&package).unwrap();
        std::fs::write(package.join("package.json"), "{}").unwrap();
        assert_eq!(project_root(&package), project);
        // A file with no project around it looks in its own folder only.
        let loose = outside.join("loose");
        std::fs::create_dir_all(&loose).unwrap();
        assert_eq!(project_root(&loose), loose);
        assert_eq!(find_project(&loose.join("a.spec.ts")), (loose, None));
    }

    #[test]
    fn a_missing_playwright_says_how_to_install_it() {
        let dir = tempfile::tempdir().unwrap();
        let error = find_playwright(dir.path()).unwrap_err().to_string();
        assert!(error.contains("npm install -D @playwright/test"), "{error}");
    }

    /// The config Playwright would get, as JSON: the wrapper loaded by Node itself.
    fn loaded(config: &Path, recorder: bool) -> serde_json::Value {
        let dir = config.parent().unwrap();
        let plan = RunPlan {
            test_file: dir.join("a.spec.js"),
            project_dir: dir.to_path_buf(),
            config: Some(config.to_path_buf()),
            grep: None,
            run_dir: dir.join("run"),
            timeout: Duration::from_secs(1),
            recorder,
        };
        let name = wrapper_name(plan.config.as_deref());
        let output = RunOutput {
            exit_code: None,
            timed_out: false,
            duration_ms: 0,
            report: dir.join("run/report.json"),
            output_dir: dir.join("run/test-results"),
            stdout_log: dir.join("o"),
            stderr_log: dir.join("e"),
            config: dir.join(name),
            video: recorder,
        };
        std::fs::write(&output.config, wrapper_config(&plan, &output)).unwrap();
        let out = std::process::Command::new("node")
            .arg("-e")
            .arg("console.log(JSON.stringify(require(process.argv[1])))")
            .arg(&output.config)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    #[test]
    fn a_commonjs_config_is_required_and_the_users_video_settings_are_merged_not_replaced() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("package.json"), "{}").unwrap();
        let config = dir.path().join("playwright.config.js");
        std::fs::write(
            &config,
            "module.exports = { use: { video: { mode: 'off', show: { actions: {} }, size: { width: 320, height: 200 } }, trace: 'on-first-retry' },\n  projects: [{ name: 'a', use: { video: 'retain-on-failure' } }, { name: 'b', use: {} }] };",
        )
        .unwrap();
        assert!(!is_module(&config));
        assert_eq!(wrapper_name(Some(&config)), "vaider.playwright.config.cjs");
        let with = loaded(&config, true);
        assert_eq!(
            with["use"]["video"],
            serde_json::json!({"mode": "on", "show": {"actions": {}}, "size": {"width": 320, "height": 200}})
        );
        assert_eq!(with["use"]["trace"], "on");
        // A project's own choice stays; one without any inherits the top level's.
        assert_eq!(with["projects"][0]["use"]["video"], "retain-on-failure");
        assert!(with["projects"][1]["use"].get("video").is_none());
        // No recorder: the project's own setting, untouched (as plain Playwright runs it).
        let without = loaded(&config, false);
        assert_eq!(without["use"]["video"]["mode"], "off");
        let bare = dir.path().join("bare.config.cjs");
        std::fs::write(&bare, "module.exports = {};").unwrap();
        assert!(loaded(&bare, false)["use"].get("video").is_none());
        assert_eq!(loaded(&bare, true)["use"]["video"], "on");
    }

    #[test]
    fn the_module_kind_is_playwrights() {
        let dir = tempfile::tempdir().unwrap();
        let ts = dir.path().join("playwright.config.ts");
        assert!(!is_module(&ts), "no package.json: CommonJS");
        std::fs::write(dir.path().join("package.json"), r#"{"type": "module"}"#).unwrap();
        assert!(is_module(&ts));
        assert_eq!(wrapper_name(Some(&ts)), "vaider.playwright.config.mts");
        assert!(!is_module(&dir.path().join("playwright.config.cts")));
        assert!(is_module(&dir.path().join("playwright.config.mjs")));
    }

    #[test]
    fn a_file_filter_matches_only_its_path() {
        assert_eq!(
            file_filter(Path::new("/p/a (1)/x.spec.ts")),
            r"/p/a \(1\)/x\.spec\.ts"
        );
    }

    #[test]
    fn paths_become_file_urls() {
        assert_eq!(file_url(Path::new("/a b/c#.mjs")), "file:///a%20b/c%23.mjs");
    }
}
