//! `vaider-quota-bench`: how well Vaider uses a provider's per-minute quota once it has learned
//! it. Many agents call at once, for several minutes, against the in-process fake Gemini with
//! a per-minute quota per key and model (Google's 429 with QuotaFailure and RetryInfo past
//! it). Counted at the fake, minute by minute from the start: calls answered (goal, once
//! learned: at least 90 % of the quota) and calls refused with 429 (goal, once learned: at
//! most 1 a minute). The first minute is the learning one.
//!
//! Run with `scripts/bench.sh --quota`, or `vaider-quota-bench [--quota N] [--minutes M]
//! [--agents A]` (defaults 30, 3, 40). Loopback only.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use vaider_core::analysis::tools;

use anyhow::{bail, Context, Result};
use fake_gemini::FakeGemini;
use vaider_bench::report::{verdict, Table};
use vaider_core::progress::NoProgress;
use vaider_core::secrets::{ApiKey, KeySource};
use vaider_core::{AnalysisRequest, Config, Door, Vaider};

struct Options {
    quota: u32,
    minutes: u32,
    agents: usize,
}

fn options() -> Result<Options> {
    let mut options = Options {
        quota: 30,
        minutes: 3,
        agents: 40,
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    for pair in args.chunks(2) {
        let value = pair.get(1).context("every option needs a value")?;
        match pair[0].as_str() {
            "--quota" => options.quota = value.parse()?,
            "--minutes" => options.minutes = value.parse()?,
            "--agents" => options.agents = value.parse()?,
            other => bail!("unknown option {other}; see the file's header"),
        }
    }
    if options.minutes < 2 || options.quota == 0 || options.agents == 0 {
        bail!(
            "--minutes must be at least 2 (the first one learns), --quota and --agents at least 1"
        );
    }
    Ok(options)
}

fn shared_media() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/media"
    ))
}

/// Counts of `times` in each minute from `start`, for `minutes` minutes.
fn per_minute(times: &[Instant], start: Instant, minutes: u32) -> Vec<usize> {
    let mut counts = vec![0; minutes as usize];
    for t in times {
        let minute = (t.saturating_duration_since(start).as_secs() / 60) as usize;
        if let Some(c) = counts.get_mut(minute) {
            *c += 1;
        }
    }
    counts
}

#[tokio::main]
async fn main() -> Result<()> {
    let options = options()?;
    let work = tempfile::tempdir()?;
    let image = work.path().join("login.png");
    std::fs::copy(shared_media().join("login.png"), &image)
        .context("copy ../shared/media/login.png")?;

    let fake = FakeGemini::start().await;
    fake.set_quota_per_minute(Some(options.quota));
    let mut config = Config {
        data_dir: Some(work.path().join("data")),
        ..Config::default()
    };
    config.gemini.base_url = fake.base_url();
    let engine: Arc<Vaider> = Vaider::open(config)?;
    engine.set_api_key(
        ApiKey::new(FakeGemini::API_KEY),
        KeySource::Environment("GEMINI_API_KEY".into()),
    );

    let start = Instant::now();
    let end = start + Duration::from_secs(60 * u64::from(options.minutes));
    eprintln!(
        "{} agents calling for {} minutes against a quota of {} a minute…",
        options.agents, options.minutes, options.quota
    );
    let agents: Vec<_> = (0..options.agents)
        .map(|agent| {
            let engine = engine.clone();
            let image = image.display().to_string();
            tokio::spawn(async move {
                let mut errors = Vec::new();
                let mut n = 0;
                while Instant::now() < end {
                    n += 1;
                    let mut request =
                        AnalysisRequest::new(tools::ANALYZE_IMAGE, Door::Cli, image.clone());
                    request.prompt = Some(format!("Agent {agent}, call {n}: what is shown?"));
                    request.no_cache = true;
                    // At the end the agent gives up, leaving the queue.
                    match tokio::time::timeout_at(end.into(), engine.analyse(request, &NoProgress))
                        .await
                    {
                        Ok(Ok(_)) | Err(_) => {}
                        Ok(Err(failure)) => errors.push(failure.error.code().as_str()),
                    }
                }
                errors
            })
        })
        .collect();
    let mut errors = Vec::new();
    for agent in agents {
        errors.extend(agent.await?);
    }

    let answered = per_minute(&fake.generate_answered_at(), start, options.minutes);
    let refused = per_minute(&fake.quota_refusals(), start, options.minutes);
    let mut table = Table::new(&["minute", "calls answered", "of the quota", "429s"]);
    for (i, (a, r)) in answered.iter().zip(&refused).enumerate() {
        let label = if i == 0 {
            "1 (learning)".to_string()
        } else {
            (i + 1).to_string()
        };
        table.row(&[
            &label,
            &a.to_string(),
            &format!("{:.0} %", *a as f64 * 100.0 / f64::from(options.quota)),
            &r.to_string(),
        ]);
    }
    let learned_minutes = (options.minutes - 1) as f64;
    let rate = answered[1..].iter().sum::<usize>() as f64 / learned_minutes;
    let refusals = refused[1..].iter().sum::<usize>() as f64 / learned_minutes;
    let share = rate / f64::from(options.quota);
    println!(
        "## Learned quota: {} agents, quota {} a minute, {} minutes\n",
        options.agents, options.quota, options.minutes
    );
    println!("{}", table.finish());
    let mut summary = Table::new(&["once learned (minutes 2..)", "measured", "goal", "verdict"]);
    summary.row(&[
        "calls a minute",
        &format!("{rate:.1} ({:.0} % of the quota)", share * 100.0),
        "≥ 90 %",
        verdict(share >= 0.9),
    ]);
    summary.row(&[
        "429s a minute",
        &format!("{refusals:.2}"),
        "≤ 1",
        verdict(refusals <= 1.0),
    ]);
    println!("{}", summary.finish());
    println!(
        "Learned: {:?}. Calls that failed: {} {:?}.",
        engine.quotas().learned(),
        errors.len(),
        errors
    );
    Ok(())
}
