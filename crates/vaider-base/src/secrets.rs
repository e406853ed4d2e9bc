//! API keys and the server token. Keys come, in this order, from the environment, the OS
//! keychain (Keychain, Credential Manager, Secret Service, through the keyring crate), a `.env`
//! file in the config folder, and a `.env` file in the working folder only when that folder is
//! a project the user initialised (`vaider init`): a stray `.env` wherever the server happens
//! to start never wins. A key is held in [`ApiKey`], whose Debug and Display never show it, so
//! it cannot reach a log.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::error::{Result, VaiderError};

const KEYCHAIN_SERVICE: &str = "vaider";

/// A provider's API key. Prints as `ApiKey(***)` so a stray `{:?}` leaks nothing.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into().trim().to_string())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// Where a key was found, for `vaider doctor` and `vaider_status`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "detail")]
pub enum KeySource {
    Environment(String),
    DotEnv(PathBuf),
    Keychain,
}

impl fmt::Display for KeySource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KeySource::Environment(name) => write!(f, "environment variable {name}"),
            KeySource::DotEnv(path) => write!(f, ".env file {}", path.display()),
            KeySource::Keychain => f.write_str("OS keychain"),
        }
    }
}

/// What the keychain said, so callers can explain a missing keychain instead of failing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum KeychainStatus {
    Available,
    /// No keychain service (for example no D-Bus session on a headless Linux box).
    Unavailable(String),
}

/// The environment variables each provider's key may come from, in order: the well-known
/// ones, then `<NAME>_API_KEY` (so `VLLM_API_KEY` or `MYPROXY_API_KEY` work too).
pub fn env_names(provider: &str) -> Vec<String> {
    let known: &[&str] = match provider {
        "gemini" => &["GEMINI_API_KEY", "GOOGLE_API_KEY"],
        "zai" => &["ZAI_API_KEY", "Z_AI_API_KEY"],
        _ => &[],
    };
    let mut names: Vec<String> = known.iter().map(|n| n.to_string()).collect();
    let generic = format!(
        "{}_API_KEY",
        provider
            .to_ascii_uppercase()
            .replace(|c: char| !c.is_ascii_alphanumeric(), "_")
    );
    if !names.contains(&generic) {
        names.push(generic);
    }
    names
}

/// Finds a provider's key: environment, then the keychain, then the `.env` files of
/// `dotenv_dirs` in order (see [`dotenv_dirs`]).
pub fn find_api_key(provider: &str, dotenv_dirs: &[PathBuf]) -> Option<(ApiKey, KeySource)> {
    for name in env_names(provider) {
        if let Ok(value) = std::env::var(&name) {
            if !value.trim().is_empty() {
                return Some((ApiKey::new(value), KeySource::Environment(name.clone())));
            }
        }
    }
    match keychain_get(provider) {
        Ok(Some(key)) => return Some((key, KeySource::Keychain)),
        Ok(None) => {}
        Err(e) => tracing::debug!("keychain not available: {e}"),
    }
    for dir in dotenv_dirs {
        let path = dir.join(".env");
        if let Some(key) = read_dotenv(&path, &env_names(provider)) {
            return Some((key, KeySource::DotEnv(path)));
        }
    }
    None
}

/// The list of projects `vaider init` set up, in the config folder: one folder a line.
const PROJECTS_FILE: &str = "projects";

/// The folders whose `.env` may hold a key: the config folder, then `cwd` when it is a project
/// the user initialised with `vaider init` (any other folder's `.env` is not read).
pub fn dotenv_dirs(config_dir: &Path, cwd: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = vec![config_dir.to_path_buf()];
    if let Some(cwd) = cwd.and_then(|c| c.canonicalize().ok()) {
        if initialised_projects(config_dir).contains(&cwd) {
            dirs.push(cwd);
        }
    }
    dirs
}

/// Records `project` as initialised by the user, so its `.env` may supply keys.
pub fn remember_project(config_dir: &Path, project: &Path) -> Result<()> {
    let project = project
        .canonicalize()
        .map_err(|e| VaiderError::internal(format!("find {}", project.display()), e))?;
    let mut projects = initialised_projects(config_dir);
    if projects.contains(&project) {
        return Ok(());
    }
    projects.push(project);
    let text: String = projects
        .iter()
        .map(|p| format!("{}\n", p.display()))
        .collect();
    crate::atomic_file::create_private_dir(config_dir)
        .map_err(|e| VaiderError::internal(format!("create {}", config_dir.display()), e))?;
    let path = config_dir.join(PROJECTS_FILE);
    crate::atomic_file::write(&path, text.as_bytes(), crate::atomic_file::Sync::ToDisk)
        .map_err(|e| VaiderError::internal(format!("write {}", path.display()), e))
}

