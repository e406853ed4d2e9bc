//! The environment of every process Vaider starts (Playwright, ffmpeg and ffprobe, Chromium,
//! the capture programs, the file manager). A child begins from an allow-list (the path, the
//! home folder, the locale, the display session, proxies, CI flags, temporary folders, the
//! project's own `PLAYWRIGHT_*` and `NODE_*` settings) plus the names the user declares
//! (`child_env_pass`, `VAIDER_CHILD_ENV_PASS`). A secret never passes, declared or not: the
//! provider keys, Vaider's token, cloud credentials, every variable Vaider reads for a secret
//! (a plan's secret values included), and any name that looks like one. A test, a reporter or
//! a dependency the child runs can therefore read nothing Vaider was trusted with.
//!
//! The allow-list depends on the kind of child ([`ChildKind`]): the desktop programs Vaider
//! chose (capture programs, ffmpeg, the file manager, Chromium) keep the session bus, which
//! some need; the project's own code (Playwright, its tests and reporters) does not get the
//! session bus's address or the runtime folder it lives in, so it is not pointed at the
//! desktop's Secret Service, where Vaider's keys are kept.

use std::collections::BTreeSet;
use std::ffi::{OsStr, OsString};
use std::sync::RwLock;

/// Names that pass as they are.
const ALLOWED: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "TZ",
    "LANG",
    "LANGUAGE",
    "TERM",
    "TMPDIR",
    "TEMP",
    "TMP",
    // The display session (desktop capture, a headed browser, the file manager).
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "XAUTHORITY",
    "XDG_RUNTIME_DIR",
    "XDG_SESSION_TYPE",
    "XDG_CURRENT_DESKTOP",
    "XDG_DATA_DIRS",
    "XDG_CONFIG_DIRS",
    "XDG_CONFIG_HOME",
    "XDG_CACHE_HOME",
    "XDG_DATA_HOME",
    "DBUS_SESSION_BUS_ADDRESS",
    // Proxies, in both spellings programs read.
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    // CI flags (Playwright changes its defaults on CI).
    "CI",
    "CONTINUOUS_INTEGRATION",
    // What a Windows program needs to start at all.
    "SYSTEMROOT",
    "SystemRoot",
    "WINDIR",
    "COMSPEC",
    "PATHEXT",
    "USERPROFILE",
    "APPDATA",
    "LOCALAPPDATA",
    "PROGRAMFILES",
    "ProgramFiles",
    "ProgramData",
];

/// Names of the allow-list that lead to the desktop session's services (the session bus and
/// the Secret Service on it, the runtime folder holding its socket): for tools only.
const SESSION_ONLY: &[&str] = &["DBUS_SESSION_BUS_ADDRESS", "XDG_RUNTIME_DIR"];

/// Who a child is: it decides the allow-list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChildKind {
    /// A program Vaider chose for a task of its own: a capture program, ffmpeg, the file
    /// manager, Chromium.
    Tool,
    /// Code of the project's choosing: Playwright, the tests, their reporters and
    /// dependencies.
    ProjectCode,
}

/// Families that pass: the locale, and the project's own Playwright and Node settings.
const ALLOWED_PREFIXES: &[&str] = &["LC_", "PLAYWRIGHT_", "NODE_"];

/// Names that never pass, declared or not.
const DENIED: &[&str] = &[
    "VAIDER_TOKEN",
    "GITHUB_TOKEN",
    "GH_TOKEN",
    "NODE_AUTH_TOKEN",
];

/// Families of credentials: cloud accounts and the model providers.
const DENIED_PREFIXES: &[&str] = &[
    "AWS_",
    "GOOGLE_",
    "GCLOUD_",
    "GCP_",
    "AZURE_",
    "GEMINI_",
    "OPENAI_",
    "ANTHROPIC_",
    "ZAI_",
    "Z_AI_",
];

/// Endings of a secret's name (`MYPROXY_API_KEY`, `NPM_TOKEN`, `DB_PASSWORD`, ...).
const DENIED_SUFFIXES: &[&str] = &[
    "_API_KEY",
    "_APIKEY",
    "_KEY",
    "_TOKEN",
    "_SECRET",
    "_PASSWORD",
    "_CREDENTIALS",
];

