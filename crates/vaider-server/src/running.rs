//! "Is Vaider already running here?", answered so that nothing is handed to a program that
//! merely holds the port. A client that holds the token sends a random challenge to
//! `GET /v1/health?challenge=…` and expects `proof = HMAC-SHA256(token,
//! "vaider-proof:{port}:{nonce}")` back ([`crate::auth::proof`]), compared in constant time;
//! only then does it send the token or ask for a login code. The port is in the message, and
//! the server takes it from the socket the request came in on ([`LocalPort`]), so a squatter
//! on 3456 cannot relay the challenge to a real Vaider on 3457. Nothing secret is sent to ask.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use axum::extract::connect_info::Connected;
use axum::serve::IncomingStream;

/// The port a connection came in on, recorded by the server for each connection (see
/// [`crate::serve`]) so the health endpoint's proof names the port the client dialled.
#[derive(Debug, Clone, Copy)]
pub struct LocalPort(pub Option<u16>);

impl Connected<IncomingStream<'_, tokio::net::TcpListener>> for LocalPort {
    fn connect_info(stream: IncomingStream<'_, tokio::net::TcpListener>) -> Self {
        LocalPort(stream.io().local_addr().ok().map(|addr| addr.port()))
    }
}

/// What answers at an address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A Vaider that proved it holds the token.
    Vaider,
    /// Nothing listens there.
    Nothing,
    /// Something listens there but did not prove it holds the token: another program, or a
    /// Vaider with another token. `pid` when this user can see which process it is.
    Other { pid: Option<u32> },
}

impl Found {
    /// What to tell a person when the port is held by something else.
    pub fn held_message(addr: SocketAddr, pid: Option<u32>) -> String {
        let pid = pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
        format!(
            "port {} is held by another program{pid}, not by a Vaider that holds your token; stop it or set VAIDER_PORT",
            addr.port()
        )
    }
}

/// Who listens at `addr`, proven with `token` (which is never sent). Blocking, about a second
/// at most.
pub fn find(addr: SocketAddr, token: &str) -> Found {
    let nonce = hex::encode(rand::random::<[u8; 16]>());
    let path = format!("/v1/health?challenge={nonce}");
    let answer = match request(addr, "GET", &path, &[], None) {
        Ok(answer) => answer,
        Err(Unreachable) => return Found::Nothing,
    };
    let expected = crate::auth::proof(token, addr.port(), &nonce);
    let proof = serde_json::from_str::<serde_json::Value>(&answer.body)
        .ok()
        .and_then(|v| v["proof"].as_str().map(str::to_string))
        .unwrap_or_default();
    if answer.status == 200 && crate::auth::constant_time_eq(proof.as_bytes(), expected.as_bytes())
    {
        Found::Vaider
    } else {
        Found::Other {
            pid: listener_pid(addr.port()),
        }
    }
}

/// Asks the proven Vaider at `addr` for a one-time login code for a browser page. Call only
/// after [`find`] answered [`Found::Vaider`]: this request carries the token.
pub fn login_code(addr: SocketAddr, token: &str, login_key: &str) -> Result<String, String> {
    let bearer = format!("Bearer {token}");
    let answer = request(
        addr,
        "POST",
        "/api/login-code",
        &[
            ("Authorization", &bearer),
            ("X-Vaider-Login-Key", login_key),
        ],
        Some(""),
    )
    .map_err(|_| format!("Vaider at {addr} stopped answering"))?;
    let code = serde_json::from_str::<serde_json::Value>(&answer.body)
        .ok()
        .and_then(|v| v["code"].as_str().map(str::to_string));
    match (answer.status, code) {
        (200, Some(code)) => Ok(code),
        (status, _) => Err(format!(
            "Vaider at {addr} refused a login code ({status}); run `vaider token` and try again"
        )),
    }
}

struct Unreachable;

struct Answer {
    status: u16,
    body: String,
}

/// One HTTP/1.0 request over loopback, the answer read up to 64 KiB: enough for health and a
/// login code, with no client library and no proxy in the way.
fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: Option<&str>,
) -> Result<Answer, Unreachable> {
    let mut stream =
        TcpStream::connect_timeout(&addr, Duration::from_millis(300)).map_err(|_| Unreachable)?;
    let _ = stream.set_read_timeout(Some(Duration::from_millis(1500)));
    let _ = stream.set_write_timeout(Some(Duration::from_millis(500)));
    let mut text = format!("{method} {path} HTTP/1.0\r\nHost: {addr}\r\n");
    for (name, value) in headers {
        text.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(body) = body {
        text.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    text.push_str("\r\n");
    text.push_str(body.unwrap_or_default());
    // Connected: whatever happens next, something holds the port.
    if stream.write_all(text.as_bytes()).is_err() {
        return Ok(Answer {
            status: 0,
            body: String::new(),
        });
    }
    let mut raw = Vec::new();
    let _ = stream.take(64 * 1024).read_to_end(&mut raw);
    let raw = String::from_utf8_lossy(&raw);
    let (head, body) = raw.split_once("\r\n\r\n").unwrap_or((&raw, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    Ok(Answer {
        status,
        body: body.to_string(),
    })
}

/// The process listening on 127.0.0.1:`port`, when this user may see it (Linux: the socket's
/// inode in /proc/net/tcp, then the process holding it; another user's process stays unknown).
fn listener_pid(port: u16) -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        let inode = listening_inode(port)?;
        let wanted = format!("socket:[{inode}]");
        std::fs::read_dir("/proc")
            .ok()?
            .flatten()
            .find_map(|entry| {
                let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
                let fds = std::fs::read_dir(entry.path().join("fd")).ok()?;
                fds.flatten()
                    .any(|fd| {
                        std::fs::read_link(fd.path())
                            .is_ok_and(|target| target.to_string_lossy() == wanted)
                    })
                    .then_some(pid)
            })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = port;
        None
    }
}

#[cfg(target_os = "linux")]
fn listening_inode(port: u16) -> Option<String> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let local = format!(":{port:04X}");
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        // local_address, state 0A = LISTEN, inode.
        let (address, state, inode) = (fields.get(1)?, fields.get(3)?, fields.get(9)?);
        (address.ends_with(&local) && *state == "0A").then(|| inode.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_listening_is_nothing() {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        // The listener was dropped: nothing listens there now.
        assert_eq!(find(port, "t"), Found::Nothing);
    }

    #[test]
    fn a_squatter_that_says_ok_is_not_vaider() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let squatter = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut seen = [0u8; 2048];
            let n = stream.read(&mut seen).unwrap();
            let body = r#"{"status":"ok","proof":"00"}"#;
            let _ = write!(
                stream,
                "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
            // The listener stays open (returned) until the test has looked for its process.
            (String::from_utf8_lossy(&seen[..n]).to_string(), listener)
        });
        let found = find(addr, "vdr_secret");
        let (seen, _listener) = squatter.join().unwrap();
        assert!(!seen.contains("vdr_secret"), "{seen}");
        match found {
            Found::Other { pid } => assert_eq!(pid, Some(std::process::id())),
            other => panic!("{other:?}"),
        }
        let message = Found::held_message(addr, Some(7));
        assert!(message.contains("(pid 7)") && message.contains("VAIDER_PORT"));
    }
}
