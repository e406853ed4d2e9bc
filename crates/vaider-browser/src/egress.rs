//! Every connection the browser's network makes goes through here and is held to the URL
//! policy before it is made. Fetch interception (`guard`, `warden`) sees HTTP requests but
//! not WebSocket handshakes, and a WebSocket must be refused before it connects, not reported
//! after (`Network.webSocketCreated` comes too late). So Chromium is told to use an in-process
//! SOCKS5 proxy on 127.0.0.1 for everything, loopback included (`--proxy-bypass-list=<-loopback>`
//! removes Chromium's implicit bypass): each tunnel's host and port is judged by the policies of
//! the tabs that are open (see `warden`'s registry), and the proxy itself connects to the
//! addresses the policy judged (no second lookup to rebind). SOCKS rather than an HTTP proxy:
//! a tunnel is one host for its whole life, where an HTTP proxy's kept-alive connection may carry
//! requests for other hosts. What a proxy cannot carry does not go: QUIC (HTTP/3 and
//! WebTransport) and WebRTC over UDP that is not proxied (see [`Egress::flags`]).
//!
//! A tunnel is judged by host and port, not by tab: with two tabs open, a connection is let
//! through when either's policy allows it (their own requests are each held to their own
//! policy by Fetch interception all the same). With no tab open nothing gets through.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::url_policy::UrlPolicy;
use crate::warden::{registry, Registry};

const SOCKS: u8 = 5;
const NO_AUTH: u8 = 0;
const CONNECT: u8 = 1;
/// SOCKS5 replies: succeeded, refused by the rules, host unreachable, command not supported.
const SUCCEEDED: u8 = 0;
const NOT_ALLOWED: u8 = 2;
const UNREACHABLE: u8 = 4;
const UNSUPPORTED: u8 = 7;

/// The running proxy; stopped when dropped.
pub(crate) struct Egress {
    port: u16,
    task: JoinHandle<()>,
}

impl Drop for Egress {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Egress {
    /// Listens on a free loopback port; judges by the policies in `policies`.
    pub async fn start(policies: Registry) -> std::io::Result<Egress> {
        let listener = TcpListener::bind(("127.0.0.1", 0)).await?;
        let port = listener.local_addr()?.port();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let policies = policies.clone();
                tokio::spawn(async move {
                    if let Err(error) = tunnel(client, &policies).await {
                        tracing::debug!(%error, "a browser connection through the policy proxy");
                    }
                });
            }
        });
        Ok(Egress { port, task })
    }

    /// Chromium's flags: every connection through the proxy, loopback too. Chromium sends no
    /// QUIC through a proxy, so HTTP/3 and WebTransport cannot go around it (`--disable-quic`
    /// alone would not stop WebTransport: checked with Chromium 156); WebRTC may use only
    /// proxied connections: no UDP of its own, no host candidates, TURN over TCP through the
    /// proxy (also set in the profile, see `launch::quiet_profile`, for a shown browser).
    pub fn flags(&self) -> Vec<String> {
        vec![
            format!("--proxy-server=socks5://127.0.0.1:{}", self.port),
            "--proxy-bypass-list=<-loopback>".to_string(),
            "--disable-quic".to_string(),
            format!("--webrtc-ip-handling-policy={WEBRTC_PROXIED_ONLY}"),
        ]
    }
}

/// WebRTC's IP handling policy: only what goes through the proxy.
pub(crate) const WEBRTC_PROXIED_ONLY: &str = "disable_non_proxied_udp";

