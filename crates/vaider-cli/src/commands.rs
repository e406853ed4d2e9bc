//! One function per subcommand. Each loads the config, builds the engine or the server from
//! the libraries, and prints for a person (or JSON with --json).

use std::io::{IsTerminal, Read};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use vaider_core::analysis::tools;

use anyhow::{bail, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use rmcp::ServiceExt;
use tokio_util::sync::CancellationToken;
use vaider_core::history::Status;
use vaider_core::progress::Progress;
use vaider_core::secrets::{self, ApiKey};
use vaider_core::{AnalysisRequest, Config, Door, Vaider, VERSION};

use crate::{Command, KeyAction};

/// What `vaider analyse` was asked.
#[derive(clap::Args)]
pub struct AnalyseArgs {
    /// Path or http(s) URL of the video or image.
    source: String,
    /// What to look for (default: a step-by-step description with timestamps).
    #[arg(long)]
    prompt: Option<String>,
    /// A statement the media should show; repeat for several.
    #[arg(long = "expect")]
    expectations: Vec<String>,
    #[arg(long)]
    model: Option<String>,
    /// The provider to ask: gemini, openai, zai, anthropic, ollama, lmstudio, vllm, bedrock, or one
    /// added in the config (default: the config's provider).
    #[arg(long)]
    provider: Option<String>,
    /// Time limit in seconds (default 30, or the config's timeout_sec).
    #[arg(long)]
    timeout: Option<u64>,
    /// Ask the model even if the same request was answered before.
    #[arg(long)]
    no_cache: bool,
    /// How a video goes to a model that takes video: auto (the moments where the screen
    /// changes, when cheaper), full (the whole video) or keyframes (default: the config's
    /// video_sampling).
    #[arg(long, value_parser = crate::parse_sampling)]
    sampling: Option<vaider_core::sampling::VideoSampling>,
    /// Treat the source as an image (analyze_image). Local images are recognised anyway.
    #[arg(long)]
    image: bool,
    /// Print the whole result as JSON.
    #[arg(long)]
    json: bool,
}

impl AnalyseArgs {
    /// The request the pipeline takes: an image's tool when asked for or when the local file
    /// is one, relative paths found from the current folder.
    fn request(self) -> AnalysisRequest {
        let image = self.image || looks_like_an_image(&self.source);
        let tool = if image {
            tools::ANALYZE_IMAGE
        } else {
            tools::ANALYZE_VIDEO
        };
        let mut request = AnalysisRequest::new(tool, Door::Cli, self.source);
        request.provider = self.provider;
        request.prompt = self.prompt;
        request.expectations = self.expectations;
        request.model = self.model;
        request.timeout = self.timeout.map(Duration::from_secs);
        request.no_cache = self.no_cache;
        request.sampling = self.sampling;
        request.base_dirs = std::env::current_dir().into_iter().collect();
        request
    }
}

pub async fn run(command: Command) -> Result<ExitCode> {
    init_logging(matches!(
        command,
        Command::Serve { .. } | Command::Stdio { .. } | Command::Ui { .. }
    ));
    match command {
        Command::Serve { port, host } => serve(port, host).await,
        Command::Ui { no_open } => ui(no_open).await,
        Command::Stdio { tools } => stdio(&tools).await,
        Command::Analyse(args) => {
            let json = args.json;
            analyse(args.request(), json).await
        }
        Command::History { json, limit } => history(json, limit),
        Command::Capture(args) => crate::visual::capture(args).await,
        Command::Compare(args) => crate::visual::compare_command(args).await,
        Command::Review(args) => crate::review::review(args).await,
        Command::Check(args) => crate::review::check(args).await,
        Command::Validate(args) => crate::validate::validate(args).await,
        Command::TestResults { path, json } => crate::validate::test_results(path, json).await,
        Command::Plan { action, dir } => crate::plan::plan(action, dir).await,
        Command::Token { rotate: true } => crate::setup::rotate_token(),
        Command::Token { rotate: false } => token(),
        Command::Key { action } => key(action).await,
        Command::Init {
            client,
            dir,
            inline_token,
            npx,
            user,
            tools,
        } => crate::setup::init(crate::setup::InitArgs {
            client,
            dir,
            inline_token,
            npx,
            user,
            tools,
        }),
        Command::Models { provider, json } => crate::models::models(provider, json).await,
        Command::Doctor => crate::setup::doctor().await,
        Command::Eval { action, run } => crate::eval::eval(action, run).await,
    }
}

/// `vaider token`: the bearer token HTTP clients send.
fn token() -> Result<ExitCode> {
    let config = Config::load()?;
    println!("{}", secrets::server_token(&config.data_dir())?);
    Ok(ExitCode::SUCCESS)
}

/// Whether a local file is a still image by its content, so `vaider analyse shot.png` just
/// works; an animated GIF, APNG or WebP is a recording, watched by analyze_video.
fn looks_like_an_image(source: &str) -> bool {
    use vaider_core::media;
    let path = std::path::Path::new(source);
    match media::inspect(path, media::MAX_MEDIA_BYTES, None) {
        Ok(info) => !info.is_recording(),
        // A file refused here is refused by the analysis too, with the reason.
        Err(_) => false,
    }
}

/// Logs go to stderr (stdout is the MCP channel in stdio mode); `VAIDER_LOG` sets the level.
/// Colour only when stderr is a terminal: a log file or an MCP client's log of a stdio server
/// would otherwise fill with escape codes.
fn init_logging(server: bool) {
    let default = if server { "info" } else { "warn" };
    let filter = tracing_subscriber::EnvFilter::try_from_env("VAIDER_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        .try_init();
}

async fn serve(port: Option<u16>, host: std::net::IpAddr) -> Result<ExitCode> {
    let running = start_server(port, Some(host)).await?;
    let base = running.base_url();
    println!("Vaider {VERSION} listening on {base} (MCP: {base}/mcp, REST: {base}/v1, history UI: `vaider ui`, token: `vaider token`)");
    tokio::spawn(stop_on_signal(running.shutdown_token()));
    running.wait().await?;
    Ok(ExitCode::SUCCESS)
}

/// The same server the tray app embeds, with the same port, token, config and data.
async fn start_server(
    port: Option<u16>,
    host: Option<std::net::IpAddr>,
) -> Result<vaider_server::embedded::RunningServer> {
    vaider_server::panics::install_quiet_hook();
    let running = vaider_server::embedded::start(vaider_server::embedded::StartOptions {
        port,
        host,
        desktop: None,
    })
    .await?;
    if !running.engine.status().await.key_configured {
        tracing::warn!(
            "no API key is configured: analyses will fail until you run `vaider key set` or set GEMINI_API_KEY"
        );
    }
    Ok(running)
}

/// Opens the history UI of the running server, or starts one here and opens it. The browser
/// gets a one-time login code, never the token; and a running server gets nothing until it
/// proved it holds the token ([`vaider_server::running`]).
async fn ui(no_open: bool) -> Result<ExitCode> {
    use vaider_server::running::{self, Found};

    let config = Config::load()?;
    let addr = SocketAddr::from(([127, 0, 0, 1], config.port));
    let token = secrets::server_token(&config.data_dir())?;
    let open = |link: &str| {
        if no_open {
            println!("Open this link within a minute (it works once): {link}");
            return;
        }
        if let Err(why) = vaider_server::ui::open_with_default_app(link.as_ref()) {
            eprintln!("Could not start a browser ({why}).");
            println!("Open this link within a minute (it works once): {link}");
        }
    };
    let found = {
        let token = token.clone();
        tokio::task::spawn_blocking(move || running::find(addr, &token)).await?
    };
    match found {
        Found::Vaider => {
            let login_key = secrets::ui_login_key(&config.data_dir())?;
            let code =
                tokio::task::spawn_blocking(move || running::login_code(addr, &token, &login_key))
                    .await?
                    .map_err(anyhow::Error::msg)?;
            println!("Vaider's history: http://{addr}/");
            open(&vaider_server::embedded::sign_in_url(
                &format!("http://{addr}"),
                &code,
                "#/",
            ));
            Ok(ExitCode::SUCCESS)
        }
        Found::Other { pid } => bail!(Found::held_message(addr, pid)),
        Found::Nothing => {
            let running = start_server(None, None).await?;
            println!(
                "Vaider {VERSION} is running here until you press Ctrl+C.\nVaider's history: {}/",
                running.base_url()
            );
            open(&running.ui_url("#/"));
            tokio::spawn(stop_on_signal(running.shutdown_token()));
            running.wait().await?;
            Ok(ExitCode::SUCCESS)
        }
    }
}

async fn stop_on_signal(shutdown: CancellationToken) {
    let interrupt = tokio::signal::ctrl_c();
    #[cfg(unix)]
    {
        let mut terminate =
            match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
                Ok(signal) => signal,
                Err(_) => {
                    let _ = interrupt.await;
                    shutdown.cancel();
                    return;
                }
            };
        tokio::select! {
            _ = interrupt => {}
            _ = terminate.recv() => {}
        }
    }
    #[cfg(not(unix))]
    let _ = interrupt.await;
    tracing::info!("stopping");
    shutdown.cancel();
}

async fn stdio(tools: &str) -> Result<ExitCode> {
    let tools = vaider_server::ToolSet::parse(tools, &vaider_server::mcp::tool_names())
        .map_err(|e| anyhow::anyhow!("--tools: {e}"))?;
    let engine = Vaider::open(Config::load()?)?;
    vaider_server::panics::install_quiet_hook();
    let server = vaider_server::VaiderMcp::for_stdio(engine, tools);
    let service = server
        .serve(rmcp::transport::stdio())
        .await
        .context("the MCP client did not complete the handshake")?;
    service.waiting().await?;
    Ok(ExitCode::SUCCESS)
}

async fn analyse(request: AnalysisRequest, json: bool) -> Result<ExitCode> {
    let engine = Vaider::open(Config::load()?)?;
    let bar = ProgressBar::new_spinner();
    bar.enable_steady_tick(Duration::from_millis(120));
    bar.set_message("checking the file");
    let progress_bar = bar.clone();
    let report = move |step: Progress| match step {
        Progress::Uploading { sent, total } => {
            if progress_bar.length() != Some(total) {
                progress_bar.set_length(total);
                progress_bar.set_style(
                    ProgressStyle::with_template(
                        "{spinner} uploading [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec}",
                    )
                    .unwrap_or_else(|_| ProgressStyle::default_bar())
                    .progress_chars("=> "),
                );
            }
            progress_bar.set_position(sent);
        }
        other => {
            progress_bar.set_style(ProgressStyle::default_spinner());
            progress_bar.set_message(other.message());
        }
    };
    let outcome = engine.analyse(request, &report).await;
    bar.finish_and_clear();
    match outcome {
        Ok(result) => {
            if json {
                println!("{}", serde_json::to_string_pretty(&result)?);
            } else {
                let told = vaider_server::text::analysis(&result);
                println!("{}", told.body);
                eprintln!("\n{}", told.notes);
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(failure) => {
            if json {
                println!(
                    "{}",
                    serde_json::json!({"error": vaider_core::pipeline::error_json(&failure.error), "durationMs": failure.duration_ms})
                );
            } else {
                let mapped = vaider_server::api_error::Mapped::from(&failure.error);
                eprintln!("vaider: {}", mapped.line());
            }
            Ok(ExitCode::FAILURE)
        }
    }
}

/// `vaider history`: the latest analyses as a table (or JSON), then what they cost in all.
fn history(json: bool, limit: usize) -> Result<ExitCode> {
    let config = Config::load()?;
    let history = vaider_core::history::History::open(&config.data_dir().join("history.sqlite3"))?;
    let rows = history.list(limit, 0)?;
    let totals = history.totals()?;
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(
                &serde_json::json!({"interactions": rows, "totals": totals})
            )?
        );
        return Ok(ExitCode::SUCCESS);
    }
    if rows.is_empty() {
        println!("No analyses yet. Try `vaider analyse path/to/video.webm`.");
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "{:<20} {:<11} {:<14} {:<28} {:<22} {:>8} {:>10}",
        "TIME (UTC)", "STATUS", "TOOL", "SOURCE", "MODEL", "MS", "COST $"
    );
    for row in &rows {
        print_history_row(row);
    }
    print_totals(&totals);
    Ok(ExitCode::SUCCESS)
}

/// One analysis as a line of the table: the file's name rather than its path, "cached" for
/// an answer the history gave.
fn print_history_row(row: &vaider_core::history::Interaction) {
    let source = row
        .media_path
        .as_deref()
        .unwrap_or(&row.source)
        .rsplit(['/', '\\'])
        .next()
        .unwrap_or_default()
        .to_string();
    let status = match (row.status, row.cached) {
        (Status::Ok, true) => "cached".to_string(),
        (status, _) => status.as_str().to_string(),
    };
    println!(
        "{:<20} {:<11} {:<14} {:<28} {:<22} {:>8} {:>10.6}",
        row.created_at
            .get(..19)
            .unwrap_or(&row.created_at)
            .replace('T', " "),
        status,
        row.tool,
        truncate(&source, 28),
        truncate(&row.model, 22),
        row.duration_ms
            .map(|d| d.to_string())
            .unwrap_or_else(|| "-".into()),
        row.cost_usd
    );
}

/// The spend in all, and the tokens change-aware sampling saved when it did.
fn print_totals(totals: &vaider_core::history::Totals) {
    println!(
        "\n{} analyses in all · {} in / {} out tokens · ${:.6} spent",
        totals.interactions, totals.input_tokens, totals.output_tokens, totals.cost_usd
    );
    if totals.default_sampling_input_tokens > totals.input_tokens {
        println!(
            "Change-aware video sampling saved {} input tokens: Gemini's default sampling would have used {} ({}).",
            totals.default_sampling_input_tokens - totals.input_tokens,
            totals.default_sampling_input_tokens,
            vaider_core::sampling::fewer(totals.default_sampling_input_tokens, totals.input_tokens)
        );
    }
}

fn truncate(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        text.to_string()
    } else {
        let kept: String = text.chars().take(width - 1).collect();
        format!("{kept}…")
    }
}

