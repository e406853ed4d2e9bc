//! Chromium's DevTools must not be open to another local user. While a tab is live, a process
//! running as a second user (`vaider-probe`, created if missing) is given every TCP port that
//! Vaider's Chromium processes (and the test process itself, where the bridge would live)
//! listen on, and tries each as DevTools: `/json/version`, then the browser's WebSocket with a
//! `Browser.getVersion` command. It must find nothing it can drive. Needs root (to create the
//! user and to read the browser's sockets); otherwise the test says why and skips. Linux only,
//! as it reads /proc (the pipes are used on every Unix; Windows keeps the port, see SECURITY.md).

#![cfg(target_os = "linux")]

mod common;

use std::collections::HashSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::serve;
use vaider_browser::{Browser, Viewport};

const PROBE_USER: &str = "vaider-probe";
const WAIT: Duration = Duration::from_secs(10);

/// The second user's probe: for each port, DevTools' discovery page, then its WebSocket.
const PROBE: &str = r#"
import base64, json, os, socket, sys

def connect(port):
    for host in ("127.0.0.1", "::1"):
        try:
            return socket.create_connection((host, port), timeout=5)
        except OSError:
            pass
    return None

def read_until(s, data, done):
    while not done(data):
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return data

def complete(data):
    head, _, body = data.partition(b"\r\n\r\n")
    if not _:
        return False
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return len(body) >= int(value.strip())
    return False

def get(port, path):
    s = connect(port)
    if s is None:
        return ""
    data = b""
    try:
        s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nConnection: close\r\n\r\n" % (path, port)).encode())
        data = read_until(s, b"", complete)
    except OSError:
        pass
    finally:
        s.close()
    return data.decode("latin-1")

def drive(port, path):
    s = connect(port)
    if s is None:
        return False
    try:
        key = base64.b64encode(os.urandom(16)).decode()
        s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                   "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, port, key)).encode())
        head = read_until(s, b"", lambda d: b"\r\n\r\n" in d)
        if b" 101 " not in head.split(b"\r\n")[0]:
            return False
        payload = json.dumps({"id": 1, "method": "Browser.getVersion"}).encode()
        mask = os.urandom(4)
        frame = bytes([0x81, 0x80 | len(payload)]) + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        s.sendall(frame)
        rest = head.split(b"\r\n\r\n", 1)[1]
        return b"protocolVersion" in read_until(s, rest, lambda d: b"protocolVersion" in d)
    except OSError:
        return False
    finally:
        s.close()

for port in map(int, sys.argv[1:]):
    version = get(port, "/json/version")
    print("port %d answers /json/version with: %r" % (port, version[:200]))
    if "webSocketDebuggerUrl" in version:
        print("DEVTOOLS FOUND on port %d" % port)
        url = json.loads(version.split("\r\n\r\n", 1)[1])["webSocketDebuggerUrl"]
        if drive(port, "/" + url.split("/", 3)[3]):
            print("DEVTOOLS DRIVEN on port %d" % port)
"#;

#[tokio::test]
async fn another_local_user_finds_no_devtools_endpoint_while_a_tab_is_live() {
    if !is_root() {
        println!("SKIPPED: only root can create the second user ({PROBE_USER}) and read the browser's sockets");
        return;
    }
    ensure_probe_user();
    let base = serve("<!doctype html><h1>Live</h1>").await;
    let base_port: u16 = base.rsplit(':').next().unwrap().parse().unwrap();
    let browser = Browser::launch().await.expect("Chromium starts");
    let tab = browser
        .open_tab(Viewport::default(), common::policy(&base))
        .await
        .unwrap();
    tab.open(&base, WAIT).await.unwrap();
    assert_eq!(tab.text("h1", WAIT).await.unwrap(), "Live");

    let own = std::process::id();
    let browser_pids = descendants(own);
    assert!(
        !browser_pids.is_empty(),
        "the browser's processes were not found"
    );
    // Chromium itself listens on no TCP port at all (its DevTools are on pipes).
    assert_eq!(
        listening_ports(&browser_pids),
        Vec::<u16>::new(),
        "the browser's processes listen on TCP"
    );
    let mut pids = browser_pids.clone();
    pids.insert(own);
    let ports: Vec<u16> = listening_ports(&pids)
        .into_iter()
        .filter(|port| *port != base_port)
        .collect();
    println!("ports the browser and this process listen on: {ports:?}");

    let probe = Command::new("runuser")
        .args(["-u", PROBE_USER, "--", "/usr/bin/python3", "-c", PROBE])
        .args(ports.iter().map(u16::to_string))
        .output()
        .expect("runuser runs the probe");
    let report = String::from_utf8_lossy(&probe.stdout);
    println!("{report}{}", String::from_utf8_lossy(&probe.stderr));
    assert!(probe.status.success(), "the probe failed to run");
    assert!(
        !report.contains("DEVTOOLS"),
        "another local user reached DevTools:\n{report}"
    );
    tab.close().await;
    browser.close().await;
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|out| String::from_utf8_lossy(&out.stdout).trim() == "0")
}

/// Creates the probe user unless it exists (another test process may be creating it too).
fn ensure_probe_user() {
    let exists = || {
        Command::new("id")
            .arg(PROBE_USER)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !exists() {
        let _ = Command::new("useradd")
            .args([
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                PROBE_USER,
            ])
            .status();
    }
    assert!(exists(), "could not create the user {PROBE_USER}");
}

/// Every process whose chain of parents leads to `root`.
fn descendants(root: u32) -> HashSet<u32> {
    let parents: Vec<(u32, u32)> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| Some((pid, parent_of(pid)?)))
        .collect();
    let mut found = HashSet::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for (pid, _) in parents.iter().filter(|(_, p)| *p == parent) {
            if found.insert(*pid) {
                frontier.push(*pid);
            }
        }
    }
    found
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces: the fields follow the last `)`.
    let after = &stat[stat.rfind(')')? + 1..];
    after.split_whitespace().nth(1)?.parse().ok()
}

/// The TCP ports in LISTEN state whose sockets one of `pids` holds.
fn listening_ports(pids: &HashSet<u32>) -> Vec<u16> {
    let inodes: HashSet<String> = pids
        .iter()
        .filter_map(|pid| std::fs::read_dir(format!("/proc/{pid}/fd")).ok())
        .flat_map(|fds| fds.flatten())
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter_map(|link| socket_inode(&link))
        .collect();
    let mut ports = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let text = std::fs::read_to_string(table).unwrap_or_default();
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            if *state != "0A" || !inodes.contains(*inode) {
                continue;
            }
            if let Some(port) = local
                .rsplit(':')
                .next()
                .and_then(|p| u16::from_str_radix(p, 16).ok())
            {
                ports.push(port);
            }
        }
    }
    ports.sort_unstable();
    ports.dedup();
    ports
}

fn socket_inode(link: &Path) -> Option<String> {
    let text = link.to_str()?;
    Some(
        text.strip_prefix("socket:[")?
            .strip_suffix(']')?
            .to_string(),
    )
}
