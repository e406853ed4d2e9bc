//! The `vaider serve` child process: started with a private data and config folder pointed at
//! the fake Gemini, its memory read from `/proc/<pid>/status`, and a REST client to call it.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

pub const TOKEN: &str = "bench-token";

/// A running `vaider serve`. Killed when dropped, so an error anywhere leaves no process behind.
pub struct Server {
    child: Child,
    pub pid: u32,
    /// "http://127.0.0.1:PORT".
    pub base: String,
    /// The version from the listening line, e.g. "0.1.0".
    pub version: String,
    _dirs: tempfile::TempDir,
}

impl Server {
    /// Starts `vaider serve --port 0` and waits for its listening line.
    /// `chunk_mib`: the upload chunk size to set, None for Vaider's default.
    pub async fn start(
        vaider: &Path,
        fake_url: &str,
        scratch: &Path,
        chunk_mib: Option<u32>,
    ) -> Result<Server> {
        Self::start_with_env(vaider, fake_url, scratch, chunk_mib, &[]).await
    }

    /// As [`Server::start`], with more environment (e.g. another provider).
    pub async fn start_with_env(
        vaider: &Path,
        fake_url: &str,
        scratch: &Path,
        chunk_mib: Option<u32>,
        extra_env: &[(&str, &str)],
    ) -> Result<Server> {
        let dirs = tempfile::Builder::new()
            .prefix("vaider-serve-")
            .tempdir_in(scratch)
            .context("create the server's data folder")?;
        let data = dirs.path().join("data");
        let config = dirs.path().join("config");
        let mut command = Command::new(vaider);
        // Whatever Vaider or Gemini settings the caller's shell has must not change the run.
        for (name, _) in std::env::vars_os() {
            let name = name.to_string_lossy().into_owned();
            if name.starts_with("VAIDER_")
                || name.starts_with("GEMINI_")
                || name == "GOOGLE_API_KEY"
            {
                command.env_remove(name);
            }
        }
        command
            .args(["serve", "--port", "0"])
            // Not the repository: Vaider reads a .env file from its working folder.
            .current_dir(dirs.path())
            .env("VAIDER_DATA_DIR", &data)
            .env("VAIDER_CONFIG_DIR", &config)
            .env("VAIDER_TOKEN", TOKEN)
            .env("GEMINI_API_KEY", fake_gemini::FakeGemini::API_KEY)
            .env("VAIDER_GEMINI_BASE_URL", fake_url)
            .env("VAIDER_GEMINI_POLL_INTERVAL_MS", "20")
            .env("VAIDER_TIMEOUT_SEC", "600")
            // The bench makes many calls a minute on purpose: no per-minute budget.
            .env("VAIDER_MAX_CALLS_PER_MINUTE", "0")
            .env("VAIDER_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(n) = chunk_mib {
            command.env("VAIDER_GEMINI_UPLOAD_CHUNK_MIB", n.to_string());
        }
        command.envs(extra_env.iter().copied());
        let mut child = command.spawn().with_context(|| {
            format!(
                "start {} (build it with scripts/bench.sh)",
                vaider.display()
            )
        })?;
        let pid = child.id().context("the vaider child has no pid")?;

        // Warnings go to our stderr as they come, so a failed analysis explains itself.
        if let Some(stderr) = child.stderr.take() {
            tokio::spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                while let Ok(Some(line)) = lines.next_line().await {
                    eprintln!("  vaider[{pid}]: {line}");
                }
            });
        }
        let stdout = child
            .stdout
            .take()
            .context("no stdout pipe to the vaider child")?;
        let mut lines = BufReader::new(stdout).lines();
        let wait_for_line = async {
            while let Some(line) = lines.next_line().await? {
                if let Some(found) = parse_listening(&line) {
                    return Ok(Some(found));
                }
            }
            Ok::<_, std::io::Error>(None)
        };
        let (version, base) =
            match tokio::time::timeout(Duration::from_secs(30), wait_for_line).await {
                Ok(Ok(Some(found))) => found,
                Ok(Ok(None)) => bail!(
                    "{} exited before printing its listening line (see its messages above)",
                    vaider.display()
                ),
                Ok(Err(e)) => return Err(e).context("read the vaider child's stdout"),
                Err(_) => bail!("{} printed no listening line within 30 s", vaider.display()),
            };
        // Keep draining stdout so the child never blocks on a full pipe.
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Ok(Server {
            child,
            pid,
            base,
            version,
            _dirs: dirs,
        })
    }

    pub fn status(&self) -> Result<ProcStatus> {
        ProcStatus::read(self.pid)
    }

    pub fn cpu(&self) -> Result<ProcCpu> {
        ProcCpu::read(&format!("/proc/{}/stat", self.pid))
    }

    pub async fn stop(mut self) -> Result<()> {
        self.child.kill().await.context("stop the vaider child")
    }
}