fn initialised_projects(config_dir: &Path) -> Vec<PathBuf> {
    std::fs::read_to_string(config_dir.join(PROJECTS_FILE))
        .unwrap_or_default()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(PathBuf::from)
        .collect()
}

fn read_dotenv(path: &Path, names: &[String]) -> Option<ApiKey> {
    let entries = dotenvy::from_path_iter(path).ok()?;
    let found: Vec<(String, String)> = entries.filter_map(|e| e.ok()).collect();
    names.iter().find_map(|name| {
        found
            .iter()
            .find(|(k, v)| k == name && !v.trim().is_empty())
            .map(|(_, v)| ApiKey::new(v.clone()))
    })
}

fn entry(provider: &str) -> std::result::Result<keyring::Entry, keyring::Error> {
    keyring::Entry::new(KEYCHAIN_SERVICE, provider)
}

/// The keychain service of plans' secret values (a test account's password), apart from the
/// provider keys' service: a plan can name an entry here and nothing else, so no plan can have
/// a provider key read for it.
pub const PLAN_SECRETS_SERVICE: &str = "vaider-plan-secrets";

/// Reads a plan's secret value from the keychain (service [`PLAN_SECRETS_SERVICE`]). Blocking.
pub fn plan_secret_get(name: &str) -> Result<Option<ApiKey>> {
    match keyring::Entry::new(PLAN_SECRETS_SERVICE, name).and_then(|e| e.get_password()) {
        Ok(value) => Ok(Some(ApiKey(value))),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(e) => Err(keychain_error(e)),
    }
}

/// Stores a plan's secret value in the keychain (`vaider plan secret set NAME`). Blocking.
pub fn plan_secret_set(name: &str, value: &str) -> Result<()> {
    if value.is_empty() {
        return Err(VaiderError::InvalidRequest(
            "The value is empty: nothing was stored.".to_string(),
        ));
    }
    keyring::Entry::new(PLAN_SECRETS_SERVICE, name)
        .and_then(|e| e.set_password(value))
        .map_err(keychain_error)
}

/// Removes a plan's secret value; removing one that is not there is not an error.
pub fn plan_secret_delete(name: &str) -> Result<()> {
    match keyring::Entry::new(PLAN_SECRETS_SERVICE, name).and_then(|e| e.delete_credential()) {
        Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(e) => Err(keychain_error(e)),
    }
}

/// Reads a key from the OS keychain. Blocking: call it off the async runtime.
pub fn keychain_get(provider: &str) -> Result<Option<ApiKey>> {
    match entry(provider).and_then(|e| e.get_password()) {
        Ok(key) => Ok(Some(ApiKey::new(key))),
        Err(keyring::Error::NoEntry) => Ok(None),
        Err(e) => Err(keychain_error(e)),
    }
}

/// Stores a key in the OS keychain. Blocking.
pub fn keychain_set(provider: &str, key: &ApiKey) -> Result<()> {
    if key.expose().is_empty() {
        return Err(VaiderError::InvalidRequest(
            "The key is empty: nothing was stored.".to_string(),
        ));
    }
    entry(provider)
        .and_then(|e| e.set_password(key.expose()))
        .map_err(keychain_error)
}

/// Removes a key from the OS keychain; removing a key that is not there is not an error.
pub fn keychain_delete(provider: &str) -> Result<()> {
    match entry(provider).and_then(|e| e.delete_credential()) {
        Ok(()) | Err(keyring::Error::NoEntry) => Ok(()),
        Err(e) => Err(keychain_error(e)),
    }
}

pub fn keychain_status() -> KeychainStatus {
    match keyring::Entry::store_status() {
        Ok(()) => match entry("status-probe").and_then(|e| e.get_password()) {
            Ok(_) | Err(keyring::Error::NoEntry) => KeychainStatus::Available,
            Err(e) => KeychainStatus::Unavailable(describe_keyring_error(&e)),
        },
        Err(e) => KeychainStatus::Unavailable(describe_keyring_error(e)),
    }
}

