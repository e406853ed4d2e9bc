//! `vaider init`: writes an agent's MCP configuration (URL and token header) and the
//! VaiderRules.txt into a project, so Cursor, Claude Code or VS Code find Vaider and know when
//! to call it. The same builder backs the tray app's "Copy MCP config" menu.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::error::{Result, VaiderError};

/// The rules an agent follows when calling Vaider; shipped at the repository root.
pub const RULES: &str = include_str!("../../../VaiderRules.txt");

/// The environment variable that Cursor's and Claude Code's project configs read the token
/// from. `vaider serve` honours it too, so exporting `$(vaider token)` keeps both in step.
pub const TOKEN_VARIABLE: &str = "VAIDER_TOKEN";

/// The id of the VS Code `inputs` entry that asks for the token once and keeps it in the
/// editor's secret storage.
pub const VSCODE_TOKEN_INPUT: &str = "vaider-token";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Client {
    Cursor,
    ClaudeCode,
    VsCode,
}

/// How a config carries Vaider's token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenIn<'a> {
    /// The client's own placeholder, resolved by the client when it connects, so the file
    /// holds no secret and can be committed.
    Variable,
    /// The token itself: for the clipboard, or a file kept out of version control.
    Literal(&'a str),
}

impl Client {
    pub fn parse(name: &str) -> Option<Client> {
        match name.to_ascii_lowercase().as_str() {
            "cursor" => Some(Client::Cursor),
            "claude" | "claude-code" | "claudecode" => Some(Client::ClaudeCode),
            "vscode" | "vs-code" | "code" => Some(Client::VsCode),
            _ => None,
        }
    }

    /// Where the project-level MCP config lives, relative to the project root.
    pub fn config_path(self) -> &'static str {
        match self {
            Client::Cursor => ".cursor/mcp.json",
            Client::ClaudeCode => ".mcp.json",
            Client::VsCode => ".vscode/mcp.json",
        }
    }

    /// The config snippet for Vaider alone, with the token itself (the tray's clipboard copy,
    /// pasted into a user-level config).
    pub fn snippet(self, url: &str, token: &str) -> Value {
        self.config(url, TokenIn::Literal(token))
    }

    /// The config for Vaider alone, with the token as `token` says. For VS Code, a variable
    /// token adds the top-level `inputs` entry its `${input:…}` placeholder refers to.
    pub fn config(self, url: &str, token: TokenIn) -> Value {
        let bearer = match (token, self) {
            (TokenIn::Literal(token), _) => format!("Bearer {token}"),
            (TokenIn::Variable, Client::Cursor) => format!("Bearer ${{env:{TOKEN_VARIABLE}}}"),
            (TokenIn::Variable, Client::ClaudeCode) => format!("Bearer ${{{TOKEN_VARIABLE}}}"),
            (TokenIn::Variable, Client::VsCode) => {
                format!("Bearer ${{input:{VSCODE_TOKEN_INPUT}}}")
            }
        };
        let headers = json!({ "Authorization": bearer });
        match self {
            Client::Cursor => json!({"mcpServers": {"vaider": {"url": url, "headers": headers}}}),
            Client::ClaudeCode => {
                json!({"mcpServers": {"vaider": {"type": "http", "url": url, "headers": headers}}})
            }
            Client::VsCode => {
                let mut config = json!({"servers": {"vaider": {"type": "http", "url": url, "headers": headers}}});
                if token == TokenIn::Variable {
                    config["inputs"] = json!([{
                        "type": "promptString",
                        "id": VSCODE_TOKEN_INPUT,
                        "description": "Vaider token (`vaider token` prints it)",
                        "password": true,
                    }]);
                }
                config
            }
        }
    }

    /// The key of the object that holds the servers in this client's config.
    fn servers_key(self) -> &'static str {
        match self {
            Client::Cursor | Client::ClaudeCode => "mcpServers",
            Client::VsCode => "servers",
        }
    }
}

