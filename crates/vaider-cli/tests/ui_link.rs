//! What `vaider ui` hands out, attacked as another local program would: the browser's command
//! line (readable by every local user in /proc/*/cmdline) carries a one-time login code, never
//! the token; and a program that took Vaider's port first and answers `{"status":"ok"}` gets
//! neither the token nor a code, and the person is told who holds the port. The browser is a
//! PATH-shadowed `xdg-open` that records its arguments and every process's command line.

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::*;

/// A fake `xdg-open` in its own folder, put first on the PATH: it writes its argument and the
/// command line of every process it can see (while `vaider ui` and it run) to `record`.
fn fake_opener(dir: &Path) -> (PathBuf, PathBuf) {
    let bin = dir.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let record = dir.join("opened.txt");
    let script = format!(
        "#!/bin/sh\n\
         {{ echo \"ARGV $*\"; for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < \"$f\" 2>/dev/null; echo; done; }} > '{0}.part'\n\
         mv '{0}.part' '{0}'\n",
        record.display()
    );
    let opener = bin.join("xdg-open");
    std::fs::write(&opener, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&opener, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    (bin, record)
}

fn path_with(first: &Path) -> std::ffi::OsString {
    let mut dirs = vec![first.to_path_buf()];
    dirs.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    std::env::join_paths(dirs).unwrap()
}

fn token_of(sandbox: &Sandbox) -> String {
    let mut command = sandbox.vaider();
    command.arg("token");
    stdout(&run(command)).trim().to_string()
}

async fn wait_for(file: &Path) -> String {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(file) {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "{} was never written: the opener did not run",
        file.display()
    );
}

async fn login(base: &str, code: &str) -> u16 {
    reqwest::Client::new()
        .post(format!("{base}/api/login"))
        .json(&serde_json::json!({ "code": code }))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test]
async fn the_browsers_command_line_carries_a_one_time_code_never_the_token() {
    let sandbox = Sandbox::new();
    let token = token_of(&sandbox);
    let (bin, record) = fake_opener(sandbox.root.path());
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    // `vaider ui` starts the server here and opens the browser on it.
    let mut command = sandbox.vaider();
    command
        .arg("ui")
        .env("VAIDER_PORT", port.to_string())
        .env("PATH", path_with(&bin))
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    let _served = Served {
        child: command.spawn().unwrap(),
        url: String::new(),
    };
    let seen = wait_for(&record).await;
    assert!(
        !seen.contains(&token),
        "a command line holds the token:\n{seen}"
    );
    let argv = seen.lines().next().unwrap();
    let base = format!("http://127.0.0.1:{port}");
    let code = argv
        .strip_prefix(&format!("ARGV {base}/#/?code="))
        .unwrap_or_else(|| panic!("{argv}"));
    assert_eq!(code.len(), 32, "{argv}");
    assert_eq!(login(&base, code).await, 200);
    // Whoever read the command line after the browser used it gets nothing.
    assert_eq!(login(&base, code).await, 401);

    // With the server running, a second `vaider ui` proves it and opens a fresh code.
    std::fs::remove_file(&record).unwrap();
    let mut again = sandbox.vaider();
    again
        .arg("ui")
        .env("VAIDER_PORT", port.to_string())
        .env("PATH", path_with(&bin));
    let output = run(again);
    assert!(output.status.success(), "{}", stderr(&output));
    assert!(!stdout(&output).contains(&token) && !stderr(&output).contains(&token));
    let seen = wait_for(&record).await;
    assert!(!seen.contains(&token), "{seen}");
    let code = seen
        .lines()
        .next()
        .unwrap()
        .strip_prefix(&format!("ARGV {base}/#/?code="))
        .unwrap()
        .to_string();
    assert_eq!(login(&base, &code).await, 200);
}

/// A program that holds the port and answers every request as Vaider's health would; it keeps
/// what it receives.
struct Squatter {
    port: u16,
    received: Arc<Mutex<Vec<String>>>,
}

fn squat() -> Squatter {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let received = Arc::new(Mutex::new(Vec::new()));
    let kept = received.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let _ = stream.set_read_timeout(Some(Duration::from_millis(500)));
            let mut seen = vec![0u8; 16 * 1024];
            let n = stream.read(&mut seen).unwrap_or(0);
            kept.lock()
                .unwrap()
                .push(String::from_utf8_lossy(&seen[..n]).into_owned());
            let body = r#"{"status":"ok","timestamp":"2026-01-01T00:00:00Z","version":"0.1.0","code":"x"}"#;
            let _ = write!(
                stream,
                "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
        }
    });
    Squatter { port, received }
}

#[tokio::test]
async fn a_program_squatting_the_port_gets_neither_the_token_nor_a_code() {
    let sandbox = Sandbox::new();
    let token = token_of(&sandbox);
    let (bin, record) = fake_opener(sandbox.root.path());
    let squatter = squat();
    let mut command = sandbox.vaider();
    command
        .arg("ui")
        .env("VAIDER_PORT", squatter.port.to_string())
        .env("PATH", path_with(&bin));
    let output = run(command);
    let said = format!("{}{}", stdout(&output), stderr(&output));
    assert!(!output.status.success(), "{said}");
    assert!(
        said.contains(&format!(
            "port {} is held by another program (pid {})",
            squatter.port,
            std::process::id()
        )) && said.contains("not by a Vaider that holds your token; stop it or set VAIDER_PORT"),
        "{said}"
    );
    assert!(!said.contains(&token), "{said}");
    // No browser was opened on the squatter's address.
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        !record.exists(),
        "{}",
        std::fs::read_to_string(&record).unwrap()
    );

    // `vaider doctor` says the same, and also sends the squatter nothing secret.
    let mut doctor = sandbox.vaider();
    doctor
        .arg("doctor")
        .env("VAIDER_PORT", squatter.port.to_string());
    let output = run(doctor);
    assert!(
        stdout(&output).contains("is held by another program"),
        "{}",
        stdout(&output)
    );

    let received = squatter.received.lock().unwrap().join("\n----\n");
    assert!(!received.is_empty(), "the squatter was asked");
    assert!(!received.contains(&token), "{received}");
    assert!(
        !received.to_ascii_lowercase().contains("authorization"),
        "{received}"
    );
    assert!(!received.contains("login-code"), "{received}");
    for request in squatter.received.lock().unwrap().iter() {
        assert!(
            request.starts_with("GET /v1/health?challenge="),
            "{request}"
        );
    }
}
