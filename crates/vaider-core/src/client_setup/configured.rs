//! For `vaider doctor`: the clients configured to use Vaider (their configs in the project and
//! in the user's home), what each will send (URL and token, or the `vaider stdio` command),
//! and whether that reaches the running server with a token it accepts. Only loopback URLs
//! are contacted: the token never goes anywhere else.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;

use super::entries::servers_key;
use super::{files, Client, Scope, VSCODE_TOKEN_INPUT};

/// One client config with a Vaider entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Configured {
    pub client: Client,
    pub file: PathBuf,
    pub connection: Connection,
}

/// How the client reaches Vaider, as its config says.
#[derive(Debug, Clone, PartialEq)]
pub enum Connection {
    Http {
        url: String,
        token: TokenSource,
    },
    /// It starts the server itself (`vaider stdio`): no URL, no token.
    Stdio {
        command: String,
    },
    /// The entry is there but cannot be understood (why).
    Unreadable(String),
}

/// Where the client takes the token from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenSource {
    /// Written in the config.
    Literal(String),
    /// An environment variable the client reads when it connects.
    Variable(String),
    /// The client asks the user and keeps it (VS Code's input).
    AskedByClient,
    /// No Authorization header at all.
    Missing,
}

impl TokenSource {
    /// The token the client will send, as seen from this process's environment.
    pub fn resolve(&self) -> Option<String> {
        match self {
            TokenSource::Literal(token) => Some(token.clone()),
            TokenSource::Variable(name) => std::env::var(name).ok().filter(|t| !t.is_empty()),
            TokenSource::AskedByClient | TokenSource::Missing => None,
        }
    }
}

/// Every client config in `project` and `home` (or where a client's own variable moves its
/// user config: `CODEX_HOME`, `GEMINI_CLI_HOME`) that has a Vaider entry, project first.
pub fn find_configured(project: &Path, home: &Path) -> Vec<Configured> {
    find_configured_with(project, home, |name| std::env::var(name).ok())
}

fn find_configured_with(
    project: &Path,
    home: &Path,
    var: impl Fn(&str) -> Option<String>,
) -> Vec<Configured> {
    let mut found = Vec::new();
    for scope in [Scope::Project, Scope::User] {
        for client in Client::ALL {
            let file = match scope {
                Scope::Project => client.config_path(scope).map(|p| project.join(p)),
                Scope::User => client.user_config_file(home, &var),
            };
            let Some(file) = file else {
                continue;
            };
            if found.iter().any(|c: &Configured| c.file == file) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            if let Some(connection) = connection_in(client, &text) {
                found.push(Configured {
                    client,
                    file,
                    connection,
                });
            }
        }
    }
    found
}

/// The Vaider entry of a config file's text, if it has one.
fn connection_in(client: Client, text: &str) -> Option<Connection> {
    let config: Value = match client {
        Client::Codex => match text.parse::<toml::Table>() {
            Ok(table) => serde_json::to_value(table).ok()?,
            Err(e) => return Some(Connection::Unreadable(format!("not valid TOML: {e}"))),
        },
        _ => match files::read_json(text) {
            Ok(value) => value,
            Err(e) => return Some(Connection::Unreadable(format!("not valid JSON: {e}"))),
        },
    };
    let entry = config.get(servers_key(client))?.get("vaider")?;
    Some(connection_of(entry))
}

fn connection_of(entry: &Value) -> Connection {
    let url = ["url", "httpUrl", "serverUrl"]
        .iter()
        .find_map(|key| entry.get(*key).and_then(Value::as_str));
    let Some(url) = url else {
        return match entry.get("command").and_then(Value::as_str) {
            Some(command) => Connection::Stdio {
                command: command.to_string(),
            },
            None => Connection::Unreadable("no url, httpUrl, serverUrl or command".into()),
        };
    };
    let header = ["headers", "http_headers"].iter().find_map(|key| {
        entry
            .get(*key)?
            .as_object()?
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("authorization"))
            .and_then(|(_, v)| v.as_str())
    });
    let token = match (
        entry.get("bearer_token_env_var").and_then(Value::as_str),
        header,
    ) {
        (Some(name), _) => TokenSource::Variable(name.to_string()),
        (None, Some(header)) => token_in_header(header),
        (None, None) => match entry
            .get("env_http_headers")
            .and_then(|h| h.get("Authorization"))
            .and_then(Value::as_str)
        {
            Some(name) => TokenSource::Variable(name.to_string()),
            None => TokenSource::Missing,
        },
    };
    Connection::Http {
        url: url.to_string(),
        token,
    }
}

/// `Bearer <token>`, `Bearer ${env:X}`, `Bearer ${X}`, `Bearer $X` or `Bearer ${input:id}`.
fn token_in_header(header: &str) -> TokenSource {
    let header = header.trim();
    let value = header
        .strip_prefix("Bearer")
        .or_else(|| header.strip_prefix("bearer"))
        .unwrap_or(header)
        .trim();
    if value == format!("${{input:{VSCODE_TOKEN_INPUT}}}") || value.starts_with("${input:") {
        return TokenSource::AskedByClient;
    }
    let variable = value
        .strip_prefix("${env:")
        .or_else(|| value.strip_prefix("${"))
        .and_then(|v| v.strip_suffix('}'))
        .or_else(|| value.strip_prefix('$'));
    match variable {
        Some(name) if !name.is_empty() => TokenSource::Variable(name.to_string()),
        _ if value.is_empty() => TokenSource::Missing,
        _ => TokenSource::Literal(value.to_string()),
    }
}