/// `vaider key set|clear|status`: a provider's key in the OS keychain.
async fn key(action: KeyAction) -> Result<ExitCode> {
    match action {
        KeyAction::Set { provider } => set_key(provider).await,
        KeyAction::Clear { provider } => {
            check_provider(&provider)?;
            tokio::task::spawn_blocking({
                let provider = provider.clone();
                move || secrets::keychain_delete(&provider)
            })
            .await??;
            println!("The {provider} key is removed from the OS keychain.");
            Ok(ExitCode::SUCCESS)
        }
        KeyAction::Status { provider } => key_status(provider).await,
    }
}

/// `vaider key set`: the key read hidden from the terminal (or piped in), into the keychain;
/// without a keychain, where else the key can go.
async fn set_key(provider: String) -> Result<ExitCode> {
    check_provider(&provider)?;
    let key = ApiKey::new(read_key(&provider)?);
    if key.expose().is_empty() {
        bail!("no key was given on standard input; nothing was stored");
    }
    let stored = tokio::task::spawn_blocking({
        let provider = provider.clone();
        move || secrets::keychain_set(&provider, &key)
    })
    .await?;
    match stored {
        Ok(()) => {
            println!("The {provider} key is stored in the OS keychain. A running server picks it up on its next call.");
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("vaider: {e}");
            eprintln!(
                "Without a keychain, put the key in the environment instead, e.g. `export {}=...`, or in a .env file in {} (or in a project set up with `vaider init`).",
                secrets::env_names(&provider)[0],
                Config::dir().display()
            );
            Ok(ExitCode::FAILURE)
        }
    }
}

