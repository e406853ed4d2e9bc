//! What each client's Vaider entry looks like, as its documentation gives it, with the token
//! in the client's own syntax for an environment variable where it has one:
//!
//! | client | file's key | entry |
//! |---|---|---|
//! | Cursor | `mcpServers` | `url`, `headers` (`${env:VAIDER_TOKEN}`) |
//! | Claude Code | `mcpServers` | `type: http`, `url`, `headers` (`${VAIDER_TOKEN}`) |
//! | VS Code | `servers` (+ `inputs`) | `type: http`, `url`, `headers` (`${input:vaider-token}`) |
//! | Codex CLI (TOML) | `mcp_servers` | `url`, `bearer_token_env_var` (it refuses an inline `bearer_token`) |
//! | Gemini CLI | `mcpServers` | `httpUrl`, `headers` (`${VAIDER_TOKEN}`) |
//! | Windsurf | `mcpServers` | `serverUrl`, `headers` (`${env:VAIDER_TOKEN}`) |
//! | Zed | `context_servers` | `command: vaider`, `args: [stdio]` (no variables in its headers) |
//!
//! With `--npx` every client's entry starts `npx -y vaider stdio` instead (no URL, no token).

use serde_json::{json, Value};

use super::{Client, TokenIn, TOKEN_VARIABLE, VSCODE_TOKEN_INPUT};

/// Codex stops waiting for a tool after `tool_timeout_sec` (default 60 s); a long video takes
/// longer than that.
const CODEX_TOOL_TIMEOUT_SEC: u64 = 600;

/// The npm package that runs Vaider's prebuilt binary (packaging/npm).
pub const NPM_PACKAGE: &str = "vaider";

/// The key of the object that holds the servers in this client's config.
pub(super) fn servers_key(client: Client) -> &'static str {
    match client {
        Client::VsCode => "servers",
        Client::Codex => "mcp_servers",
        Client::Zed => "context_servers",
        _ => "mcpServers",
    }
}

/// The whole config for Vaider alone: `{<servers key>: {"vaider": entry}}`, plus VS Code's
/// token input.
pub(super) fn config(client: Client, url: &str, token: TokenIn) -> Value {
    let mut config = json!({ servers_key(client): { "vaider": entry(client, url, token) } });
    if client == Client::VsCode && token == TokenIn::Variable {
        config["inputs"] = json!([{
            "type": "promptString",
            "id": VSCODE_TOKEN_INPUT,
            "description": "Vaider token (`vaider token` prints it)",
            "password": true,
        }]);
    }
    config
}

fn entry(client: Client, url: &str, token: TokenIn) -> Value {
    if token == TokenIn::Npx {
        return npx_entry(client, url);
    }
    let headers = |reference: String| {
        let bearer = match token {
            TokenIn::Literal(token) => format!("Bearer {token}"),
            TokenIn::Variable | TokenIn::Npx => format!("Bearer {reference}"),
        };
        json!({ "Authorization": bearer })
    };
    match client {
        Client::Cursor => {
            json!({"url": url, "headers": headers(format!("${{env:{TOKEN_VARIABLE}}}"))})
        }
        Client::ClaudeCode => json!({"type": "http", "url": url,
                                     "headers": headers(format!("${{{TOKEN_VARIABLE}}}"))}),
        Client::VsCode => json!({"type": "http", "url": url,
                                 "headers": headers(format!("${{input:{VSCODE_TOKEN_INPUT}}}"))}),
        Client::GeminiCli => json!({"httpUrl": url,
                                    "headers": headers(format!("${{{TOKEN_VARIABLE}}}"))}),
        Client::Windsurf => json!({"serverUrl": url,
                                   "headers": headers(format!("${{env:{TOKEN_VARIABLE}}}"))}),
        Client::Codex => match token {
            TokenIn::Variable | TokenIn::Npx => {
                json!({"url": url, "bearer_token_env_var": TOKEN_VARIABLE,
                                        "tool_timeout_sec": CODEX_TOOL_TIMEOUT_SEC})
            }
            TokenIn::Literal(_) => json!({"url": url, "http_headers": headers(String::new()),
                                          "tool_timeout_sec": CODEX_TOOL_TIMEOUT_SEC}),
        },
        Client::Zed => match token {
            TokenIn::Variable | TokenIn::Npx => {
                json!({"command": "vaider", "args": stdio_args(url)})
            }
            TokenIn::Literal(_) => json!({"url": url, "headers": headers(String::new())}),
        },
    }
}

/// The entry that starts `npx -y vaider stdio` (the npm package, no token), in each client's
/// words for a command: Claude Code and VS Code name the transport, the others infer it.
fn npx_entry(client: Client, url: &str) -> Value {
    let mut args = vec!["-y".to_string(), NPM_PACKAGE.to_string()];
    args.extend(stdio_args(url));
    match client {
        Client::ClaudeCode | Client::VsCode => {
            json!({"type": "stdio", "command": "npx", "args": args})
        }
        Client::Codex => json!({"command": "npx", "args": args,
                                "tool_timeout_sec": CODEX_TOOL_TIMEOUT_SEC}),
        _ => json!({"command": "npx", "args": args}),
    }
}

/// `vaider stdio`'s arguments for the tool set a URL names (`…/mcp?tools=core`).
fn stdio_args(url: &str) -> Vec<String> {
    let mut args = vec!["stdio".to_string()];
    let tools = url
        .split_once('?')
        .and_then(|(_, query)| query.split('&').find_map(|p| p.strip_prefix("tools=")));
    if let Some(tools) = tools {
        args.push("--tools".into());
        args.push(crate::source::percent_decode(tools));
    }
    args
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_npx_form_starts_the_npm_package_over_stdio_in_each_clients_words() {
        let url = "http://127.0.0.1:3456/mcp?tools=core";
        let args = json!(["-y", "vaider", "stdio", "--tools", "core"]);
        for client in Client::ALL {
            let entry = entry(client, url, TokenIn::Npx);
            assert_eq!(entry["command"], "npx", "{client:?}");
            assert_eq!(entry["args"], args, "{client:?}");
            assert!(entry.get("url").is_none() && entry.get("headers").is_none());
        }
        assert_eq!(
            entry(Client::ClaudeCode, url, TokenIn::Npx)["type"],
            "stdio"
        );
        assert_eq!(entry(Client::VsCode, url, TokenIn::Npx)["type"], "stdio");
        // VS Code asks for no token when none is sent.
        assert!(config(Client::VsCode, url, TokenIn::Npx)
            .get("inputs")
            .is_none());
    }

    #[test]
    fn zed_starts_vaider_stdio_with_the_urls_tool_set() {
        assert_eq!(stdio_args("http://127.0.0.1:3456/mcp"), ["stdio"]);
        assert_eq!(
            stdio_args("http://127.0.0.1:3456/mcp?tools=core%2Cqa"),
            ["stdio", "--tools", "core,qa"]
        );
    }
}
