//! `vaider init` (an agent's MCP config and VaiderRules.txt in a project) and `vaider doctor`
//! (what is set, what is missing, and whether each configured agent reaches the server).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{bail, Result};
use vaider_core::client_setup::{
    self, find_configured, probe, Client, Connection, GitIgnore, Place, Reach, Scope, TokenIn,
    TokenPlacement, TokenSource,
};
use vaider_core::secrets::{self, KeychainStatus};
use vaider_core::updates;
use vaider_core::{Config, VERSION};

/// `vaider init`'s arguments.
pub struct InitArgs {
    pub client: String,
    pub dir: PathBuf,
    pub inline_token: bool,
    pub npx: bool,
    pub user: bool,
    pub tools: Option<String>,
}

pub fn init(args: InitArgs) -> Result<ExitCode> {
    let Some(client) = Client::parse(&args.client) else {
        bail!("unknown client {:?}: use {}", args.client, Client::NAMES);
    };
    let config = Config::load()?;
    let url = mcp_url(config.port, args.tools.as_deref())?;
    let token = match args.inline_token {
        true => Some(secrets::server_token(&config.data_dir())?),
        false => None,
    };
    let token_in = match (args.npx, token.as_deref()) {
        (true, _) => TokenIn::Npx,
        (false, Some(token)) => TokenIn::Literal(token),
        (false, None) => TokenIn::Variable,
    };
    let home = home_dir()?;
    let place = Place {
        project: &args.dir,
        home: &home,
        scope: if args.user {
            Scope::User
        } else {
            client.default_scope()
        },
    };
    let report = client_setup::init_at(place, client, &url, token_in)?;
    if !args.user {
        // The user chose this project: its .env may now supply keys (SECURITY.md).
        secrets::remember_project(&Config::dir(), &args.dir)?;
    }
    let file = report.config_file.display();
    println!("{} {file}", if report.merged { "Updated" } else { "Wrote" });
    println!("Wrote {}", report.rules_file.display());
    if args.npx {
        println!(
            "The agent starts Vaider itself (`npx -y vaider stdio`): no server to run, no token. \
             The history and review pages need `vaider serve` or the tray app."
        );
        println!("`vaider doctor` checks the rest of the setup.");
        return Ok(ExitCode::SUCCESS);
    }
    println!("Vaider's MCP endpoint is {url}; start it with `vaider serve` if it is not running.");
    match &report.token {
        TokenPlacement::Variable => println!(
            "The token is not in {file}. {}",
            client_setup::token_advice(client)
        ),
        TokenPlacement::Literal(GitIgnore::Added(gitignore)) => println!(
            "{file} holds your Vaider token: it was added to {} so it is not committed.",
            gitignore.display()
        ),
        TokenPlacement::Literal(GitIgnore::AlreadyListed(gitignore)) => println!(
            "{file} holds your Vaider token; {} already keeps it out of git.",
            gitignore.display()
        ),
        TokenPlacement::Literal(GitIgnore::NotARepository) => println!(
            "{file} holds your Vaider token and the folder is not a git repository: keep the file out of version control."
        ),
        TokenPlacement::Literal(GitIgnore::UserFile) => {
            println!("{file} holds your Vaider token; it is your own file, outside the project.")
        }
    }
    if client == Client::ClaudeCode {
        // `--scope local` keeps the token in the user's own Claude Code config, not the project.
        println!("(Alternatively, without a project file: claude mcp add --transport http --scope local --header \"Authorization: Bearer $(vaider token)\" vaider {url})");
    }
    println!("`vaider doctor` checks that it reaches the server.");
    Ok(ExitCode::SUCCESS)
}

/// The MCP URL on `port`, with `?tools=` when a smaller tool set is asked for (checked here,
/// so a typo fails now rather than when the agent connects).
fn mcp_url(port: u16, tools: Option<&str>) -> Result<String> {
    let base = format!("http://127.0.0.1:{port}/mcp");
    let Some(tools) = tools
        .map(str::trim)
        .filter(|t| !t.is_empty() && *t != "all")
    else {
        return Ok(base);
    };
    if let Err(e) = vaider_server::ToolSet::parse(tools, &vaider_server::mcp::tool_names()) {
        bail!("--tools: {e}");
    }
    Ok(format!("{base}?tools={}", tools.replace(' ', "")))
}