/// The key as typed (hidden) on a terminal, or all of standard input when it is piped in.
fn read_key(provider: &str) -> Result<String> {
    if std::io::stdin().is_terminal() {
        return Ok(rpassword::prompt_password(format!(
            "Paste your {provider} API key (input hidden): "
        ))?);
    }
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text)?;
    Ok(text)
}

/// `vaider key status`: whether a key is found and where from, never the key itself.
async fn key_status(provider: String) -> Result<ExitCode> {
    check_provider(&provider)?;
    let dirs = dotenv_dirs();
    let found = tokio::task::spawn_blocking({
        let provider = provider.clone();
        move || secrets::find_api_key(&provider, &dirs)
    })
    .await?;
    match found {
        Some((_, source)) => {
            println!("The {provider} key is set (from the {source}).");
            Ok(ExitCode::SUCCESS)
        }
        None => {
            println!("No {provider} key is set. Run `vaider key set`.");
            Ok(ExitCode::FAILURE)
        }
    }
}

fn check_provider(provider: &str) -> Result<()> {
    // Any provider the config knows (built in or added) may have a key.
    Config::load()?.provider(provider)?;
    Ok(())
}

pub(crate) fn dotenv_dirs() -> Vec<PathBuf> {
    let cwd = std::env::current_dir().ok();
    secrets::dotenv_dirs(&Config::dir(), cwd.as_deref())
}
