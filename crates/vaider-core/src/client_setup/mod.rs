//! `vaider init`: writes an agent's MCP configuration (URL and token) and the
//! VaiderRules.txt into a project, so Cursor, Claude Code, VS Code, Codex CLI, Gemini CLI,
//! Windsurf or Zed find Vaider and know when to call it; and, for `vaider doctor`, finds the
//! configs already written (in the project and the user's home) and checks each reaches the
//! server. The same builder backs the tray app's "Copy MCP config" menu.
//!
//! Each client's shape is in `entries`, reading and merging its file in `files`, keeping a
//! file with a token out of git in `gitignore`, where a user-level config lives in
//! `user_file`, and finding and checking configs in `configured`.

mod configured;
mod entries;
mod files;
mod gitignore;
mod user_file;

use std::path::{Path, PathBuf};

pub use configured::{find_configured, probe, Configured, Connection, Reach, TokenSource};
pub use gitignore::GitIgnore;

use crate::error::{Result, VaiderError};

/// The rules an agent follows when calling Vaider; shipped at the repository root.
pub const RULES: &str = include_str!("../../../../VaiderRules.txt");

/// The environment variable that the project configs read the token from. `vaider serve`
/// honours it too, so exporting `$(vaider token)` keeps both in step.
pub const TOKEN_VARIABLE: &str = "VAIDER_TOKEN";

/// The id of the VS Code `inputs` entry that asks for the token once and keeps it in the
/// editor's secret storage.
pub const VSCODE_TOKEN_INPUT: &str = "vaider-token";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    Cursor,
    ClaudeCode,
    VsCode,
    Codex,
    GeminiCli,
    Windsurf,
    Zed,
}

/// Where a config is kept: in the project (committed with it), or the user's own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    Project,
    User,
}

/// How a config carries Vaider's token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenIn<'a> {
    /// The client's own reference to `VAIDER_TOKEN` (or a prompt, or no token at all), so the
    /// file holds no secret and can be committed.
    Variable,
    /// The token itself: for the clipboard, or a file kept out of version control.
    Literal(&'a str),
    /// No token and no URL: the client starts Vaider itself over stdio from npm
    /// (`npx -y vaider stdio`), for a user who installed nothing else.
    Npx,
}

impl Client {
    pub const ALL: [Client; 7] = [
        Client::Cursor,
        Client::ClaudeCode,
        Client::VsCode,
        Client::Codex,
        Client::GeminiCli,
        Client::Windsurf,
        Client::Zed,
    ];

    /// The names `vaider init --client` takes.
    pub const NAMES: &'static str = "cursor, claude, vscode, codex, gemini, windsurf or zed";

    pub fn parse(name: &str) -> Option<Client> {
        match name.to_ascii_lowercase().as_str() {
            "cursor" => Some(Client::Cursor),
            "claude" | "claude-code" | "claudecode" => Some(Client::ClaudeCode),
            "vscode" | "vs-code" | "code" => Some(Client::VsCode),
            "codex" | "codex-cli" => Some(Client::Codex),
            "gemini" | "gemini-cli" => Some(Client::GeminiCli),
            "windsurf" => Some(Client::Windsurf),
            "zed" => Some(Client::Zed),
            _ => None,
        }
    }

    /// The client's name as its users know it.
    pub fn title(self) -> &'static str {
        match self {
            Client::Cursor => "Cursor",
            Client::ClaudeCode => "Claude Code",
            Client::VsCode => "VS Code",
            Client::Codex => "Codex CLI",
            Client::GeminiCli => "Gemini CLI",
            Client::Windsurf => "Windsurf",
            Client::Zed => "Zed",
        }
    }

    /// Where its config lives at `scope`, relative to the project root or the home folder;
    /// None where the client documents no such file (`init` says what to do instead).
    pub fn config_path(self, scope: Scope) -> Option<&'static str> {
        match (self, scope) {
            (Client::Cursor, _) => Some(".cursor/mcp.json"),
            (Client::ClaudeCode, Scope::Project) => Some(".mcp.json"),
            (Client::VsCode, Scope::Project) => Some(".vscode/mcp.json"),
            (Client::Codex, _) => Some(".codex/config.toml"),
            (Client::GeminiCli, _) => Some(".gemini/settings.json"),
            (Client::Windsurf, Scope::User) => Some(".codeium/windsurf/mcp_config.json"),
            (Client::Zed, Scope::Project) => Some(".zed/settings.json"),
            (Client::Zed, Scope::User) => Some(".config/zed/settings.json"),
            (Client::ClaudeCode | Client::VsCode, Scope::User) => None,
            (Client::Windsurf, Scope::Project) => None,
        }
    }

    /// The user-level config file under `home`, or where the client itself looks for it when
    /// its own variable (looked up with `var`: `CODEX_HOME`, `GEMINI_CLI_HOME`,
    /// `XDG_CONFIG_HOME`, `APPDATA`) or the platform moves it (see `user_file`); None where the
    /// client has no such file.
    pub fn user_config_file(
        self,
        home: &Path,
        var: impl Fn(&str) -> Option<String>,
    ) -> Option<PathBuf> {
        user_file::user_config_file(self, home, var, std::env::consts::OS)
    }

    /// The scope `init` writes when not told: the project, where the client has a file there.
    pub fn default_scope(self) -> Scope {
        match self.config_path(Scope::Project) {
            Some(_) => Scope::Project,
            None => Scope::User,
        }
    }

    /// The config for Vaider alone, with the token as `token` says (the tray's clipboard copy
    /// and `init`'s entry). A TOML client's config is the same table as JSON.
    pub fn config(self, url: &str, token: TokenIn) -> serde_json::Value {
        entries::config(self, url, token)
    }

    /// The config snippet for Vaider alone, with the token itself (the tray's clipboard copy,
    /// pasted into a user-level config).
    pub fn snippet(self, url: &str, token: &str) -> serde_json::Value {
        self.config(url, TokenIn::Literal(token))
    }

    /// The snippet as the text of the client's own file format (TOML for Codex).
    pub fn snippet_text(self, url: &str, token: TokenIn) -> String {
        files::render(self, &self.config(url, token))
    }
}