/// What the user declared to pass, and the names Vaider read a secret from while running.
struct Declared {
    pass: BTreeSet<String>,
    secrets: BTreeSet<String>,
}

static DECLARED: RwLock<Declared> = RwLock::new(Declared {
    pass: BTreeSet::new(),
    secrets: BTreeSet::new(),
});

/// Puts the user's pass-through list (`child_env_pass`) in force for children started from now.
pub fn declare_pass_through(names: &[String]) {
    let mut declared = DECLARED.write().unwrap_or_else(|p| p.into_inner());
    declared.pass = names.iter().map(|n| n.trim().to_string()).collect();
}

/// Records that Vaider read a secret from the variable `name` (a plan's secret value): from
/// now on it never reaches a child, even when declared.
pub fn mark_secret(name: &str) {
    let mut declared = DECLARED.write().unwrap_or_else(|p| p.into_inner());
    declared.secrets.insert(name.to_string());
}

/// Whether the variable `name` may reach a child, given the declared pass-through list and
/// the names Vaider read secrets from.
pub fn passes(name: &str, pass: &BTreeSet<String>, secrets: &BTreeSet<String>) -> bool {
    if is_secret(name) || secrets.contains(name) {
        return false;
    }
    ALLOWED.contains(&name)
        || ALLOWED_PREFIXES.iter().any(|p| name.starts_with(p))
        || pass.contains(name)
}

/// Whether `name` is a secret by Vaider's own rules: the credentials in the table of
/// environment variables, Vaider's token, cloud and provider families, and secret-like names.
pub fn is_secret(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    DENIED.contains(&upper.as_str())
        || DENIED_PREFIXES.iter().any(|p| upper.starts_with(p))
        || DENIED_SUFFIXES.iter().any(|s| upper.ends_with(s))
        || crate::env_vars::ALL
            .iter()
            .any(|v| v.group == crate::env_vars::Group::Credentials && v.name == upper)
}

/// Whether `name` holds a credential of the machine or of Vaider (its token, a provider's key,
/// a cloud account, a code host's token): never a plan's secret, whoever asks. Unlike
/// [`is_secret`], a test account's `SHOP_PASSWORD` is not one.
pub fn is_machine_credential(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    DENIED.contains(&upper.as_str())
        || DENIED_PREFIXES.iter().any(|p| upper.starts_with(p))
        || ["_API_KEY", "_APIKEY", "_ACCESS_KEY", "_CREDENTIALS"]
            .iter()
            .any(|s| upper.ends_with(s))
        || ["NPM_TOKEN", "CARGO_REGISTRY_TOKEN", "SSH_AUTH_SOCK"].contains(&upper.as_str())
        || crate::env_vars::ALL
            .iter()
            .any(|v| v.group == crate::env_vars::Group::Credentials && v.name == upper)
}

/// Whether `name` may reach a child of `kind`: [`passes`], and for project code not the
/// session's services, even when declared.
pub fn passes_to(
    kind: ChildKind,
    name: &str,
    pass: &BTreeSet<String>,
    secrets: &BTreeSet<String>,
) -> bool {
    let session_only = kind == ChildKind::ProjectCode && SESSION_ONLY.contains(&name);
    !session_only && passes(name, pass, secrets)
}

/// The environment a tool gets, out of `vars` (the server's own).
pub fn filter(vars: impl Iterator<Item = (OsString, OsString)>) -> Vec<(OsString, OsString)> {
    filter_for(ChildKind::Tool, vars)
}

/// The environment a child of `kind` gets, out of `vars` (the server's own).
pub fn filter_for(
    kind: ChildKind,
    vars: impl Iterator<Item = (OsString, OsString)>,
) -> Vec<(OsString, OsString)> {
    let declared = DECLARED.read().unwrap_or_else(|p| p.into_inner());
    vars.filter(|(name, _)| {
        name.to_str()
            .is_some_and(|n| passes_to(kind, n, &declared.pass, &declared.secrets))
    })
    .collect()
}

/// The environment a tool gets, out of the server's own.
pub fn environment() -> Vec<(OsString, OsString)> {
    filter(std::env::vars_os())
}