/// "Vaider 0.1.0 listening on http://127.0.0.1:PORT (...)" → ("0.1.0", "http://127.0.0.1:PORT").
fn parse_listening(line: &str) -> Option<(String, String)> {
    let rest = line.strip_prefix("Vaider ")?;
    let (version, rest) = rest.split_once(" listening on ")?;
    let url = rest.split_whitespace().next()?;
    Some((version.to_string(), url.trim_end_matches('/').to_string()))
}

/// The memory lines of `/proc/<pid>/status`, in KiB.
#[derive(Debug, Clone, Copy)]
pub struct ProcStatus {
    pub vm_rss_kib: u64,
    pub vm_hwm_kib: u64,
}

impl ProcStatus {
    pub fn read(pid: u32) -> Result<ProcStatus> {
        let path = format!("/proc/{pid}/status");
        let text = std::fs::read_to_string(&path).with_context(|| format!("read {path}"))?;
        let field = |name: &str| -> Result<u64> {
            text.lines()
                .find_map(|l| l.strip_prefix(name))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
                .with_context(|| format!("no {name} line in {path}"))
        };
        Ok(ProcStatus {
            vm_rss_kib: field("VmRSS:")?,
            vm_hwm_kib: field("VmHWM:")?,
        })
    }
}

/// CPU time a process has used so far (user + system), from `/proc/<pid>/stat`.
#[derive(Debug, Clone, Copy)]
pub struct ProcCpu {
    ticks: u64,
}

impl ProcCpu {
    /// Linux reports CPU time in clock ticks of 1/100 s (USER_HZ) on every platform it runs on.
    const TICKS_PER_SECOND: u64 = 100;

    /// This process.
    pub fn own() -> Result<ProcCpu> {
        Self::read("/proc/self/stat")
    }

    fn read(path: &str) -> Result<ProcCpu> {
        let text = std::fs::read_to_string(path).with_context(|| format!("read {path}"))?;
        // The command name (field 2) may hold spaces; the fields after its ')' do not.
        let after = text
            .rsplit_once(')')
            .map(|(_, rest)| rest)
            .with_context(|| format!("no ')' in {path}"))?;
        // utime and stime are fields 14 and 15: the 12th and 13th after the name.
        let fields: Vec<&str> = after.split_whitespace().collect();
        let field = |i: usize| -> Result<u64> {
            fields
                .get(i)
                .and_then(|v| v.parse().ok())
                .with_context(|| format!("no CPU time in {path}"))
        };
        Ok(ProcCpu {
            ticks: field(11)? + field(12)?,
        })
    }

    /// CPU time used between `earlier` and this reading.
    pub fn since(self, earlier: ProcCpu) -> Duration {
        Duration::from_millis(
            self.ticks.saturating_sub(earlier.ticks) * 1000 / Self::TICKS_PER_SECOND,
        )
    }
}

/// Reads VmRSS every `every` on its own thread (not a tokio task: the fake's hashing runs on
/// the runtime and must not delay the samples) and keeps the largest value seen.
pub struct RssSampler {
    stop: Arc<AtomicBool>,
    max_kib: Arc<AtomicU64>,
    samples: Arc<AtomicU64>,
    thread: std::thread::JoinHandle<()>,
}