/// One SOCKS5 connection: the greeting, the request, the verdict, then the bytes both ways.
async fn tunnel(mut client: TcpStream, policies: &Registry) -> std::io::Result<()> {
    let [version, methods] = read_array::<2>(&mut client).await?;
    let mut offered = vec![0u8; usize::from(methods)];
    client.read_exact(&mut offered).await?;
    if version != SOCKS || !offered.contains(&NO_AUTH) {
        return client.write_all(&[SOCKS, 0xff]).await;
    }
    client.write_all(&[SOCKS, NO_AUTH]).await?;
    let [_, command, _, kind] = read_array::<4>(&mut client).await?;
    let host = read_host(&mut client, kind).await?;
    let port = u16::from_be_bytes(read_array::<2>(&mut client).await?);
    if command != CONNECT || host.is_none() {
        return reply(&mut client, UNSUPPORTED).await;
    }
    let host = host.unwrap_or_default();
    let Some(addresses) = judge(&host, port, policies).await else {
        return reply(&mut client, NOT_ALLOWED).await;
    };
    let Some(mut server) = connect(&addresses, port).await else {
        return reply(&mut client, UNREACHABLE).await;
    };
    reply(&mut client, SUCCEEDED).await?;
    tokio::io::copy_bidirectional(&mut client, &mut server).await?;
    Ok(())
}

async fn read_array<const N: usize>(stream: &mut TcpStream) -> std::io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    stream.read_exact(&mut bytes).await?;
    Ok(bytes)
}

/// The host of a request: an IPv4 address (1), a name (3) or an IPv6 address (4); None for
/// anything else.
async fn read_host(stream: &mut TcpStream, kind: u8) -> std::io::Result<Option<String>> {
    Ok(match kind {
        1 => Some(IpAddr::from(read_array::<4>(stream).await?).to_string()),
        4 => Some(IpAddr::from(read_array::<16>(stream).await?).to_string()),
        3 => {
            let [length] = read_array::<1>(stream).await?;
            let mut name = vec![0u8; usize::from(length)];
            stream.read_exact(&mut name).await?;
            String::from_utf8(name).ok()
        }
        _ => None,
    })
}

async fn reply(client: &mut TcpStream, code: u8) -> std::io::Result<()> {
    client
        .write_all(&[SOCKS, code, 0, 1, 0, 0, 0, 0, 0, 0])
        .await
}

/// The addresses to connect to, when an open tab's policy allows `host:port` (over http or
/// https: a tunnel does not say which, and a WebSocket is either).
async fn judge(host: &str, port: u16, policies: &Registry) -> Option<Vec<IpAddr>> {
    let mut open: Vec<Arc<UrlPolicy>> = Vec::new();
    for held in registry(policies).values() {
        if !open.iter().any(|p| Arc::ptr_eq(p, &held.policy)) {
            open.push(held.policy.clone());
        }
    }
    for url in urls_of(host, port) {
        for policy in &open {
            if policy.check_part_resolved(&url).await.is_ok() {
                return policy.addresses(&url).await;
            }
        }
    }
    tracing::info!(host, port, "the policy proxy refused a browser connection");
    None
}

/// The URLs a tunnel to `host:port` may be for. Chromium resolves `localhost` itself and asks
/// for its address, so a loopback address is also judged as `localhost` (the policy counts
/// both as this machine).
fn urls_of(host: &str, port: u16) -> Vec<String> {
    let (host, loopback) = match host.parse::<IpAddr>() {
        Ok(IpAddr::V6(ip)) => (format!("[{ip}]"), ip.is_loopback()),
        Ok(ip) => (ip.to_string(), ip.is_loopback()),
        Err(_) => (host.to_string(), false),
    };
    let mut hosts = vec![host];
    if loopback {
        hosts.push("localhost".to_string());
    }
    hosts
        .iter()
        .flat_map(|host| ["http", "https"].map(|scheme| format!("{scheme}://{host}:{port}/")))
        .collect()
}

async fn connect(addresses: &[IpAddr], port: u16) -> Option<TcpStream> {
    for address in addresses {
        if let Ok(stream) = TcpStream::connect(SocketAddr::new(*address, port)).await {
            return Some(stream);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tunnel_is_judged_as_either_scheme_and_a_loopback_address_also_as_localhost() {
        assert_eq!(
            urls_of("shop.test", 8080),
            ["http://shop.test:8080/", "https://shop.test:8080/"]
        );
        assert_eq!(
            urls_of("::1", 81),
            [
                "http://[::1]:81/",
                "https://[::1]:81/",
                "http://localhost:81/",
                "https://localhost:81/"
            ]
        );
        assert_eq!(urls_of("10.0.0.1", 80).len(), 2);
    }
}
