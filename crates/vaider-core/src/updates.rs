//! Where this Vaider came from and whether a newer one is known. The origin (a Linux package,
//! npm, an MCP Bundle, a release tarball or a source build) is read from where the running
//! binary lies; the newer version from the release feed, the JSON Tauri's updater reads
//! (`version`, `notes`, `pub_date`, `platforms`). `vaider doctor` and the tray app both ask
//! here, and the last answer is kept in the data folder so an offline doctor can still say it.
//!
//! Only builds made for release know a feed (`VAIDER_RELEASE_FEED` at build time, set by
//! `scripts/package.sh` and the release workflow): a source build is updated with `git pull`,
//! and its tests never reach the internet. `VAIDER_UPDATE_FEED` overrides the feed at run time
//! (`off` switches the check off).

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::pipeline::VERSION;

/// The feed's answer is a few hundred bytes; 256 kB is plenty.
const MAX_FEED_BYTES: usize = 256 * 1024;
/// A check must never hold up the doctor or the tray for long.
const CHECK_TIMEOUT: Duration = Duration::from_secs(5);
/// Where a user reads about a release when the feed names no download for their platform.
pub const RELEASES_PAGE: &str = "https://github.com/vaider-dev/vaider/releases";
/// The file in the data folder that keeps the last answer.
const LAST_CHECK_FILE: &str = "update-check.json";

/// How this copy of Vaider was installed, which says how it is updated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// The `.deb` package (dpkg lists the binary).
    DebPackage,
    /// The `.rpm` package (rpm owns the binary).
    RpmPackage,
    /// An npm platform package such as `@vaider/linux-x64` (npx, npm install).
    Npm { package: String },
    /// An MCP Bundle unpacked by its host (a `manifest.json` beside the `server/` folder).
    McpBundle,
    /// A release binary from a tarball (or `cargo install`ed with the release feed set).
    ReleaseBuild,
    /// Built from the repository (`scripts/install.sh`, `cargo build`, `cargo install`).
    SourceBuild,
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Origin::DebPackage => f.write_str("the vaider .deb package"),
            Origin::RpmPackage => f.write_str("the vaider .rpm package"),
            Origin::Npm { package } => write!(f, "the npm package {package}"),
            Origin::McpBundle => f.write_str("an MCP Bundle"),
            Origin::ReleaseBuild => f.write_str("a release build"),
            Origin::SourceBuild => f.write_str("a source build"),
        }
    }
}

impl Origin {
    /// What the user runs to get a newer version installed this way.
    pub fn how_to_update(&self) -> &'static str {
        match self {
            Origin::DebPackage => {
                "download the new .deb and `sudo apt-get install ./Vaider_VERSION_amd64.deb`"
            }
            Origin::RpmPackage => {
                "download the new .rpm and `sudo dnf install ./Vaider-VERSION-1.x86_64.rpm`"
            }
            Origin::Npm { .. } => {
                "`npx -y vaider@latest` (npx keeps the version it cached until asked)"
            }
            Origin::McpBundle => "download the new .mcpb and open it with your MCP host",
            Origin::ReleaseBuild => "download the new tarball and replace the binary",
            Origin::SourceBuild => "`git pull && bash scripts/install.sh` in the repository",
        }
    }
}

/// The running binary's origin.
pub fn origin() -> Origin {
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .unwrap_or_default();
    origin_of(&exe, &SystemPackages, release_feed().is_some())
}

/// How the user runs this Vaider's CLI, for commands Vaider tells them to run: `vaider` when
/// it is on the PATH as such, `npx -y vaider` from npm, else the binary's full path (an MCP
/// Bundle's binary lies in the host's own folder).
pub fn cli_command() -> String {
    let exe = std::env::current_exe()
        .and_then(|p| p.canonicalize())
        .unwrap_or_default();
    match origin_of(&exe, &NoPackages, false) {
        Origin::Npm { .. } => "npx -y vaider".to_string(),
        Origin::McpBundle => exe.display().to_string(),
        _ => "vaider".to_string(),
    }
}

/// For [`cli_command`]: who owns the binary does not change how it is named.
struct NoPackages;

impl PackageDb for NoPackages {
    fn deb_owns(&self, _: &Path) -> bool {
        false
    }
    fn rpm_owns(&self, _: &Path) -> bool {
        false
    }
}

