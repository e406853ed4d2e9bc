//! `vaider review` and `vaider check`: the review loop from the terminal. `review` lists the
//! pending changes and takes a person's decision on them (an answer at this terminal, or
//! `--yes` on the user's own command line); `check` captures the pages `.vaider/check.toml`
//! lists (or reads a Playwright run), compares them with their baselines, writes what CI reads
//! (JUnit XML, a Markdown summary, GitHub annotations) and exits 1 while anything is
//! unapproved. Every decision is the library's (`vaider_visual::review`); this only asks.

use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Result;
use vaider_capture::Target;
use vaider_core::person::Decision;
use vaider_core::{Config, Door, Vaider};
use vaider_visual::review::report::{self, CheckEntry, Pictures};
use vaider_visual::review::{self as loop_, BaselineCheck, CaptureCheck, Changes, PendingChange};

/// What `vaider review` was asked.
#[derive(Debug, clap::Args)]
pub struct ReviewArgs {
    #[command(subcommand)]
    pub action: Option<ReviewAction>,
}

#[derive(Debug, clap::Subcommand)]
pub enum ReviewAction {
    /// The pending changes, newest first.
    List {
        #[arg(long)]
        json: bool,
    },
    /// Approve a change: its picture becomes the baseline.
    Approve(DecideArgs),
    /// Reject a change: the baseline stays.
    Reject(DecideArgs),
    /// Revert the last decision (the baseline file is restored).
    Undo {
        #[arg(long, default_value = "")]
        reason: String,
        /// Yours, given on your own command line where no terminal can ask (CI, a script).
        #[arg(long)]
        yes: bool,
    },
    /// Every decision, oldest first (from .vaider/baselines/decisions.jsonl).
    Log {
        #[arg(long)]
        json: bool,
    },
}

#[derive(Debug, clap::Args)]
pub struct DecideArgs {
    /// The change's id (`vaider review list`); or --all.
    pub id: Option<String>,
    /// Every pending change.
    #[arg(long)]
    pub all: bool,
    /// Why, kept in the decisions log.
    #[arg(long, default_value = "")]
    pub reason: String,
    /// Yours, given on your own command line where no terminal can ask (CI, a script).
    #[arg(long)]
    pub yes: bool,
}