/// What happened when Vaider's endpoint was tried with the client's URL and token.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reach {
    /// The server answered and took the token.
    Ok,
    /// Nothing answers at that address.
    NotRunning,
    /// It answered 401: the token is wrong or missing.
    WrongToken,
    /// Not a loopback URL: Vaider never listens there, and the token is not sent.
    NotLoopback,
    /// Any other answer, with its status and what it said.
    Refused(u16, String),
}

/// Tries `url` as the client would (a `server/discover` request with the token), on loopback
/// only. Never panics; at most `timeout`.
pub async fn probe(url: &str, token: Option<&str>, timeout: Duration) -> Reach {
    if !is_loopback_url(url) {
        return Reach::NotLoopback;
    }
    let Ok(http) = reqwest::Client::builder()
        .timeout(timeout)
        .no_proxy()
        .build()
    else {
        return Reach::NotRunning;
    };
    let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "vaider-doctor", "version": crate::VERSION},
            "io.modelcontextprotocol/clientCapabilities": {}}}});
    let mut request = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "server/discover")
        .json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    match request.send().await {
        Err(_) => Reach::NotRunning,
        Ok(answer) if answer.status().is_success() => Reach::Ok,
        Ok(answer) if answer.status() == reqwest::StatusCode::UNAUTHORIZED => Reach::WrongToken,
        Ok(answer) => {
            let status = answer.status().as_u16();
            // Only the first lines are shown: whatever answers on the port is read no further.
            let head = crate::body::read_prefix(answer, 4096)
                .await
                .unwrap_or_default();
            let text = String::from_utf8_lossy(&head);
            Reach::Refused(status, text.chars().take(300).collect())
        }
    }
}

/// Whether `url` is http(s) to 127.0.0.0/8, ::1 or localhost.
fn is_loopback_url(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    if !matches!(parsed.scheme(), "http" | "https") {
        return false;
    }
    let Some(host) = parsed.host_str() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_read_in_every_clients_syntax() {
        for (header, expected) in [
            (
                "Bearer ${env:VAIDER_TOKEN}",
                TokenSource::Variable("VAIDER_TOKEN".into()),
            ),
            (
                "Bearer ${VAIDER_TOKEN}",
                TokenSource::Variable("VAIDER_TOKEN".into()),
            ),
            (
                "Bearer $VAIDER_TOKEN",
                TokenSource::Variable("VAIDER_TOKEN".into()),
            ),
            ("Bearer ${input:vaider-token}", TokenSource::AskedByClient),
            ("Bearer abc123", TokenSource::Literal("abc123".into())),
            ("Bearer ", TokenSource::Missing),
        ] {
            assert_eq!(token_in_header(header), expected, "{header}");
        }
    }

    #[test]
    fn only_loopback_urls_are_contacted() {
        for ok in [
            "http://127.0.0.1:3456/mcp",
            "http://localhost:1/mcp",
            "http://[::1]:2/mcp?tools=core",
        ] {
            assert!(is_loopback_url(ok), "{ok}");
        }
        for no in [
            "http://10.0.0.1:3456/mcp",
            "https://example.com/mcp",
            "file:///x",
            "nonsense",
        ] {
            assert!(!is_loopback_url(no), "{no}");
        }
    }

    #[test]
    fn a_codex_config_under_codex_home_is_found_there() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let codex_home = tempfile::tempdir().unwrap();
        let config = codex_home.path().join("config.toml");
        std::fs::write(
            &config,
            "[mcp_servers.vaider]\nurl = \"http://127.0.0.1:1/mcp\"\nbearer_token_env_var = \"VAIDER_TOKEN\"\n",
        )
        .unwrap();
        let var =
            |name: &str| (name == "CODEX_HOME").then(|| codex_home.path().display().to_string());
        let found = find_configured_with(project.path(), home.path(), var);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].client, Client::Codex);
        assert_eq!(found[0].file, config);
        // Without the variable, Codex's folder is ~/.codex, where there is nothing.
        assert!(find_configured_with(project.path(), home.path(), |_| None).is_empty());
    }

    #[test]
    fn configs_written_by_init_are_found_with_what_they_send() {
        let project = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        let url = "http://127.0.0.1:3456/mcp";
        for client in Client::ALL {
            let place = super::super::Place {
                project: project.path(),
                home: home.path(),
                scope: client.default_scope(),
            };
            super::super::init_at(place, client, url, super::super::TokenIn::Variable).unwrap();
        }
        let found = find_configured(project.path(), home.path());
        let by = |client| {
            found
                .iter()
                .find(|c| c.client == client)
                .map(|c| c.connection.clone())
        };
        let variable = Connection::Http {
            url: url.into(),
            token: TokenSource::Variable("VAIDER_TOKEN".into()),
        };
        for client in [
            Client::Cursor,
            Client::ClaudeCode,
            Client::Codex,
            Client::GeminiCli,
            Client::Windsurf,
        ] {
            assert_eq!(by(client), Some(variable.clone()), "{client:?}");
        }
        assert_eq!(
            by(Client::VsCode),
            Some(Connection::Http {
                url: url.into(),
                token: TokenSource::AskedByClient
            })
        );
        assert_eq!(
            by(Client::Zed),
            Some(Connection::Stdio {
                command: "vaider".into()
            })
        );
        assert_eq!(found.len(), Client::ALL.len());
    }
}