/// Which system package, if any, owns a file. A trait so the rules can be tested without
/// installing a package.
pub trait PackageDb {
    fn deb_owns(&self, path: &Path) -> bool;
    fn rpm_owns(&self, path: &Path) -> bool;
}

/// The machine's own package databases: dpkg's file lists, and `rpm -qf` where rpm exists.
pub struct SystemPackages;

impl PackageDb for SystemPackages {
    fn deb_owns(&self, path: &Path) -> bool {
        // dpkg keeps each package's files in <name>.list; reading one is cheaper and quieter
        // than running `dpkg -S`.
        let list = std::fs::read_to_string("/var/lib/dpkg/info/vaider.list").unwrap_or_default();
        let wanted = path.to_string_lossy();
        list.lines().any(|line| line == wanted)
    }

    fn rpm_owns(&self, path: &Path) -> bool {
        Path::new("/var/lib/rpm").is_dir()
            && std::process::Command::new("rpm")
                .args(["-qf", "--qf", "%{NAME}"])
                .arg(path)
                .env_clear()
                .output()
                .is_ok_and(|out| out.status.success() && out.stdout == b"vaider")
    }
}

/// The origin of the binary at `exe` (canonical path), given the package databases and
/// whether the build knows a release feed.
pub fn origin_of(exe: &Path, packages: &dyn PackageDb, release_build: bool) -> Origin {
    if let Some(package) = npm_package(exe) {
        return Origin::Npm { package };
    }
    if packages.deb_owns(exe) {
        return Origin::DebPackage;
    }
    if packages.rpm_owns(exe) {
        return Origin::RpmPackage;
    }
    // An MCP Bundle is unpacked as <folder>/manifest.json and <folder>/server/vaider.
    let bundle_manifest = exe
        .parent()
        .and_then(Path::parent)
        .map(|d| d.join("manifest.json"));
    if bundle_manifest.is_some_and(|m| is_bundle_manifest(&m)) {
        return Origin::McpBundle;
    }
    if release_build {
        Origin::ReleaseBuild
    } else {
        Origin::SourceBuild
    }
}

/// `…/node_modules/@vaider/<platform>/bin/vaider` → `@vaider/<platform>`.
fn npm_package(exe: &Path) -> Option<String> {
    let parts: Vec<&str> = exe.iter().filter_map(|p| p.to_str()).collect();
    let at = parts
        .windows(2)
        .position(|w| w[0] == "node_modules" && w[1] == "@vaider")?;
    parts
        .get(at + 2)
        .map(|platform| format!("@vaider/{platform}"))
}

fn is_bundle_manifest(path: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(path) else {
        return false;
    };
    serde_json::from_str::<serde_json::Value>(&text).is_ok_and(|m| {
        m.get("manifest_version").is_some()
            && m.get("name").and_then(|n| n.as_str()) == Some("vaider")
    })
}

/// The feed this build checks: `VAIDER_UPDATE_FEED` at run time (`off` or empty: none),
/// else the one built in for a release.
pub fn feed() -> Option<String> {
    match std::env::var("VAIDER_UPDATE_FEED") {
        Ok(v) if v.trim().is_empty() || v.trim() == "off" => None,
        Ok(v) => Some(v.trim().to_string()),
        Err(_) => release_feed().map(str::to_string),
    }
}

fn release_feed() -> Option<&'static str> {
    option_env!("VAIDER_RELEASE_FEED").filter(|f| !f.is_empty())
}

/// The feed's document, as Tauri's updater reads it (fields Vaider does not use are ignored).
#[derive(Debug, Deserialize)]
struct FeedDocument {
    version: String,
    #[serde(default)]
    notes: Option<String>,
    #[serde(default)]
    pub_date: Option<String>,
    #[serde(default)]
    platforms: std::collections::BTreeMap<String, FeedPlatform>,
}

#[derive(Debug, Deserialize)]
struct FeedPlatform {
    url: String,
}

/// What the feed said, kept in the data folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Check {
    /// The version that asked.
    pub current: String,
    /// The feed's version.
    pub latest: String,
    /// Whether `latest` is newer than `current`.
    pub newer: bool,
    pub notes: Option<String>,
    pub published: Option<String>,
    /// Where to get it: the feed's download for this platform, else the releases page.
    pub url: String,
    /// When the feed was read (RFC 3339).
    pub checked_at: String,
}