pub async fn review(args: ReviewArgs) -> Result<ExitCode> {
    let project = std::env::current_dir()?;
    match args.action {
        None => interactive(&project).await,
        Some(ReviewAction::List { json }) => list(&project, json),
        Some(ReviewAction::Approve(args)) => decide(&project, args, true).await,
        Some(ReviewAction::Reject(args)) => decide(&project, args, false).await,
        Some(ReviewAction::Undo { reason, yes }) => {
            let decision = person(yes)?;
            let record = loop_::undo(&project, &decision, &reason)?;
            remember(&project, &record).await;
            println!(
                "undid decision {} on {}@{}",
                record.undoes.unwrap_or_default(),
                record.name,
                record.variant
            );
            Ok(ExitCode::SUCCESS)
        }
        Some(ReviewAction::Log { json }) => {
            let log = loop_::decisions(&project);
            if json {
                println!("{}", serde_json::to_string_pretty(&log)?);
            }
            for r in log.iter().filter(|_| !json) {
                let who = r.git_user.as_deref().unwrap_or(&r.user);
                println!(
                    "{} {} {}@{} by {who}: {}",
                    r.at,
                    loop_::decide::action_word(r.action),
                    r.name,
                    r.variant,
                    r.reason
                );
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// The person behind a decision: `--yes` on the user's own command line, else an answer at
/// this terminal; refused otherwise (an agent's shell tool, a pipe).
fn person(yes: bool) -> Result<Decision> {
    if yes {
        return Ok(Decision::on_command_line());
    }
    Decision::at_terminal().ok_or_else(|| {
        anyhow::anyhow!("a decision on a visual change is a person's: decide in the review page (`vaider ui`, page #/review), run this at a terminal, or add --yes to say it is yours (in CI, a script)")
    })
}

fn list(project: &Path, json: bool) -> Result<ExitCode> {
    let pending = Changes::in_project(project).pending();
    if json {
        println!("{}", serde_json::to_string_pretty(&pending)?);
        return Ok(ExitCode::SUCCESS);
    }
    if pending.is_empty() {
        println!("No pending changes.");
    }
    for change in &pending {
        println!("{}", line(change));
    }
    Ok(ExitCode::SUCCESS)
}

fn line(change: &PendingChange) -> String {
    let verdicts: Vec<String> = change
        .verdicts
        .iter()
        .map(|v| format!("region {} {}", v.region, v.verdict))
        .collect();
    format!(
        "{}  {}@{}  {}  {} region(s)  {}{}",
        change.id,
        change.name,
        change.variant,
        change.status.as_str(),
        change.regions.len(),
        change.created,
        if verdicts.is_empty() {
            String::new()
        } else {
            format!("  {}", verdicts.join(", "))
        }
    )
}

async fn decide(project: &Path, args: DecideArgs, approve: bool) -> Result<ExitCode> {
    let ids: Vec<String> = match (&args.id, args.all) {
        (Some(id), false) => vec![id.clone()],
        (None, true) => Changes::in_project(project)
            .pending()
            .into_iter()
            .map(|c| c.id)
            .collect(),
        _ => anyhow::bail!("give one change's id (`vaider review list`) or --all"),
    };
    let decision = person(args.yes)?;
    for id in ids {
        let record = match approve {
            true => loop_::approve(project, &id, &decision, &args.reason)?,
            false => loop_::reject(project, &id, &decision, &args.reason)?,
        };
        remember(project, &record).await;
        println!(
            "{} {}@{} ({})",
            loop_::decide::action_word(record.action),
            record.name,
            record.variant,
            record.baseline
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Each pending change, asked at this terminal: y approves, n rejects, s skips, q stops.
async fn interactive(project: &Path) -> Result<ExitCode> {
    let decision = person(false)?;
    let pending = Changes::in_project(project).pending();
    if pending.is_empty() {
        println!("No pending changes.");
    }
    for change in pending {
        eprintln!(
            "\n{}\n  baseline {}\n  actual   {}",
            line(&change),
            change.baseline.display(),
            change.actual.display()
        );
        if let Some(annotated) = &change.annotated {
            eprintln!("  regions  {}", annotated.display());
        }
        for v in &change.verdicts {
            eprintln!("  region {}: {} ({})", v.region, v.verdict, v.reason);
        }
        eprint!("Approve? [y]es, [n]o (reject), [s]kip, [q]uit: ");
        std::io::stderr().flush()?;
        let mut answer = String::new();
        std::io::stdin().lock().read_line(&mut answer)?;
        let record = match answer.trim() {
            "y" | "yes" => {
                loop_::approve(project, &change.id, &decision, "approved at the terminal")?
            }
            "n" | "no" => {
                loop_::reject(project, &change.id, &decision, "rejected at the terminal")?
            }
            "q" | "quit" => break,
            _ => continue,
        };
        remember(project, &record).await;
    }
    Ok(ExitCode::SUCCESS)
}

/// The decision in the history too; a history that cannot be opened is said, not fatal (the
/// log beside the baselines has it).
async fn remember(project: &Path, record: &loop_::DecisionRecord) {
    let engine = Config::load()
        .map_err(anyhow::Error::from)
        .and_then(|c| Ok(Vaider::open(c)?));
    let outcome = match engine {
        Ok(engine) => loop_::decide::record_in_history(&engine, project, record, Door::Cli)
            .await
            .map_err(|e| e.to_string()),
        Err(e) => Err(e.to_string()),
    };
    if let Err(e) = outcome {
        eprintln!("vaider: the decision is in the log, not in the history: {e}");
    }
}

/// What `vaider check` was asked.
#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// Write a commented .vaider/check.toml and stop.
    #[arg(long)]
    pub init: bool,
    /// Check a Playwright run instead: its JSON report (also one merged from shards) or its
    /// test-results folder.
    #[arg(long, value_name = "REPORT_OR_FOLDER")]
    pub playwright: Option<PathBuf>,
    /// Write JUnit XML here.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Write a Markdown summary here, its thumbnails relative to it. $GITHUB_STEP_SUMMARY, when
    /// set, gets one too, naming the pictures (GitHub shows no local files).
    #[arg(long, value_name = "FILE")]
    pub summary: Option<PathBuf>,
    /// Where the summary's pictures are published (the address `.vaider/local/review/` is
    /// served at): its thumbnails then link there, on GitHub too.
    #[arg(long, value_name = "URL")]
    pub image_url: Option<String>,
    /// Approve everything new or changed, and take the noise offered to be ignored: your own
    /// command, like Playwright's -u.
    #[arg(long)]
    pub update: bool,
    /// Pixels only: no model verdicts.
    #[arg(long)]
    pub no_model: bool,
    #[arg(long)]
    pub json: bool,
}

pub async fn check(args: CheckArgs) -> Result<ExitCode> {
    let project = std::env::current_dir()?;
    if args.init {
        let path = loop_::check_file::write_template(&project)?;
        println!("{}", path.display());
        eprintln!("Edit it to list your pages, then run `vaider check`.");
        return Ok(ExitCode::SUCCESS);
    }
    if let Some(url) = &args.image_url {
        if !(url.starts_with("https://") || url.starts_with("http://")) {
            anyhow::bail!(
                "--image-url takes the http(s) address .vaider/local/review/ is published at (such as https://example.com/pr-12/), not {url:?}"
            );
        }
    }
    let engine = match args.no_model {
        true => None,
        false => Some(Vaider::open(Config::load()?)?),
    };
    let mut entries = match &args.playwright {
        Some(results) => playwright_entries(engine.as_deref(), &project, results).await?,
        None => page_entries(engine.as_deref(), &project).await?,
    };
    if args.update {
        update(&project, &mut entries).await?;
    }
    write_reports(&project, &args, &entries)?;
    for entry in &entries {
        println!("{}", entry_line(entry));
    }
    let failing = entries.iter().filter(|e| e.fails()).count();
    if args.json {
        println!("{}", serde_json::to_string_pretty(&entries)?);
    }
    eprintln!(
        "{} checked, {failing} to review{}",
        entries.len(),
        if failing > 0 {
            ": `vaider review` approves or rejects them"
        } else {
            ""
        }
    );
    Ok(if failing > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn entry_line(entry: &CheckEntry) -> String {
    let status = match (&entry.error, entry.status, entry.approved) {
        (Some(e), ..) => format!("error: {e}"),
        (_, Some(s), true) => format!("{} → approved", s.as_str()),
        (_, Some(s), false) => s.as_str().to_string(),
        _ => "unknown".into(),
    };
    format!("{}@{}  {status}", entry.name, entry.variant)
}

async fn page_entries(engine: Option<&Vaider>, project: &Path) -> Result<Vec<CheckEntry>> {
    let file = loop_::check_file::read(project)?;
    let mut entries = Vec::new();
    for page in file.page {
        let check = CaptureCheck {
            ask_model: engine.is_some(),
            ..CaptureCheck::default()
        };
        let target = page.target(project).await?;
        let variant = match &target {
            Target::Web(web) => loop_::capture::web_variant(web),
            _ => String::new(),
        };
        let outcome = loop_::capture_and_check(
            engine,
            project,
            &page.name,
            "vaider check",
            &target,
            check,
            Door::Cli,
        )
        .await;
        entries.push(match outcome {
            Ok(data) => entry_of(project, &page.name, &variant, data.baseline),
            Err(e) => CheckEntry {
                name: page.name.clone(),
                variant,
                status: None,
                baseline: String::new(),
                change: None,
                error: Some(e.to_string()),
                approved: false,
            },
        });
    }
    Ok(entries)
}

fn entry_of(project: &Path, name: &str, variant: &str, check: Option<BaselineCheck>) -> CheckEntry {
    CheckEntry {
        name: name.to_string(),
        variant: variant.to_string(),
        status: check.as_ref().map(|c| c.status),
        baseline: check
            .as_ref()
            .map(|c| {
                c.baseline
                    .strip_prefix(project)
                    .unwrap_or(&c.baseline)
                    .display()
                    .to_string()
            })
            .unwrap_or_default(),
        change: check.and_then(|c| c.change),
        error: None,
        approved: false,
    }
}

async fn playwright_entries(
    engine: Option<&Vaider>,
    project: &Path,
    results: &Path,
) -> Result<Vec<CheckEntry>> {
    let mut entries = Vec::new();
    let run = loop_::playwright::PlaywrightRun {
        project,
        results,
        config: None,
        model: None,
        parent_id: None,
    };
    let imported = loop_::playwright::review_run(engine, run, Door::Cli).await?;
    if let Some(note) = &imported.layout_note {
        eprintln!("vaider: {note}");
    }
    for checked in imported.checks {
        let (name, variant) = match &checked.change {
            Some(c) => (c.name.clone(), c.variant.clone()),
            None => (
                checked
                    .baseline
                    .file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
                "playwright".into(),
            ),
        };
        entries.push(entry_of(project, &name, &variant, Some(checked)));
    }
    Ok(entries)
}

/// `--update`: every new or changed capture approved, and every noise offer taken, as the
/// user's own command.
async fn update(project: &Path, entries: &mut [CheckEntry]) -> Result<()> {
    let decision = Decision::on_command_line();
    for entry in entries.iter_mut().filter(|e| e.awaits_decision()) {
        if let Some(change) = &entry.change {
            let record = loop_::approve(project, &change.id, &decision, "vaider check --update")?;
            remember(project, &record).await;
            entry.approved = true;
        }
    }
    Ok(())
}

/// This GitHub Actions run's page, from the variables the runner sets.
fn github_run_url() -> Option<String> {
    let var = |name| std::env::var(name).ok().filter(|v| !v.is_empty());
    Some(format!(
        "{}/{}/actions/runs/{}",
        var("GITHUB_SERVER_URL")?,
        var("GITHUB_REPOSITORY")?,
        var("GITHUB_RUN_ID")?
    ))
}

fn write_reports(project: &Path, args: &CheckArgs, entries: &[CheckEntry]) -> Result<()> {
    let changes = Changes::in_project(project).dir().to_path_buf();
    if let Some(path) = &args.junit {
        std::fs::write(path, report::junit_xml(entries))
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    if let Some(path) = &args.summary {
        // The folder as the file system names it (`..` and links resolved), as the pictures'
        // paths are (under the working folder), so the relative paths lead to them.
        let summary_dir = match path.parent().filter(|p| !p.as_os_str().is_empty()) {
            Some(dir) => std::fs::canonicalize(dir)
                .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?,
            None => std::env::current_dir()?,
        };
        let pictures = match &args.image_url {
            Some(base) => Pictures::Published {
                changes: &changes,
                base,
            },
            None => Pictures::Beside {
                summary_dir: &summary_dir,
            },
        };
        std::fs::write(path, report::markdown_summary(entries, pictures))
            .map_err(|e| anyhow::anyhow!("cannot write {}: {e}", path.display()))?;
    }
    // GitHub's pages show pictures from https addresses only: a local path would be a broken
    // image there, so the pictures are named, with the run they belong to.
    if let Some(path) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|p| !p.is_empty()) {
        let run = github_run_url();
        let pictures = match &args.image_url {
            Some(base) => Pictures::Published {
                changes: &changes,
                base,
            },
            None => Pictures::Named {
                project,
                changes: &changes,
                run: run.as_deref(),
            },
        };
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)?;
        file.write_all(report::markdown_summary(entries, pictures).as_bytes())?;
    }
    if std::env::var("GITHUB_ACTIONS").as_deref() == Ok("true") {
        for line in report::github_annotations(entries) {
            println!("{line}");
        }
    }
    Ok(())
}