impl RssSampler {
    pub fn start(pid: u32, every: Duration) -> RssSampler {
        let stop = Arc::new(AtomicBool::new(false));
        let max_kib = Arc::new(AtomicU64::new(0));
        let samples = Arc::new(AtomicU64::new(0));
        let thread = {
            let (stop, max_kib, samples) = (stop.clone(), max_kib.clone(), samples.clone());
            std::thread::spawn(move || {
                let mut next = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    if let Ok(s) = ProcStatus::read(pid) {
                        max_kib.fetch_max(s.vm_rss_kib, Ordering::Relaxed);
                        samples.fetch_add(1, Ordering::Relaxed);
                    }
                    next += every;
                    std::thread::sleep(next.saturating_duration_since(Instant::now()));
                }
            })
        };
        RssSampler {
            stop,
            max_kib,
            samples,
            thread,
        }
    }

    /// Stops sampling; returns (largest VmRSS in KiB, number of samples).
    pub fn finish(self) -> (u64, u64) {
        self.stop.store(true, Ordering::Relaxed);
        // A panic in the sampler only loses samples; the counts so far are still right.
        let _ = self.thread.join();
        (
            self.max_kib.load(Ordering::Relaxed),
            self.samples.load(Ordering::Relaxed),
        )
    }
}

/// One `POST /v1/analyse`, timed from just before sending to the last body byte.
pub struct Analysed {
    pub sent: Instant,
    pub headers: Instant,
    pub done: Instant,
    pub body: serde_json::Value,
}

pub async fn analyse(
    client: &reqwest::Client,
    server: &Server,
    video: &Path,
    no_cache: bool,
) -> Result<Analysed> {
    let body = serde_json::json!({
        "videoPath": video,
        "timeoutSec": 600,
        "noCache": no_cache,
    });
    analyse_body(client, server, &body).await
}

/// One `POST /v1/analyse` with this body (e.g. with a `sampling`), timed as [`analyse`].
pub async fn analyse_body(
    client: &reqwest::Client,
    server: &Server,
    body: &serde_json::Value,
) -> Result<Analysed> {
    let video = body["videoPath"].as_str().unwrap_or_default();
    let request = client
        .post(format!("{}/v1/analyse", server.base))
        .bearer_auth(TOKEN)
        .json(body);
    let sent = Instant::now();
    let response = request
        .send()
        .await
        .with_context(|| format!("POST {}/v1/analyse", server.base))?;
    let headers = Instant::now();
    let status = response.status();
    let bytes = response
        .bytes()
        .await
        .context("read the analyse response")?;
    let done = Instant::now();
    if !status.is_success() {
        bail!(
            "analyse {video} answered {status}: {}",
            String::from_utf8_lossy(&bytes)
        );
    }
    let body = serde_json::from_slice(&bytes).context("the analyse response is not JSON")?;
    Ok(Analysed {
        sent,
        headers,
        done,
        body,
    })
}

/// Where the release `vaider` is expected: beside this benchmark's own binary.
pub fn default_vaider() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join("vaider")))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("target/release/vaider"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_listening_line_parses() {
        let line = "Vaider 0.1.0 listening on http://127.0.0.1:40123 (MCP: http://127.0.0.1:40123/mcp, REST: ...)";
        assert_eq!(
            parse_listening(line),
            Some(("0.1.0".into(), "http://127.0.0.1:40123".into()))
        );
        assert_eq!(parse_listening("something else"), None);
    }

    #[test]
    fn cpu_time_of_this_process_grows_while_it_works() {
        // Works until the reading has grown, whatever else the machine runs; the bound is a
        // failure after a minute of no growth, not a timing claim.
        let before = ProcCpu::own().unwrap();
        let started = Instant::now();
        let mut x = 0u64;
        let used = loop {
            for _ in 0..1_000_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
            let used = ProcCpu::own().unwrap().since(before);
            if used >= Duration::from_millis(50) {
                break used;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "no CPU time counted: {used:?}"
            );
        };
        // The reading is this process's CPU time, not the machine's or a wall clock's.
        assert!(
            used <= started.elapsed() * 2 + Duration::from_millis(100),
            "{used:?}"
        );
    }
}
