//! `vaider models`: the models the configured provider serves today, from its own list,
//! with Vaider's default, the configured one and the retiring ones (with their shutdown day
//! and replacements) marked. Exits 1 when the provider's list could not be read.

use std::process::ExitCode;

use anyhow::Result;
use vaider_core::models::{self, Catalogue, Lifecycle, ListLimits};
use vaider_core::Config;

pub async fn models(provider: Option<String>, json: bool) -> Result<ExitCode> {
    let config = Config::load()?;
    let dirs = crate::commands::dotenv_dirs();
    let catalogue =
        models::catalogue(&config, provider.as_deref(), &dirs, ListLimits::default()).await?;
    if json {
        println!("{}", serde_json::to_string_pretty(&catalogue)?);
    } else {
        print_table(&catalogue);
    }
    Ok(if catalogue.list_error.is_none() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn print_table(catalogue: &Catalogue) {
    println!("Models of {}:", catalogue.provider);
    for m in &catalogue.models {
        let mut notes = Vec::new();
        if m.default {
            notes.push("default".to_string());
        }
        if m.configured {
            notes.push("configured".to_string());
        }
        match m.lifecycle {
            Lifecycle::Current => {}
            Lifecycle::Deprecated { shutdown } => {
                notes.push(format!("deprecated, shuts down {shutdown}"))
            }
            Lifecycle::ShutDown { shutdown } => notes.push(format!("shut down {shutdown}")),
        }
        if !m.replacements.is_empty() {
            notes.push(format!("use {}", m.replacements.join(" or ")));
        }
        if !m.listed && catalogue.list_error.is_none() {
            notes.push("not served".to_string());
        }
        let mark = if m.configured { '*' } else { ' ' };
        let limits = match (m.info.input_token_limit, m.info.output_token_limit) {
            (Some(i), Some(o)) => format!("{i} in / {o} out"),
            _ => String::new(),
        };
        println!(
            "{mark} {:<32} {:<22} {}",
            m.info.id,
            limits,
            notes.join(" · ")
        );
    }
    if let Some(error) = &catalogue.list_error {
        eprintln!(
            "vaider: could not list {}'s models: {error}",
            catalogue.provider
        );
    }
    if let Some(problem) = catalogue.configured_problem() {
        eprintln!("vaider: {problem}");
    }
    println!("Set one with `model` in config.toml, VAIDER_MODEL, or the `--model` option of `vaider analyse`.");
}