fn keychain_error(e: keyring::Error) -> VaiderError {
    VaiderError::Internal {
        action: "use the OS keychain".to_string(),
        reason: format!(
            "{}. Set GEMINI_API_KEY in the environment or in a .env file instead.",
            describe_keyring_error(&e)
        ),
    }
}

fn describe_keyring_error(e: &keyring::Error) -> String {
    // keyring's messages can name the entry but never carry the secret itself.
    match e {
        keyring::Error::NoDefaultStore => {
            "no keychain service is available (on Linux: no Secret Service on the D-Bus session)"
                .to_string()
        }
        keyring::Error::NoStorageAccess(inner) | keyring::Error::PlatformFailure(inner) => {
            format!("the keychain could not be reached ({inner})")
        }
        other => other.to_string(),
    }
}

/// The bearer token every HTTP client must send. From `VAIDER_TOKEN`, else a file in the data
/// folder, created with a fresh random token (readable by the owner only) on first use.
pub fn server_token(data_dir: &Path) -> Result<String> {
    resolve_token(std::env::var("VAIDER_TOKEN").ok(), data_dir)
}

fn resolve_token(from_env: Option<String>, data_dir: &Path) -> Result<String> {
    if let Some(token) = from_env.filter(|t| !t.trim().is_empty()) {
        return Ok(token.trim().to_string());
    }
    private_secret(data_dir, "token", || {
        format!("vdr_{}", hex::encode(rand::random::<[u8; 24]>()))
    })
}

/// The secret kept in the data folder's file `name`, readable by its owner only; made by
/// `make` and written (0600) when there is none yet.
fn private_secret(data_dir: &Path, name: &str, make: impl FnOnce() -> String) -> Result<String> {
    let path = data_dir.join(name);
    keep_private(&path)?;
    match std::fs::read_to_string(&path) {
        Ok(secret) if !secret.trim().is_empty() => return Ok(secret.trim().to_string()),
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(VaiderError::internal(format!("read {}", path.display()), e)),
    }
    crate::atomic_file::create_private_dir(data_dir)
        .map_err(|e| VaiderError::internal(format!("create {}", data_dir.display()), e))?;
    let secret = make();
    write_private(&path, &secret)?;
    Ok(secret)
}

/// An existing secret file (the token, the login key) must be the user's own and readable by
/// them only: a loose mode (a copy, an unzip, a umask) is set back to `0600`; a file of
/// another user is refused.
fn keep_private(path: &Path) -> Result<()> {
    if std::fs::symlink_metadata(path).is_err() {
        return Ok(());
    }
    match crate::owner::make_private(path) {
        Ok(crate::owner::Privacy::Private) => Ok(()),
        Ok(crate::owner::Privacy::Tightened { was }) => {
            tracing::warn!(
                file = %path.display(),
                "a secret file was readable by others (mode {was:o}); it is now 0600. If it is the token, rotate it (vaider token --rotate) if others may have read it."
            );
            Ok(())
        }
        Err(why) => Err(VaiderError::InvalidRequest(format!(
            "{why} Remove it (a new one is made), or set VAIDER_TOKEN for the token.",
        ))),
    }
}

/// The key a local program shows to have a login code minted for a browser page (`vaider ui`):
/// a file in the data folder, readable by its owner only, created on first use. It is apart
/// from the token on purpose: an agent that holds only the token (a client on another machine,
/// a sandboxed tool) cannot sign a page in, and so cannot pass for a person in Vaider's window.
pub fn ui_login_key(data_dir: &Path) -> Result<String> {
    private_secret(data_dir, "login-key", || {
        format!("vdrl_{}", hex::encode(rand::random::<[u8; 32]>()))
    })
}

/// The file the server's token is kept in, when it comes from one (not from `VAIDER_TOKEN`).
pub fn token_file(data_dir: &Path) -> Option<std::path::PathBuf> {
    let from_env = std::env::var("VAIDER_TOKEN").is_ok_and(|t| !t.trim().is_empty());
    (!from_env).then(|| data_dir.join("token"))
}

