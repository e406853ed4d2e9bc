//! The `fake-gemini` binary: serves the fake Gemini API on 127.0.0.1 until killed, for
//! scripts and benchmarks. Prints one line `FAKE_GEMINI_URL=http://127.0.0.1:PORT` on stdout.

use std::io::Write;
use std::process::ExitCode;
use std::time::Duration;

use fake_gemini::FakeGemini;

const USAGE: &str =
    "usage: fake-gemini [--port N] [--processing-polls N] [--generate-delay-ms N] [--reply-file PATH]\n\
  [--quota-per-minute N] [--quota-per-day N]\n\
  Serves a local stand-in for the Gemini REST API on 127.0.0.1 (API key: test-gemini-key)\n\
  and prints FAKE_GEMINI_URL=http://127.0.0.1:PORT once listening.\n\
  --reply-file: every answer's text is this file's content (for UI tests that need a\n\
  known description, e.g. JSON with timestamps), instead of the built-in answer.\n\
  --quota-per-minute, --quota-per-day: generateContent calls allowed per key and model\n\
  (Google's 429 RESOURCE_EXHAUSTED past them; none by default).\n\
  Set FAKE_GEMINI_LOG=1 to log each request's method and path (never its query) to stderr.";

struct Options {
    port: u16,
    processing_polls: Option<u32>,
    generate_delay_ms: Option<u64>,
    reply_file: Option<String>,
    quota_per_minute: Option<u32>,
    quota_per_day: Option<u32>,
}

fn parse_args(args: &[String]) -> Result<Options, String> {
    let mut opts = Options {
        port: 0,
        processing_polls: None,
        generate_delay_ms: None,
        reply_file: None,
        quota_per_minute: None,
        quota_per_day: None,
    };
    let mut i = 0;
    while i < args.len() {
        let (flag, inline) = match args[i].split_once('=') {
            Some((f, v)) => (f.to_string(), Some(v.to_string())),
            None => (args[i].clone(), None),
        };
        if flag == "-h" || flag == "--help" {
            return Err(String::new());
        }
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                args.get(i)
                    .cloned()
                    .ok_or_else(|| format!("{flag} needs a value"))?
            }
        };
        let bad = |_| format!("{flag}: not a valid number: {value:?}");
        match flag.as_str() {
            "--port" => opts.port = value.parse().map_err(bad)?,
            "--processing-polls" => opts.processing_polls = Some(value.parse().map_err(bad)?),
            "--generate-delay-ms" => opts.generate_delay_ms = Some(value.parse().map_err(bad)?),
            "--reply-file" => opts.reply_file = Some(value),
            "--quota-per-minute" => opts.quota_per_minute = Some(value.parse().map_err(bad)?),
            "--quota-per-day" => opts.quota_per_day = Some(value.parse().map_err(bad)?),
            _ => return Err(format!("unknown argument {flag:?}")),
        }
        i += 1;
    }
    Ok(opts)
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opts = match parse_args(&args) {
        Ok(o) => o,
        Err(e) if e.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("fake-gemini: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let fake = match FakeGemini::start_on(opts.port).await {
        Ok(f) => f,
        Err(e) => {
            eprintln!("fake-gemini: cannot listen on 127.0.0.1:{}: {e}", opts.port);
            return ExitCode::FAILURE;
        }
    };
    if let Some(n) = opts.processing_polls {
        fake.set_processing_polls(n);
    }
    if let Some(ms) = opts.generate_delay_ms {
        fake.set_generate_delay(Duration::from_millis(ms));
    }
    fake.set_quota_per_minute(opts.quota_per_minute);
    fake.set_quota_per_day(opts.quota_per_day);
    if let Some(path) = &opts.reply_file {
        match std::fs::read_to_string(path) {
            Ok(text) => fake.set_reply_text(Some(text)),
            Err(e) => {
                eprintln!("fake-gemini: cannot read --reply-file {path}: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let mut out = std::io::stdout().lock();
    if writeln!(out, "FAKE_GEMINI_URL={}", fake.base_url())
        .and_then(|_| out.flush())
        .is_err()
    {
        return ExitCode::FAILURE;
    }
    drop(out);
    // Serve until killed (SIGINT ends it cleanly too).
    let _ = tokio::signal::ctrl_c().await;
    ExitCode::SUCCESS
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn flags_parse() {
        let o = parse_args(&args(&[
            "--port",
            "8123",
            "--processing-polls=3",
            "--generate-delay-ms",
            "50",
        ]))
        .expect("valid");
        assert_eq!(o.port, 8123);
        assert_eq!(o.processing_polls, Some(3));
        assert_eq!(o.generate_delay_ms, Some(50));
        assert!(parse_args(&args(&["--port"])).is_err());
        assert!(parse_args(&args(&["--port", "x"])).is_err());
        assert!(parse_args(&args(&["--bogus", "1"])).is_err());
        assert_eq!(parse_args(&args(&["--help"])).err().as_deref(), Some(""));
    }
}