/// Where the token ended up, so `vaider init` can say what was done and what is left to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenPlacement {
    /// The config holds the client's placeholder, not the token.
    Variable,
    /// The config holds the token; what was done to keep it out of version control.
    Literal(GitIgnore),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GitIgnore {
    /// The config's path was added to this `.gitignore`.
    Added(PathBuf),
    /// This `.gitignore` already listed it.
    AlreadyListed(PathBuf),
    /// The project is not inside a git repository: nothing to ignore it in.
    NotARepository,
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

/// Writes (or merges into) the client's MCP config and writes VaiderRules.txt in `project`.
/// Other servers (and VS Code inputs) already in the config are kept; a config that is not
/// JSON is left untouched. A literal token also puts the config in the project's `.gitignore`
/// when the project is in a git repository.
pub fn init(project: &Path, client: Client, url: &str, token: TokenIn) -> Result<InitReport> {
    let config_file = project.join(client.config_path());
    let (mut config, merged) = match std::fs::read_to_string(&config_file) {
        Ok(text) => {
            let value: Value = serde_json::from_str(&text).map_err(|e| {
                VaiderError::InvalidRequest(format!(
                    "{} exists but is not valid JSON ({e}); fix or remove it, then run init again. Nothing was changed.",
                    config_file.display()
                ))
            })?;
            (value, true)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => (json!({}), false),
        Err(e) => {
            return Err(VaiderError::internal(
                format!("read {}", config_file.display()),
                e,
            ))
        }
    };
    merge(&mut config, client, client.config(url, token));
    if let Some(parent) = config_file.parent() {
        std::fs::create_dir_all(parent)
            .map_err(|e| VaiderError::internal(format!("create {}", parent.display()), e))?;
    }
    let text = serde_json::to_string_pretty(&config).unwrap_or_default() + "\n";
    std::fs::write(&config_file, text)
        .map_err(|e| VaiderError::internal(format!("write {}", config_file.display()), e))?;
    let rules_file = project.join("VaiderRules.txt");
    std::fs::write(&rules_file, RULES)
        .map_err(|e| VaiderError::internal(format!("write {}", rules_file.display()), e))?;
    let token = match token {
        TokenIn::Variable => TokenPlacement::Variable,
        TokenIn::Literal(_) => TokenPlacement::Literal(ignore_in_git(project, client)?),
    };
    Ok(InitReport {
        config_file,
        rules_file,
        merged,
        token,
    })
}

/// Puts Vaider's entry (and, for VS Code, its token input) into an existing config, keeping
/// everything else; a section of the wrong type is replaced.
fn merge(config: &mut Value, client: Client, ours: Value) {
    if !config.is_object() {
        *config = json!({});
    }
    let servers = &mut config[client.servers_key()];
    if !servers.is_object() {
        *servers = json!({});
    }
    servers["vaider"] = ours[client.servers_key()]["vaider"].clone();
    if let Some(Value::Array(our_inputs)) = ours.get("inputs") {
        let inputs = &mut config["inputs"];
        if !inputs.is_array() {
            *inputs = json!([]);
        }
        if let Value::Array(inputs) = inputs {
            inputs.retain(|input| input["id"] != VSCODE_TOKEN_INPUT);
            inputs.extend(our_inputs.iter().cloned());
        }
    }
}

/// Adds the client's config to the `.gitignore` in `project` when `project` is inside a git
/// repository (a `.git` folder, or the `.git` file of a worktree, here or above).
fn ignore_in_git(project: &Path, client: Client) -> Result<GitIgnore> {
    let absolute = std::path::absolute(project).unwrap_or_else(|_| project.to_path_buf());
    if !absolute.ancestors().any(|dir| dir.join(".git").exists()) {
        return Ok(GitIgnore::NotARepository);
    }
    let gitignore = project.join(".gitignore");
    // Anchored to the .gitignore's folder, so a file of that name deeper down is not ignored.
    let entry = format!("/{}", client.config_path());
    let existing = match std::fs::read_to_string(&gitignore) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(VaiderError::internal(
                format!("read {}", gitignore.display()),
                e,
            ))
        }
    };
    let listed = existing
        .lines()
        .map(str::trim)
        .any(|line| line == entry || line == client.config_path());
    if listed {
        return Ok(GitIgnore::AlreadyListed(gitignore));
    }
    let mut text = existing;
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# Holds the Vaider token (written by `vaider init --inline-token`)\n");
    text.push_str(&entry);
    text.push('\n');
    std::fs::write(&gitignore, text)
        .map_err(|e| VaiderError::internal(format!("write {}", gitignore.display()), e))?;
    Ok(GitIgnore::Added(gitignore))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_json(path: &Path) -> Value {
        serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    #[test]
    fn init_merges_into_an_existing_cursor_config() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".cursor")).unwrap();
        std::fs::write(
            dir.path().join(".cursor/mcp.json"),
            r#"{"mcpServers":{"other":{"command":"x"}}}"#,
        )
        .unwrap();
        let report = init(
            dir.path(),
            Client::Cursor,
            "http://127.0.0.1:3456/mcp",
            TokenIn::Literal("tok"),
        )
        .unwrap();
        assert!(report.merged);
        let config = read_json(&report.config_file);
        assert_eq!(config["mcpServers"]["other"]["command"], "x");
        assert_eq!(
            config["mcpServers"]["vaider"]["url"],
            "http://127.0.0.1:3456/mcp"
        );
        assert_eq!(
            config["mcpServers"]["vaider"]["headers"]["Authorization"],
            "Bearer tok"
        );
        assert!(std::fs::read_to_string(report.rules_file)
            .unwrap()
            .contains("Mismatch retries: at most 5"));
    }

    #[test]
    fn each_client_gets_its_own_file_and_shape() {
        let dir = tempfile::tempdir().unwrap();
        let vscode = init(
            dir.path(),
            Client::VsCode,
            "http://u/mcp",
            TokenIn::Variable,
        )
        .unwrap();
        let config = read_json(&vscode.config_file);
        assert_eq!(config["servers"]["vaider"]["type"], "http");
        let claude = init(
            dir.path(),
            Client::ClaudeCode,
            "http://u/mcp",
            TokenIn::Variable,
        )
        .unwrap();
        assert!(claude.config_file.ends_with(".mcp.json"));
    }

    #[test]
    fn project_configs_name_the_token_in_each_clients_own_syntax() {
        let dir = tempfile::tempdir().unwrap();
        for (client, section, header) in [
            (Client::Cursor, "mcpServers", "Bearer ${env:VAIDER_TOKEN}"),
            (Client::ClaudeCode, "mcpServers", "Bearer ${VAIDER_TOKEN}"),
            (Client::VsCode, "servers", "Bearer ${input:vaider-token}"),
        ] {
            let report = init(dir.path(), client, "http://u/mcp", TokenIn::Variable).unwrap();
            assert_eq!(report.token, TokenPlacement::Variable);
            let config = read_json(&report.config_file);
            assert_eq!(
                config[section]["vaider"]["headers"]["Authorization"], header,
                "{client:?}"
            );
        }
        // VS Code resolves `${input:vaider-token}` from a top-level input that asks once and
        // hides what is typed.
        let vscode = read_json(&dir.path().join(".vscode/mcp.json"));
        assert_eq!(
            vscode["inputs"],
            json!([{
                "type": "promptString",
                "id": "vaider-token",
                "description": "Vaider token (`vaider token` prints it)",
                "password": true,
            }])
        );
        assert!(!dir.path().join(".gitignore").exists());
    }

    #[test]
    fn init_replaces_a_token_written_earlier_and_keeps_other_inputs() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".vscode")).unwrap();
        std::fs::write(
            dir.path().join(".vscode/mcp.json"),
            r#"{"inputs":[{"type":"promptString","id":"other-key","password":true}],
                "servers":{"other":{"command":"x"}}}"#,
        )
        .unwrap();
        init(
            dir.path(),
            Client::VsCode,
            "http://u/mcp",
            TokenIn::Literal("secret-token-1234"),
        )
        .unwrap();
        // Run twice: the second run must not add a second copy of Vaider's input.
        for _ in 0..2 {
            init(
                dir.path(),
                Client::VsCode,
                "http://u/mcp",
                TokenIn::Variable,
            )
            .unwrap();
        }
        let text = std::fs::read_to_string(dir.path().join(".vscode/mcp.json")).unwrap();
        assert!(!text.contains("secret-token-1234"), "{text}");
        let config: Value = serde_json::from_str(&text).unwrap();
        let ids: Vec<&str> = config["inputs"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|input| input["id"].as_str())
            .collect();
        assert_eq!(ids, ["other-key", "vaider-token"]);
        assert_eq!(config["servers"]["other"]["command"], "x");
    }

    #[test]
    fn a_literal_token_puts_the_config_in_the_repositorys_gitignore_once() {
        let repo = tempfile::tempdir().unwrap();
        std::fs::create_dir(repo.path().join(".git")).unwrap();
        let project = repo.path().join("app");
        std::fs::create_dir(&project).unwrap();
        std::fs::write(project.join(".gitignore"), "node_modules").unwrap();
        let report = init(
            &project,
            Client::ClaudeCode,
            "http://u/mcp",
            TokenIn::Literal("tok"),
        )
        .unwrap();
        let gitignore = project.join(".gitignore");
        assert_eq!(
            report.token,
            TokenPlacement::Literal(GitIgnore::Added(gitignore.clone()))
        );
        let again = init(
            &project,
            Client::ClaudeCode,
            "http://u/mcp",
            TokenIn::Literal("tok"),
        )
        .unwrap();
        assert_eq!(
            again.token,
            TokenPlacement::Literal(GitIgnore::AlreadyListed(gitignore.clone()))
        );
        let text = std::fs::read_to_string(&gitignore).unwrap();
        let lines: Vec<&str> = text.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(lines, ["node_modules", "/.mcp.json"]);
    }

    #[test]
    fn a_literal_token_outside_git_is_reported_as_such() {
        let dir = tempfile::tempdir().unwrap();
        let report = init(
            dir.path(),
            Client::Cursor,
            "http://u/mcp",
            TokenIn::Literal("tok"),
        )
        .unwrap();
        assert_eq!(
            report.token,
            TokenPlacement::Literal(GitIgnore::NotARepository)
        );
        assert!(!dir.path().join(".gitignore").exists());
    }

    #[test]
    fn a_broken_config_is_not_overwritten() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".mcp.json"), "{ not json").unwrap();
        assert!(init(
            dir.path(),
            Client::ClaudeCode,
            "http://u/mcp",
            TokenIn::Variable
        )
        .is_err());
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".mcp.json")).unwrap(),
            "{ not json"
        );
    }

    #[test]
    fn the_clipboard_snippet_carries_the_token_itself() {
        // The tray copies this into a user-level config (and its desktop test checks it).
        let snippet = Client::VsCode.snippet("http://u/mcp", "tok");
        assert_eq!(
            snippet,
            json!({"servers": {"vaider": {"type": "http", "url": "http://u/mcp",
                "headers": {"Authorization": "Bearer tok"}}}})
        );
    }
}
