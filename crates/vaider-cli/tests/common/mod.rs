//! Runs the real `vaider` binary in an isolated environment: its own data and config folders,
//! no inherited keys or tokens, and (unless a test wants it) no keychain.

#![allow(dead_code)]

pub mod review;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

pub fn shared_media() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/media"
    ))
}

pub struct Sandbox {
    pub root: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        let root = tempfile::tempdir().unwrap();
        for dir in ["data", "config", "work", "home"] {
            std::fs::create_dir_all(root.path().join(dir)).unwrap();
        }
        Sandbox { root }
    }

    pub fn work(&self) -> PathBuf {
        self.root.path().join("work")
    }

    pub fn data(&self) -> PathBuf {
        self.root.path().join("data")
    }

    /// Copies a shared sample into the work folder.
    pub fn media(&self, name: &str) -> PathBuf {
        let to = self.work().join(name);
        std::fs::copy(shared_media().join(name), &to).unwrap();
        to
    }

    /// `vaider` with a clean environment. The keychain is out of reach (a D-Bus address that
    /// leads nowhere) so no key stored by another test or by the user is picked up, and the
    /// home folder is the sandbox's, so no agent config of the user's is read or written.
    pub fn vaider(&self) -> Command {
        let mut command = self.vaider_with_keychain();
        command
            .env(
                "DBUS_SESSION_BUS_ADDRESS",
                "unix:path=/nonexistent/vaider-test-bus",
            )
            .env("HOME", self.home())
            // The agents' own folder variables would lead init and doctor out of the sandbox.
            .env_remove("CODEX_HOME")
            .env_remove("GEMINI_CLI_HOME")
            .env_remove("XDG_CONFIG_HOME");
        command
    }

    /// The sandbox's home folder (user-level agent configs).
    pub fn home(&self) -> PathBuf {
        self.root.path().join("home")
    }

    /// `vaider` that may reach the session's real Secret Service.
    pub fn vaider_with_keychain(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_vaider"));
        for name in [
            "GEMINI_API_KEY",
            "GOOGLE_API_KEY",
            "VAIDER_TOKEN",
            "VAIDER_PORT",
            "VAIDER_MODEL",
            "VAIDER_GEMINI_MODEL",
            "VAIDER_LOG",
        ] {
            command.env_remove(name);
        }
        command
            .env("VAIDER_DATA_DIR", self.data())
            .env("VAIDER_CONFIG_DIR", self.root.path().join("config"))
            .env("VAIDER_GEMINI_POLL_INTERVAL_MS", "20")
            // Nothing leaves the machine: `vaider doctor` and `vaider models` ask the provider
            // for its models, so a test with no fake of its own points at a closed local port.
            .env("VAIDER_GEMINI_BASE_URL", "http://127.0.0.1:9")
            .current_dir(self.work())
            .stdin(Stdio::null());
        command
    }
}

pub fn run(mut command: Command) -> Output {
    // No terminal to ask at, as in CI or an agent's shell tool.
    command.stdin(std::process::Stdio::null());
    command.output().expect("run vaider")
}

pub fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

pub fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Runs `vaider` with `input` on stdin.
pub fn run_with_input(mut command: Command, input: &str) -> Output {
    use std::io::Write;
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("spawn vaider");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// A running `vaider serve`, killed on drop.
pub struct Served {
    pub child: Child,
    pub url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `vaider serve --port 0` and waits for its "listening on" line.
pub fn serve(mut command: Command) -> Served {
    command
        .args(["serve", "--port", "0"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = command.spawn().expect("spawn vaider serve");
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = lines.next().expect("a listening line").unwrap();
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .expect("URL in the listening line")
        .to_string();
    Served { child, url }
}

pub fn sha256_hex(path: &Path) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(std::fs::read(path).unwrap()))
}