/// Where the token ended up, so `vaider init` can say what was done and what is left to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenPlacement {
    /// The config refers to `VAIDER_TOKEN` (or a prompt, or starts `vaider stdio`): no token.
    Variable,
    /// The config holds the token; what was done to keep it out of version control.
    Literal(GitIgnore),
}

/// Where `init` writes: the project folder (for the rules and a project config) and the home
/// folder (for a user config, unless the client's own variable moves it: see
/// [`Client::user_config_file`]).
#[derive(Debug, Clone, Copy)]
pub struct Place<'a> {
    pub project: &'a Path,
    pub home: &'a Path,
    pub scope: Scope,
}

impl Place<'_> {
    /// The client's config file here, or an error that says what to do instead.
    pub fn config_file(&self, client: Client) -> Result<PathBuf> {
        if self.scope == Scope::User {
            if let Some(file) = client.user_config_file(self.home, |name| std::env::var(name).ok())
            {
                return Ok(file);
            }
        }
        let Some(relative) = client.config_path(self.scope) else {
            return Err(VaiderError::InvalidRequest(match (client, self.scope) {
                (Client::ClaudeCode, _) => "Claude Code keeps user-level servers in its own state: run `claude mcp add --transport http --scope user --header \"Authorization: Bearer $(vaider token)\" vaider <url>`, or leave out --user for the project's .mcp.json.".into(),
                (Client::VsCode, _) => "VS Code's user-level MCP config lives in its profile: run the command \"MCP: Open User Configuration\" and paste the snippet, or leave out --user for the project's .vscode/mcp.json.".into(),
                _ => format!("{} has no project-level MCP config; use --user to write the user's own.", client.title()),
            }));
        };
        let base = match self.scope {
            Scope::Project => self.project,
            Scope::User => self.home,
        };
        Ok(base.join(relative))
    }
}

/// What `init` wrote.
#[derive(Debug)]
pub struct InitReport {
    pub config_file: PathBuf,
    pub rules_file: PathBuf,
    /// True when an existing config file was merged into rather than created.
    pub merged: bool,
    pub token: TokenPlacement,
}

/// Writes (or merges into) the client's project MCP config and writes VaiderRules.txt in
/// `project`. See [`init_at`].
pub fn init(project: &Path, client: Client, url: &str, token: TokenIn) -> Result<InitReport> {
    let place = Place {
        project,
        home: project,
        scope: Scope::Project,
    };
    init_at(place, client, url, token)
}

/// Writes (or merges into) the client's config at `place` and writes VaiderRules.txt in the
/// project. Other servers (and VS Code inputs) already in the config are kept; a config that
/// cannot be read as its format is left untouched. A literal token also puts a project config
/// in the project's `.gitignore` when the project is in a git repository.
pub fn init_at(place: Place, client: Client, url: &str, token: TokenIn) -> Result<InitReport> {
    let config_file = place.config_file(client)?;
    let merged = files::merge_into(&config_file, client, &client.config(url, token))?;
    let rules_file = place.project.join("VaiderRules.txt");
    std::fs::write(&rules_file, RULES)
        .map_err(|e| VaiderError::internal(format!("write {}", rules_file.display()), e))?;
    let token = match (token, place.scope) {
        (TokenIn::Variable | TokenIn::Npx, _) => TokenPlacement::Variable,
        (TokenIn::Literal(_), Scope::User) => TokenPlacement::Literal(GitIgnore::UserFile),
        (TokenIn::Literal(_), Scope::Project) => {
            let relative = client.config_path(Scope::Project).unwrap_or_default();
            TokenPlacement::Literal(gitignore::ignore_in_git(place.project, relative)?)
        }
    };
    Ok(InitReport {
        config_file,
        rules_file,
        merged,
        token,
    })
}

/// What the user still has to do so the client sends the token, when the config refers to it.
pub fn token_advice(client: Client) -> String {
    let var = TOKEN_VARIABLE;
    let export = format!("export {var}=\"$(vaider token)\"");
    match client {
        Client::VsCode => format!(
            "VS Code asks for it the first time it connects (the \"{VSCODE_TOKEN_INPUT}\" input) and keeps it in its secret storage: paste what `vaider token` prints."
        ),
        Client::Zed => "Zed starts `vaider stdio` itself (no token over stdio): `vaider` must be on the PATH Zed sees.".into(),
        Client::Codex => format!(
            "Codex reads the token from {var} (bearer_token_env_var). Before starting it, run (or add to your shell profile):\n    {export}\nA project's .codex/config.toml counts only in a project Codex trusts."
        ),
        _ => format!(
            "{} reads the token from {var}. Before starting it, run (or add to your shell profile):\n    {export}",
            client.title()
        ),
    }
}

#[cfg(test)]
mod tests;