/// `vaider token --rotate`: a fresh token replaces the file's (a running server notices on its
/// next request and ends every UI session). Refused when the token comes from `VAIDER_TOKEN`,
/// which only its owner can change.
pub fn rotate_token(data_dir: &Path) -> Result<String> {
    let Some(path) = token_file(data_dir) else {
        return Err(VaiderError::InvalidRequest(
            "The token comes from VAIDER_TOKEN: set a new value there (and restart the server) to rotate it.".into(),
        ));
    };
    std::fs::create_dir_all(data_dir)
        .map_err(|e| VaiderError::internal(format!("create {}", data_dir.display()), e))?;
    let token = format!("vdr_{}", hex::encode(rand::random::<[u8; 24]>()));
    // A new private file renamed over the old: a server reading it sees one token or the other.
    let fresh = data_dir.join("token.new");
    let _ = std::fs::remove_file(&fresh);
    write_private(&fresh, &token)?;
    std::fs::rename(&fresh, &path)
        .map_err(|e| VaiderError::internal(format!("replace {}", path.display()), e))?;
    Ok(token)
}

fn write_private(path: &Path, text: &str) -> Result<()> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = options
        .open(path)
        .map_err(|e| VaiderError::internal(format!("create {}", path.display()), e))?;
    file.write_all(text.as_bytes())
        .map_err(|e| VaiderError::internal(format!("write {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_key_never_prints() {
        let key = ApiKey::new("AIzaSECRET");
        assert_eq!(format!("{key:?}"), "ApiKey(***)");
        assert!(!format!("{:?}", Some(key)).contains("SECRET"));
    }

    #[test]
    fn every_provider_has_environment_names() {
        assert_eq!(
            env_names("gemini"),
            vec!["GEMINI_API_KEY", "GOOGLE_API_KEY"]
        );
        assert_eq!(env_names("openai"), vec!["OPENAI_API_KEY"]);
        assert_eq!(env_names("my-proxy"), vec!["MY_PROXY_API_KEY"]);
    }

    #[test]
    fn dotenv_file_supplies_a_key() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join(".env"),
            "OTHER=1\nGOOGLE_API_KEY=from-dotenv\n",
        )
        .unwrap();
        let key = read_dotenv(&dir.path().join(".env"), &env_names("gemini")).unwrap();
        assert_eq!(key.expose(), "from-dotenv");
    }

    #[test]
    fn only_an_initialised_project_adds_its_dotenv() {
        let config = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let stray = dotenv_dirs(config.path(), Some(project.path()));
        assert_eq!(stray, [config.path().to_path_buf()]);
        remember_project(config.path(), project.path()).unwrap();
        remember_project(config.path(), project.path()).unwrap();
        let dirs = dotenv_dirs(config.path(), Some(project.path()));
        assert_eq!(dirs.len(), 2);
        assert_eq!(dirs[1], project.path().canonicalize().unwrap());
        assert_eq!(initialised_projects(config.path()).len(), 1);
    }

    #[test]
    fn a_rotated_token_is_new_and_private() {
        let dir = tempfile::tempdir().unwrap();
        let first = resolve_token(None, dir.path()).unwrap();
        let rotated = rotate_token(dir.path()).unwrap();
        assert_ne!(first, rotated);
        assert_eq!(resolve_token(None, dir.path()).unwrap(), rotated);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("token"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    #[cfg(unix)]
    #[test]
    fn a_token_file_readable_by_others_is_made_private_again() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "vdr_old\n").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert_eq!(resolve_token(None, dir.path()).unwrap(), "vdr_old");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    /// Another user's file: only root can make one in a test, so the test runs as root (as
    /// the CI container does) and is skipped otherwise.
    #[cfg(unix)]
    #[test]
    fn a_token_file_of_another_user_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        if crate::owner::current_user() != 0 {
            eprintln!("skipped: only root can give a file to another user");
            return;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "vdr_theirs").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
        let err = resolve_token(None, dir.path()).unwrap_err().to_string();
        assert!(err.contains("belongs to another user (uid 65534"), "{err}");
        assert!(err.contains("VAIDER_TOKEN"), "{err}");
        assert!(!err.contains("vdr_theirs"), "{err}");
        // Left as it was: not Vaider's to change.
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o644);
    }

    #[test]
    fn token_is_created_once_and_kept_private() {
        let dir = tempfile::tempdir().unwrap();
        let first = resolve_token(None, dir.path()).unwrap();
        let second = resolve_token(None, dir.path()).unwrap();
        assert_eq!(
            resolve_token(Some(" env-token ".into()), dir.path()).unwrap(),
            "env-token"
        );
        assert_eq!(first, second);
        assert!(first.len() > 40);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("token"))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o077, 0, "token file must be private");
        }
    }
}
