//! Where a client keeps its user-level config, found as the client itself finds it: under the
//! home folder, unless the client's own variable or the platform puts it elsewhere.
//!
//! - Codex reads `$CODEX_HOME/config.toml`, else `~/.codex/config.toml`.
//! - Gemini CLI takes `$GEMINI_CLI_HOME` for the home folder:
//!   `$GEMINI_CLI_HOME/.gemini/settings.json`, else `~/.gemini/settings.json`.
//! - Zed reads `~/.config/zed/settings.json` on macOS; on Linux
//!   `$XDG_CONFIG_HOME/zed/settings.json` when that is set (absolute, as the `dirs` crate Zed
//!   uses takes it), else `~/.config/zed/settings.json`; on Windows
//!   `%APPDATA%\Zed\settings.json`.
//!
//! An empty variable counts as not set, as in those clients. The variables are looked up
//! through `var` and the platform is `os` (`std::env::consts::OS`), so every case is testable
//! on any machine.

use std::path::{Path, PathBuf};

use super::{Client, Scope};

/// The client's user-level config file, or None where it has none.
pub(super) fn user_config_file(
    client: Client,
    home: &Path,
    var: impl Fn(&str) -> Option<String>,
    os: &str,
) -> Option<PathBuf> {
    let relative = client.config_path(Scope::User)?;
    let set = |name: &str| {
        var(name)
            .filter(|value| !value.is_empty())
            .map(PathBuf::from)
    };
    Some(match client {
        Client::Codex => match set("CODEX_HOME") {
            Some(codex_home) => codex_home.join("config.toml"),
            None => home.join(relative),
        },
        Client::GeminiCli => set("GEMINI_CLI_HOME")
            .unwrap_or_else(|| home.into())
            .join(relative),
        Client::Zed => zed_settings(home, set, os),
        _ => home.join(relative),
    })
}

/// Zed's user settings.json on `os`.
fn zed_settings(home: &Path, set: impl Fn(&str) -> Option<PathBuf>, os: &str) -> PathBuf {
    let config_dir = match os {
        "windows" => {
            let appdata = set("APPDATA").unwrap_or_else(|| home.join("AppData").join("Roaming"));
            return appdata.join("Zed").join("settings.json");
        }
        "macos" => None,
        _ => set("XDG_CONFIG_HOME").filter(|dir| dir.is_absolute()),
    };
    config_dir
        .unwrap_or_else(|| home.join(".config"))
        .join("zed")
        .join("settings.json")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(client: Client, vars: &[(&str, &str)], os: &str) -> Option<PathBuf> {
        let var = |name: &str| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| v.to_string())
        };
        user_config_file(client, Path::new("/home/u"), var, os)
    }

    #[test]
    fn codex_and_gemini_cli_follow_their_own_home_variables() {
        let p = PathBuf::from;
        assert_eq!(
            file(Client::Codex, &[], "linux"),
            Some(p("/home/u/.codex/config.toml"))
        );
        assert_eq!(
            file(Client::GeminiCli, &[], "linux"),
            Some(p("/home/u/.gemini/settings.json"))
        );
        let moved = [("CODEX_HOME", "/srv/codex"), ("GEMINI_CLI_HOME", "/srv/g")];
        // CODEX_HOME is Codex's folder itself; GEMINI_CLI_HOME stands for the home folder.
        assert_eq!(
            file(Client::Codex, &moved, "linux"),
            Some(p("/srv/codex/config.toml"))
        );
        assert_eq!(
            file(Client::GeminiCli, &moved, "macos"),
            Some(p("/srv/g/.gemini/settings.json"))
        );
        assert_eq!(
            file(Client::Codex, &[("CODEX_HOME", "")], "linux"),
            Some(p("/home/u/.codex/config.toml"))
        );
        // Other clients have no such variable.
        assert_eq!(
            file(Client::Cursor, &moved, "linux"),
            Some(p("/home/u/.cursor/mcp.json"))
        );
        assert_eq!(file(Client::VsCode, &moved, "linux"), None);
    }

    #[test]
    fn zeds_settings_are_where_zed_looks_on_each_platform() {
        let p = PathBuf::from;
        let xdg = [
            ("XDG_CONFIG_HOME", "/cfg"),
            ("APPDATA", "C:/Users/u/AppData/Roaming"),
        ];
        assert_eq!(
            file(Client::Zed, &[], "linux"),
            Some(p("/home/u/.config/zed/settings.json"))
        );
        assert_eq!(
            file(Client::Zed, &xdg, "linux"),
            Some(p("/cfg/zed/settings.json"))
        );
        // A relative XDG_CONFIG_HOME is ignored, as the dirs crate ignores it.
        assert_eq!(
            file(Client::Zed, &[("XDG_CONFIG_HOME", "cfg")], "linux"),
            Some(p("/home/u/.config/zed/settings.json"))
        );
        assert_eq!(
            file(Client::Zed, &xdg, "macos"),
            Some(p("/home/u/.config/zed/settings.json"))
        );
        assert_eq!(
            file(Client::Zed, &xdg, "windows"),
            Some(p("C:/Users/u/AppData/Roaming/Zed/settings.json"))
        );
        assert_eq!(
            file(Client::Zed, &[], "windows"),
            Some(p("/home/u/AppData/Roaming/Zed/settings.json"))
        );
    }
}