/// Reads the feed and compares its version with this one. The error is a sentence for the
/// user (the feed's URL is the user's or the release's, never a secret).
pub async fn check(feed: &str) -> Result<Check, String> {
    let client = reqwest::Client::builder()
        .timeout(CHECK_TIMEOUT)
        .user_agent(concat!("vaider/", env!("CARGO_PKG_VERSION")))
        .build()
        .map_err(|e| format!("could not check for updates: {e}"))?;
    let response = client.get(feed).send().await.map_err(|e| {
        format!(
            "could not read the release feed {feed}: {}",
            e.without_url()
        )
    })?;
    if !response.status().is_success() {
        return Err(format!(
            "the release feed {feed} answered {}",
            response.status()
        ));
    }
    let body = vaider_providers::body::read_capped(response, MAX_FEED_BYTES)
        .await
        .map_err(|e| e.describe("the release feed", "answer"))?;
    let doc: FeedDocument = serde_json::from_slice(&body)
        .map_err(|e| format!("the release feed {feed} is not a release feed: {e}"))?;
    Ok(compare(VERSION, doc))
}

fn compare(current: &str, doc: FeedDocument) -> Check {
    let url = doc
        .platforms
        .get(platform_key())
        .map(|p| p.url.clone())
        .unwrap_or_else(|| RELEASES_PAGE.to_string());
    Check {
        current: current.to_string(),
        newer: is_newer(&doc.version, current),
        latest: doc.version.trim_start_matches('v').to_string(),
        notes: doc.notes,
        published: doc.pub_date,
        url,
        checked_at: crate::pipeline::now_rfc3339(),
    }
}

/// The feed's key for this platform, as Tauri's updater names it (`linux-x86_64`, …).
fn platform_key() -> &'static str {
    match (std::env::consts::OS, std::env::consts::ARCH) {
        ("linux", "x86_64") => "linux-x86_64",
        ("linux", "aarch64") => "linux-aarch64",
        ("macos", "x86_64") => "darwin-x86_64",
        ("macos", "aarch64") => "darwin-aarch64",
        ("windows", "x86_64") => "windows-x86_64",
        _ => "unknown",
    }
}

/// Semantic versions compared by their numbers; a pre-release (`1.2.0-rc.1`) comes before
/// its release. A version that cannot be read is never newer.
pub fn is_newer(candidate: &str, current: &str) -> bool {
    match (parse_version(candidate), parse_version(current)) {
        (Some(a), Some(b)) => a > b,
        _ => false,
    }
}

/// (major, minor, patch, is a release, pre-release text): a release sorts after its
/// pre-releases, which sort by their text.
fn parse_version(v: &str) -> Option<(u64, u64, u64, bool, String)> {
    let v = v.trim().trim_start_matches('v');
    let v = v.split('+').next()?;
    let (numbers, pre) = match v.split_once('-') {
        Some((n, p)) => (n, Some(p.to_string())),
        None => (v, None),
    };
    let mut parts = numbers.split('.').map(|n| n.parse::<u64>().ok());
    let (major, minor, patch) = (parts.next()??, parts.next()??, parts.next()??);
    if parts.next().is_some() {
        return None;
    }
    Some((major, minor, patch, pre.is_none(), pre.unwrap_or_default()))
}

/// The last check's answer, kept in the data folder.
pub fn last_check(data_dir: &Path) -> Option<Check> {
    let text = std::fs::read_to_string(last_check_path(data_dir)).ok()?;
    serde_json::from_str::<Check>(&text)
        .ok()
        // An answer for another version (before an upgrade) says nothing about this one.
        .filter(|c| c.current == VERSION)
}

/// Keeps a check's answer for the next `vaider doctor`; failing to keep it loses nothing.
pub fn remember(data_dir: &Path, check: &Check) {
    if let Ok(text) = serde_json::to_vec_pretty(check) {
        let _ = std::fs::create_dir_all(data_dir);
        let _ = crate::atomic_file::write(
            &last_check_path(data_dir),
            &text,
            crate::atomic_file::Sync::Cached,
        );
    }
}