fn home_dir() -> Result<PathBuf> {
    directories::BaseDirs::new()
        .map(|dirs| dirs.home_dir().to_path_buf())
        .ok_or_else(|| anyhow::anyhow!("no home folder: set HOME"))
}

/// Checks the machine, the key, the token, the port and every configured client, one line
/// each: `ok` or `FIX` with what to do.
pub async fn doctor() -> Result<ExitCode> {
    let mut report = Report::default();
    let origin = updates::origin();
    let exe = std::env::current_exe().unwrap_or_default();
    println!("Vaider {VERSION}, from {origin} ({})", exe.display());
    let config = machine(&mut report).await?;
    update_check(&config, &origin).await;
    clients(&mut report, &config).await;
    println!(
        "{}",
        if report.problems == 0 {
            "Everything is in place.".to_string()
        } else {
            format!("{} thing(s) to fix.", report.problems)
        }
    );
    Ok(if report.problems == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Whether a newer Vaider is known: the release feed read now, else the last answer kept.
/// A newer version is news, not a problem: it never changes the exit code.
async fn update_check(config: &Config, origin: &updates::Origin) {
    let Some(feed) = updates::feed() else {
        println!(
            "     updates: this build checks no release feed (to update: {})",
            origin.how_to_update()
        );
        return;
    };
    let data_dir = config.data_dir();
    let check = match updates::check(&feed).await {
        Ok(check) => {
            updates::remember(&data_dir, &check);
            check
        }
        Err(e) => match updates::last_check(&data_dir) {
            Some(check) => {
                println!(
                    "     updates: {e}; the last check ({}) said:",
                    check.checked_at
                );
                check
            }
            None => {
                println!("     updates: {e}");
                return;
            }
        },
    };
    if check.newer {
        println!(
            "     updates: Vaider {} is available ({}); to update: {}",
            check.latest,
            check.url,
            origin.how_to_update().replace("VERSION", &check.latest)
        );
    } else {
        println!(
            "     updates: up to date (the newest release is {})",
            check.latest
        );
    }
}

/// The lines printed so far, and how many said FIX.
#[derive(Default)]
struct Report {
    problems: usize,
}

impl Report {
    fn line(&mut self, ok: bool, what: &str, detail: String) {
        if !ok {
            self.problems += 1;
        }
        println!("{} {what}: {detail}", if ok { "ok  " } else { "FIX " });
    }
}

/// The config, data folder, provider, key, keychain, token and port.
async fn machine(report: &mut Report) -> Result<Config> {
    let mut line = |ok: bool, what: &str, detail: String| report.line(ok, what, detail);
    let config = config_check(&mut line);
    let data_dir = config.data_dir();
    data_folder_check(&mut line, &data_dir);
    let keychain = tokio::task::spawn_blocking(secrets::keychain_status).await?;
    let key_found = keys(&mut line, &config).await;
    model_check(&mut line, &config).await;
    match keychain {
        KeychainStatus::Available => line(true, "keychain", "available".into()),
        KeychainStatus::Unavailable(reason) => line(
            key_found,
            "keychain",
            format!(
                "not available: {reason}. Keys can come from GEMINI_API_KEY or a .env file instead"
            ),
        ),
    }
    token_check(&mut line, &data_dir);
    let token = secrets::server_token(&data_dir).ok();
    port_check(&mut line, config.port, token).await;
    let overridden: Vec<&str> = vaider_core::env_vars::settings()
        .map(|v| v.name)
        .filter(|name| std::env::var(name).is_ok_and(|v| !v.is_empty()))
        .collect();
    if !overridden.is_empty() {
        println!("     environment overrides: {}", overridden.join(", "));
    }
    Ok(config)
}

/// The config file, or the defaults when it cannot be read.
fn config_check(line: &mut impl FnMut(bool, &str, String)) -> Config {
    let config_path = Config::file_path();
    match Config::load() {
        Ok(config) => {
            line(
                true,
                "config",
                if config_path.exists() {
                    config_path.display().to_string()
                } else {
                    format!("{} (not created; defaults in use)", config_path.display())
                },
            );
            config
        }
        Err(e) => {
            line(false, "config", e.to_string());
            Config::default()
        }
    }
}

/// The data folder must be writable.
fn data_folder_check(line: &mut impl FnMut(bool, &str, String), data_dir: &std::path::Path) {
    let writable = std::fs::create_dir_all(data_dir)
        .and_then(|_| std::fs::write(data_dir.join(".doctor"), b""))
        .and_then(|_| std::fs::remove_file(data_dir.join(".doctor")));
    line(
        writable.is_ok(),
        "data folder",
        match &writable {
            Ok(()) => data_dir.display().to_string(),
            Err(e) => format!(
                "{} is not writable ({e}); set VAIDER_DATA_DIR",
                data_dir.display()
            ),
        },
    );
}

/// Where the server's token comes from.
fn token_check(line: &mut impl FnMut(bool, &str, String), data_dir: &std::path::Path) {
    match secrets::server_token(data_dir) {
        Ok(_) => line(
            true,
            "token",
            if std::env::var("VAIDER_TOKEN").is_ok_and(|t| !t.is_empty()) {
                "from VAIDER_TOKEN".into()
            } else {
                format!(
                    "in {} (`vaider token` prints it)",
                    data_dir.join("token").display()
                )
            },
        ),
        Err(e) => line(false, "token", e.to_string()),
    }
}

/// The port is free, or a Vaider that proves it holds our token answers on it.
async fn port_check(line: &mut impl FnMut(bool, &str, String), port: u16, token: Option<String>) {
    use vaider_server::running::{self, Found};
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    if tokio::net::TcpListener::bind(addr).await.is_ok() {
        return line(
            true,
            "port",
            format!("{port} is free (`vaider serve` will use it)"),
        );
    }
    let token = token.unwrap_or_default();
    let found = tokio::task::spawn_blocking(move || running::find(addr, &token))
        .await
        .unwrap_or(Found::Other { pid: None });
    match found {
        Found::Vaider => line(true, "port", format!("Vaider is running on http://{addr}")),
        Found::Other { pid } => line(false, "port", Found::held_message(addr, pid)),
        Found::Nothing => line(
            true,
            "port",
            format!("{port} is free (`vaider serve` will use it)"),
        ),
    }
}

/// The provider, and where each provider's key comes from, as `vaider_status` reports them
/// (one place decides: the keychain, the environment, a .env file, Bedrock's AWS chain, a
/// local server that needs none). Whether the configured provider can be called.
async fn keys(line: &mut impl FnMut(bool, &str, String), config: &Config) -> bool {
    // Read without opening the engine: a look at the setup creates no history.
    let status = match vaider_core::status::StatusReport::of_config(config).await {
        Ok(status) => status,
        Err(e) => {
            line(false, "provider", format!("Vaider cannot start here: {e}"));
            return false;
        }
    };
    let default = status.providers.iter().find(|p| p.name == status.provider);
    let base_url = default.map(|p| p.base_url.as_str()).unwrap_or_default();
    let provider = format!("{} · model {} · {base_url}", status.provider, status.model);
    line(true, "provider", provider);
    match (&status.key_source, status.key_configured) {
        (Some(source), _) => line(true, "API key", format!("set, from the {source}")),
        (None, true) => line(true, "API key", format!("not needed by {}", status.provider)),
        (None, false) => line(false, "API key", "not set: run `vaider key set` (OS keychain), or set GEMINI_API_KEY in the environment or a .env file".into()),
    }
    // Where every other provider's key comes from, for those that have one.
    for other in status
        .providers
        .iter()
        .filter(|p| p.name != status.provider)
    {
        if let Some(source) = &other.key_source {
            line(
                true,
                &format!("{} key", other.name),
                format!("set, from the {source}"),
            );
        }
    }
    status.key_configured
}

/// The configured model: gone (shut down, or not in the provider's list) or deprecated (a
/// shutdown ahead) is a FIX with the replacement.
async fn model_check(line: &mut impl FnMut(bool, &str, String), config: &Config) {
    let dirs = crate::commands::dotenv_dirs();
    let limits = vaider_core::models::ListLimits::on_error_path();
    match vaider_core::models::catalogue(config, None, &dirs, limits).await {
        Ok(catalogue) => match (catalogue.configured_problem(), &catalogue.list_error) {
            (Some(problem), _) => line(false, "model", problem),
            (None, None) => line(
                true,
                "model",
                format!(
                    "{} is served by {}",
                    catalogue.configured_model, catalogue.provider
                ),
            ),
            (None, Some(error)) => line(
                true,
                "model",
                format!(
                    "{} (not checked against the provider's list: {error})",
                    catalogue.configured_model
                ),
            ),
        },
        Err(e) => line(false, "model", e.to_string()),
    }
}

/// Every agent configured to use Vaider, in this project and the user's home: can it reach
/// the server with the token it will send?
async fn clients(report: &mut Report, config: &Config) {
    let project = std::env::current_dir().unwrap_or_default();
    let Ok(home) = home_dir() else {
        return;
    };
    let found = find_configured(&project, &home);
    if found.is_empty() {
        println!("     agents: none configured here; `vaider init --client NAME` writes one");
        return;
    }
    let server_token = secrets::server_token(&config.data_dir()).ok();
    for configured in found {
        let what = format!(
            "{} ({})",
            configured.client.title(),
            configured.file.display()
        );
        let (ok, detail) = match &configured.connection {
            Connection::Unreadable(why) => (false, format!("cannot be read: {why}")),
            Connection::Stdio { command } => stdio_check(command),
            Connection::Http { url, token } => {
                http_check(url, token, server_token.as_deref()).await
            }
        };
        report.line(ok, &what, detail);
    }
}

/// A client that starts `vaider stdio` itself: the command must be found.
fn stdio_check(command: &str) -> (bool, String) {
    let found = std::path::Path::new(command).is_absolute()
        && std::path::Path::new(command).exists()
        || std::env::var_os("PATH").is_some_and(|path| {
            std::env::split_paths(&path).any(|dir| dir.join(command).is_file())
        });
    match found {
        true => (true, format!("starts `{command} stdio` itself (no token needed)")),
        false => (false, format!("starts `{command} stdio`, but {command} is not on the PATH: install Vaider (scripts/install.sh links ~/.local/bin/vaider) or write its absolute path")),
    }
}

/// A client that calls the HTTP endpoint: try it with the token it will send, once the
/// server there proved it holds the server's token (else the token is not sent).
async fn http_check(url: &str, token: &TokenSource, server_token: Option<&str>) -> (bool, String) {
    use vaider_server::running::{self, Found};
    let mut sent = token.resolve();
    if sent.is_some() {
        let found = match (loopback_addr(url), server_token) {
            (Some(addr), Some(server_token)) => {
                let server_token = server_token.to_string();
                let found = tokio::task::spawn_blocking(move || running::find(addr, &server_token))
                    .await
                    .unwrap_or(Found::Other { pid: None });
                Some((addr, found))
            }
            _ => None,
        };
        match found {
            Some((_, Found::Vaider)) => {}
            Some((addr, Found::Other { pid })) => {
                return (
                    false,
                    format!(
                        "{url}: {} (the token was not sent)",
                        Found::held_message(addr, pid)
                    ),
                )
            }
            // Nothing listens, or no token here to prove the server with: send none.
            _ => sent = None,
        }
    }
    let reach = probe(url, sent.as_deref(), Duration::from_secs(3)).await;
    let source = match token {
        TokenSource::Literal(_) => "the token written in the file".to_string(),
        TokenSource::Variable(name) => format!("${name}"),
        TokenSource::AskedByClient => "the token the client asks you for".to_string(),
        TokenSource::Missing => "no token".to_string(),
    };
    match (reach, token) {
        (Reach::Ok, _) => (true, format!("{url} answers, with {source}")),
        (Reach::NotRunning, _) => (false, format!("nothing answers at {url}: start Vaider (`vaider serve` or the tray app)")),
        (Reach::NotLoopback, _) => (false, format!("{url} is not a loopback address; Vaider listens on 127.0.0.1 only (the token was not sent)")),
        (Reach::WrongToken, TokenSource::Variable(name)) if sent.is_none() => (false, format!("{url} answers, but ${name} is not set here: run `export {name}=\"$(vaider token)\"` where the agent starts")),
        (Reach::WrongToken, TokenSource::AskedByClient) => (true, format!("{url} answers; the client asks for the token (`vaider token` prints it)")),
        (Reach::WrongToken, _) if server_token.is_some_and(|t| sent.as_deref() != Some(t)) => (false, format!("{url} refuses {source}: it is not the server's token (`vaider token` prints the right one; run init again)")),
        (Reach::WrongToken, _) => (false, format!("{url} refuses {source}: missing or wrong token")),
        (Reach::Refused(status, body), _) => (false, format!("{url} answered {status}: {body}")),
    }
}

/// The loopback address an `http://host:port/...` URL names, for the proof before the token.
fn loopback_addr(url: &str) -> Option<SocketAddr> {
    use std::net::ToSocketAddrs;
    let rest = url.strip_prefix("http://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let authority = if authority
        .rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
        && !authority.ends_with(']')
    {
        authority.to_string()
    } else {
        format!("{authority}:80")
    };
    authority
        .to_socket_addrs()
        .ok()?
        .find(|addr| addr.ip().is_loopback())
}

/// `vaider token --rotate`: a new token, every UI session ended (a running server notices the
/// new file on its next request), and the agent configs found here and in the home folder
/// that still send the old one.
pub fn rotate_token() -> Result<ExitCode> {
    let config = Config::load()?;
    let data_dir = config.data_dir();
    let old = secrets::server_token(&data_dir).ok();
    let token = secrets::rotate_token(&data_dir)?;
    println!("{token}");
    eprintln!(
        "New token written to {}. A running Vaider uses it from its next request on; the old token and every signed-in UI page stop working (open the UI again with `vaider ui`).",
        data_dir.join("token").display()
    );
    let project = std::env::current_dir().unwrap_or_default();
    let found = home_dir()
        .map(|home| find_configured(&project, &home))
        .unwrap_or_default();
    let mut any = false;
    for configured in found {
        let file = configured.file.display();
        let advice = match &configured.connection {
            Connection::Http {
                token: TokenSource::Literal(written),
                ..
            } if old.as_deref() == Some(written.as_str()) => format!(
                "{file} has the old token written in it: run `vaider init --client {} --inline-token` again",
                init_name(configured.client)
            ),
            Connection::Http {
                token: TokenSource::Variable(name),
                ..
            } => format!("{file} reads ${name}: set it to the new token where the agent starts (`export {name}=\"$(vaider token)\"`)"),
            Connection::Http {
                token: TokenSource::AskedByClient,
                ..
            } => format!("{file}: {} asks for the token and keeps it; clear the kept one and paste the new token", configured.client.title()),
            _ => continue,
        };
        if !any {
            eprintln!("Update these agent configs:");
            any = true;
        }
        eprintln!("  - {advice}");
    }
    if !any {
        eprintln!("No agent config found here or in your home folder sends the old token; update any other client that has it.");
    }
    Ok(ExitCode::SUCCESS)
}

/// The `--client` name `vaider init` takes for `client`.
fn init_name(client: Client) -> &'static str {
    match client {
        Client::Cursor => "cursor",
        Client::ClaudeCode => "claude",
        Client::VsCode => "vscode",
        Client::Codex => "codex",
        Client::GeminiCli => "gemini",
        Client::Windsurf => "windsurf",
        Client::Zed => "zed",
    }
}