/// Every variable of the server's environment that must not reach a child, with an empty
/// value: for a launcher that can add variables but not clear them (chromiumoxide's), so no
/// secret's value arrives.
pub fn blanked() -> Vec<(String, String)> {
    let passing: BTreeSet<OsString> = environment().into_iter().map(|(n, _)| n).collect();
    std::env::vars_os()
        .filter(|(name, _)| !passing.contains(name))
        .filter_map(|(name, _)| name.into_string().ok())
        .map(|name| (name, String::new()))
        .collect()
}

/// A tool's command, whose environment is [`environment`]. Every process Vaider starts is
/// made here or in [`project_command`].
pub fn command(program: impl AsRef<OsStr>) -> std::process::Command {
    let mut command = std::process::Command::new(program);
    command.env_clear().envs(environment());
    command
}

/// The same, for tokio.
pub fn async_command(program: impl AsRef<OsStr>) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    command.env_clear().envs(environment());
    command
}

/// A command running the project's code (Playwright and the tests), for tokio: the tool's
/// environment without the desktop session's services.
pub fn project_command(program: impl AsRef<OsStr>) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    command
        .env_clear()
        .envs(filter_for(ChildKind::ProjectCode, std::env::vars_os()));
    command
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(pass: &[&str], secrets: &[&str], vars: &[&str]) -> Vec<String> {
        let pass = pass.iter().map(|s| s.to_string()).collect();
        let secrets = secrets.iter().map(|s| s.to_string()).collect();
        vars.iter()
            .filter(|n| passes(n, &pass, &secrets))
            .map(|n| n.to_string())
            .collect()
    }

    #[test]
    fn the_allow_list_passes_and_nothing_else_does() {
        let vars = [
            "PATH",
            "HOME",
            "LC_ALL",
            "PLAYWRIGHT_BROWSERS_PATH",
            "NODE_OPTIONS",
            "DISPLAY",
            "HTTPS_PROXY",
            "CI",
            "MY_APP_SETTING",
            "EDITOR",
        ];
        assert_eq!(
            names(&[], &[], &vars),
            [
                "PATH",
                "HOME",
                "LC_ALL",
                "PLAYWRIGHT_BROWSERS_PATH",
                "NODE_OPTIONS",
                "DISPLAY",
                "HTTPS_PROXY",
                "CI"
            ]
        );
        assert_eq!(names(&["MY_APP_SETTING"], &[], &vars).len(), 9);
    }

    #[test]
    fn a_secret_never_passes_even_when_declared() {
        let secrets = [
            "GEMINI_API_KEY",
            "GOOGLE_API_KEY",
            "OPENAI_API_KEY",
            "MYPROXY_API_KEY",
            "VAIDER_TOKEN",
            "GITHUB_TOKEN",
            "NODE_AUTH_TOKEN",
            "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_PROFILE",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "AZURE_CLIENT_SECRET",
            "SHOP_ADMIN_PASSWORD",
            "PLAN_LOGIN",
        ];
        assert!(names(&secrets, &["PLAN_LOGIN"], &secrets).is_empty());
    }

    #[test]
    fn project_code_gets_no_session_bus_and_tools_do() {
        let none = BTreeSet::new();
        // Even declared, the session bus does not reach the project's code.
        let declared: BTreeSet<String> = SESSION_ONLY.iter().map(|s| s.to_string()).collect();
        for name in SESSION_ONLY {
            assert!(passes_to(ChildKind::Tool, name, &none, &none));
            assert!(!passes_to(ChildKind::ProjectCode, name, &declared, &none));
        }
        for name in ["PATH", "HOME", "DISPLAY", "PLAYWRIGHT_BROWSERS_PATH"] {
            assert!(passes_to(ChildKind::ProjectCode, name, &none, &none));
        }
    }

    #[test]
    fn a_command_gets_the_filtered_environment_only() {
        let command = command("true");
        let given: Vec<&OsStr> = command.get_envs().map(|(n, _)| n).collect();
        for name in given {
            let name = name.to_str().unwrap();
            assert!(!is_secret(name), "{name} reached a child");
        }
    }
}