fn last_check_path(data_dir: &Path) -> PathBuf {
    data_dir.join(LAST_CHECK_FILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Owns {
        deb: bool,
        rpm: bool,
    }

    impl PackageDb for Owns {
        fn deb_owns(&self, _: &Path) -> bool {
            self.deb
        }
        fn rpm_owns(&self, _: &Path) -> bool {
            self.rpm
        }
    }

    const NONE: Owns = Owns {
        deb: false,
        rpm: false,
    };

    #[test]
    fn versions_compare_by_number_and_releases_follow_their_pre_releases() {
        assert!(is_newer("0.2.0", "0.1.0"));
        assert!(is_newer("v0.10.0", "0.9.9"));
        assert!(is_newer("1.0.0", "1.0.0-rc.2"));
        assert!(is_newer("1.0.0-rc.2", "1.0.0-rc.1"));
        assert!(!is_newer("0.1.0", "0.1.0"));
        assert!(!is_newer("0.1.0+build.7", "0.1.0"));
        assert!(!is_newer("0.0.9", "0.1.0"));
        assert!(!is_newer("latest", "0.1.0"));
        assert!(!is_newer("1.2", "0.1.0"));
    }

    #[test]
    fn the_origin_is_read_from_where_the_binary_lies() {
        let npm = Path::new("/home/u/.npm/_npx/ab/node_modules/@vaider/linux-x64/bin/vaider");
        assert_eq!(
            origin_of(npm, &NONE, true),
            Origin::Npm {
                package: "@vaider/linux-x64".into()
            }
        );
        let usr = Path::new("/usr/bin/vaider");
        let deb = Owns {
            deb: true,
            rpm: false,
        };
        assert_eq!(origin_of(usr, &deb, true), Origin::DebPackage);
        let rpm = Owns {
            deb: false,
            rpm: true,
        };
        assert_eq!(origin_of(usr, &rpm, true), Origin::RpmPackage);
        assert_eq!(origin_of(usr, &NONE, true), Origin::ReleaseBuild);
        assert_eq!(
            origin_of(Path::new("/repo/target/release/vaider"), &NONE, false),
            Origin::SourceBuild
        );
    }

    #[test]
    fn an_unpacked_mcp_bundle_is_recognised_by_its_manifest() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("server")).unwrap();
        let exe = dir.path().join("server/vaider");
        std::fs::write(
            dir.path().join("manifest.json"),
            r#"{"manifest_version": "0.3", "name": "vaider"}"#,
        )
        .unwrap();
        assert_eq!(origin_of(&exe, &NONE, true), Origin::McpBundle);
        std::fs::write(
            dir.path().join("manifest.json"),
            r#"{"manifest_version": "0.3", "name": "other"}"#,
        )
        .unwrap();
        assert_eq!(origin_of(&exe, &NONE, true), Origin::ReleaseBuild);
    }

    #[test]
    fn the_feed_names_this_platforms_download_or_the_releases_page() {
        let doc: FeedDocument = serde_json::from_str(&format!(
            r#"{{"version": "v9.0.0", "notes": "n", "pub_date": "2026-11-01T00:00:00Z",
                "platforms": {{"{}": {{"url": "https://example.invalid/v.deb", "signature": "s"}}}}}}"#,
            platform_key()
        ))
        .unwrap();
        let check = compare("0.1.0", doc);
        assert!(check.newer);
        assert_eq!(check.latest, "9.0.0");
        assert_eq!(check.url, "https://example.invalid/v.deb");
        let bare: FeedDocument = serde_json::from_str(r#"{"version": "0.1.0"}"#).unwrap();
        let check = compare("0.1.0", bare);
        assert!(!check.newer);
        assert_eq!(check.url, RELEASES_PAGE);
    }

    #[test]
    fn a_kept_answer_counts_only_for_the_version_that_asked() {
        let dir = tempfile::tempdir().unwrap();
        let mut check = compare(
            VERSION,
            serde_json::from_str(r#"{"version": "99.0.0"}"#).unwrap(),
        );
        remember(dir.path(), &check);
        assert_eq!(last_check(dir.path()), Some(check.clone()));
        check.current = "0.0.1".into();
        remember(dir.path(), &check);
        assert_eq!(last_check(dir.path()), None);
    }
}
