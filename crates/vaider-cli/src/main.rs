//! The `vaider` command: parses arguments and wires the engine to a door. Everything it does
//! is in `vaider-core` (the pipeline) and `vaider-server` (HTTP and MCP).

mod commands;
mod eval;
mod models;
mod plan;
mod plan_trust;
mod review;
mod setup;
mod validate;
mod visual;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "vaider",
    version,
    about = "Vaider: lets AI coding agents see what their GUI code does.",
    long_about = "Vaider is a local MCP and REST server. An agent sends the path of a GUI-test video or screenshot; Vaider has a vision model describe it step by step, and keeps every request and answer beside the video and in a history."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the MCP (/mcp) and REST (/v1) server on 127.0.0.1.
    Serve {
        /// Port to listen on (default 3456, or VAIDER_PORT, or the config file).
        #[arg(long)]
        port: Option<u16>,
        /// Address to listen on; only loopback addresses are accepted.
        #[arg(long, default_value = "127.0.0.1")]
        host: std::net::IpAddr,
    },
    /// Open the history UI in the browser (starts the server here if none is running).
    Ui {
        /// Print the link only; do not start a browser.
        #[arg(long)]
        no_open: bool,
    },
    /// Serve MCP over stdin/stdout, for clients that start their servers as processes.
    Stdio {
        /// The tools to offer: all (default), a group (core, vision, visual, review, tests, qa,
        /// status) or tool names, comma-separated. Fewer tools cost the agent less context.
        #[arg(long, default_value = "all")]
        tools: String,
    },
    /// Describe a video or image from the terminal, through the same pipeline as the server.
    #[command(alias = "analyze")]
    Analyse(commands::AnalyseArgs),
    /// List past analyses, newest first.
    History {
        #[arg(long)]
        json: bool,
        #[arg(long, default_value_t = 20)]
        limit: usize,
    },
    /// Take a screenshot (the desktop, a window, a web page, an iOS simulator or an Android
    /// emulator) and keep it as the next phase in ./.screenshots/phases/.
    Capture(visual::CaptureArgs),
    /// Compare two screenshots: the pixel diff, then (only when pixels changed) the model's
    /// explanation, matched against the changes you expected. Exits 2 on a regression or a
    /// missed expected change.
    Compare(visual::CompareArgs),
    /// The pending visual changes (captures new or different from their baselines in
    /// .vaider/baselines/, failed Playwright snapshots): list, approve, reject, undo, the log.
    /// Without a subcommand, asks about each at this terminal.
    Review(review::ReviewArgs),
    /// Capture the pages .vaider/check.toml lists (or read a Playwright run with
    /// --playwright) and compare them with their baselines; exits 1 while anything is new or
    /// changed and unapproved. --junit, --summary and GitHub annotations for CI.
    Check(review::CheckArgs),
    /// Run a Playwright test with the project's own Playwright (video, screenshots and trace
    /// on for this run) and judge it by the rubric. Exits 0 when it passed, 2 when the rubric
    /// failed, 1 when the test could not be run.
    Validate(validate::ValidateArgs),
    /// Watch the failed tests of a finished Playwright run (its test-results folder or JSON
    /// report): each failed test is watched at its failing step with its error; one summary.
    TestResults {
        path: PathBuf,
        #[arg(long)]
        json: bool,
    },
    /// QA test plans: write one from requirements (generate), run it in a local browser (run),
    /// and read the plans and runs kept in the project's .qa-agent/ (list, runs, show).
    Plan {
        #[command(subcommand)]
        action: plan::PlanAction,
        /// The project folder (default: the current one).
        #[arg(long, global = true)]
        dir: Option<PathBuf>,
    },
    /// Print the bearer token HTTP clients must send.
    Token {
        /// Replace it with a new one, end every UI session, and list the agent configs to
        /// update.
        #[arg(long)]
        rotate: bool,
    },
    /// Manage provider API keys in the OS keychain.
    Key {
        #[command(subcommand)]
        action: KeyAction,
    },
    /// Write an agent's MCP config and VaiderRules.txt into a project. The config names the
    /// token in the client's own syntax (VAIDER_TOKEN, a VS Code input, or no token at all for
    /// Zed, which starts `vaider stdio`), so it holds no secret and can be committed.
    Init {
        /// cursor, claude, vscode, codex, gemini, windsurf or zed.
        #[arg(long)]
        client: String,
        /// The project folder (default: the current folder).
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// Write the token itself into the config instead, and add the config to the
        /// project's .gitignore when the project is in a git repository.
        #[arg(long)]
        inline_token: bool,
        /// Have the agent start Vaider from npm over stdio (`npx -y vaider stdio`) instead of
        /// reaching a running server: no URL, no token, nothing else to install.
        #[arg(long, conflicts_with = "inline_token")]
        npx: bool,
        /// Write the user's own config (in the home folder) rather than the project's.
        /// Windsurf has only that one.
        #[arg(long)]
        user: bool,
        /// Offer the agent only these tools, for a smaller tool list in its context: a group
        /// (core, vision, visual, review, tests, qa, status) or tool names, comma-separated.
        #[arg(long)]
        tools: Option<String>,
    },
    /// List the provider's models today: the default, the configured one, and those being
    /// shut down (with the day and the replacement).
    Models {
        /// Another provider than the configured one.
        #[arg(long)]
        provider: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Report what is set, what is missing and how to fix it.
    Doctor,
    /// Measure what Vaider sees: run its tools on the labelled set of GUI defects (eval/set,
    /// made by scripts/eval-set.sh) and score them (docs/eval.md). `vaider eval compare A B`
    /// shows two runs side by side.
    #[command(args_conflicts_with_subcommands = true)]
    Eval {
        #[command(subcommand)]
        action: Option<eval::EvalAction>,
        #[command(flatten)]
        run: eval::EvalArgs,
    },
}

#[derive(Subcommand)]
enum KeyAction {
    /// Store a key, read from standard input (paste it, or pipe it in).
    Set {
        #[arg(long, default_value = "gemini")]
        provider: String,
    },
    /// Remove a key from the keychain.
    Clear {
        #[arg(long, default_value = "gemini")]
        provider: String,
    },
    /// Say whether a key is found, and where (never the key itself).
    Status {
        #[arg(long, default_value = "gemini")]
        provider: String,
    },
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    // The capabilities' tasks, known by name for `vaider status`.
    vaider_visual::register_tasks();
    vaider_qa::register_tasks();
    vaider_validate::register_tasks();
    // A validation's failed toHaveScreenshot becomes a pending change in the review loop.
    vaider_visual::register_snapshot_review();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("vaider: could not start: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(commands::run(cli.command)) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("vaider: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}

pub(crate) fn parse_sampling(text: &str) -> Result<vaider_core::sampling::VideoSampling, String> {
    vaider_core::sampling::VideoSampling::parse(text).ok_or_else(|| {
        format!(
            "{text:?} is not a sampling: use {}",
            vaider_core::sampling::VideoSampling::NAMES
        )
    })
}

fn parse_viewport(text: &str) -> Result<(u32, u32), String> {
    let (w, h) = text
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("{text:?} is not WIDTHxHEIGHT, e.g. 1280x800"))?;
    match (w.trim().parse(), h.trim().parse()) {
        (Ok(w), Ok(h)) if w > 0 && h > 0 => Ok((w, h)),
        _ => Err(format!("{text:?} is not WIDTHxHEIGHT, e.g. 1280x800")),
    }
}
