//! What `vaider serve` and `vaider stdio` write to stderr when it is not a terminal (a log
//! file, a pipe, an MCP client's log of a stdio server): plain text, no colour codes.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::Stdio;

use common::*;

const ESCAPE: &str = "\x1b[";

#[test]
fn serve_logs_without_colour_codes_into_a_pipe() {
    let sandbox = Sandbox::new();
    let mut command = sandbox.vaider();
    command
        .args(["serve", "--port", "0"])
        .env_remove("NO_COLOR")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("spawn vaider serve");
    // The "no API key" warning is logged before the listening line is printed.
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    assert!(line.contains("listening on"), "{line}");
    child.kill().unwrap();
    let mut log = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    child.wait().unwrap();
    assert!(log.contains("no API key is configured"), "{log}");
    assert!(log.contains("WARN"), "{log}");
    assert!(
        !log.contains(ESCAPE),
        "colour codes in a piped log: {log:?}"
    );
}

#[test]
fn stdio_logs_without_colour_codes_into_the_clients_log() {
    let sandbox = Sandbox::new();
    let mut command = sandbox.vaider();
    command
        .arg("stdio")
        .env_remove("NO_COLOR")
        .env("VAIDER_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().expect("spawn vaider stdio");
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"logs-test","version":"0"}}}}}}"#
    )
    .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answer = String::new();
    stdout.read_line(&mut answer).unwrap();
    assert!(answer.contains("\"serverInfo\""), "{answer}");
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    // Closing stdin ends the session, as a client that quits does.
    drop(stdin);
    let mut log = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut log)
        .unwrap();
    child.wait().unwrap();
    assert!(log.contains("DEBUG") || log.contains("INFO"), "{log}");
    assert!(
        !log.contains(ESCAPE),
        "colour codes in the client's log: {log:?}"
    );
}
