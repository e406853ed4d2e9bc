//! The URL policy holds for every way a page can reach the network, not only for the requests
//! Fetch interception sees: WebSockets, WebTransport (QUIC) and WebRTC. Each test runs a
//! loopback listener the page's policy does not allow and counts what reaches it: nothing may.
//! All traffic stays on loopback; WebRTC's mDNS names are turned off so that no multicast
//! leaves the machine either.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use vaider_browser::{Browser, UrlPolicy, Viewport};
use vaider_test_support::loopback::{html, listen};

const WAIT: Duration = Duration::from_secs(20);
const NOT_FOUND: &str = "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// Serves `page` on loopback; returns its base URL.
async fn serve(page: String) -> String {
    let (port, _) = listen(move |_| html(&page)).await;
    format!("http://127.0.0.1:{port}")
}

/// A browser whose every name but the loopback address resolves to nothing, with WebRTC's
/// mDNS host names off (they would be announced by multicast).
async fn browser() -> Browser {
    let flags = [
        "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1, EXCLUDE localhost".to_string(),
        "--disable-features=WebRtcHideLocalIpsWithMdns".to_string(),
    ];
    Browser::launch_with_flags(None, true, &flags)
        .await
        .expect("Chromium starts")
}

/// Opens `base` in a tab held to `policy` and returns what the page wrote into `#done`.
async fn outcome(browser: &Browser, base: &str, policy: UrlPolicy) -> String {
    let tab = browser.open_tab(Viewport::default(), policy).await.unwrap();
    tab.open(base, WAIT).await.unwrap();
    let done = tab.text("#done", WAIT).await.unwrap();
    tab.close().await;
    done
}

/// A loopback UDP socket counting the datagrams it receives.
async fn udp_listener() -> (u16, Arc<AtomicUsize>) {
    let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let port = socket.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    tokio::spawn(async move {
        let mut buffer = vec![0u8; 65536];
        while socket.recv_from(&mut buffer).await.is_ok() {
            counted.fetch_add(1, Ordering::SeqCst);
        }
    });
    (port, count)
}

/// The page's script: `body` is an async function's body returning a string, shown in `#done`.
fn page(body: &str) -> String {
    format!(
        r#"<!doctype html><html><body><p>probe</p><script>
function within(ms, promise) {{
  return Promise.race([promise, new Promise(r => setTimeout(() => r('no answer within ' + ms + ' ms'), ms))]);
}}
(async () => {{ {body} }})().catch(e => 'failed: ' + e).then(text => {{
  const p = document.createElement('p'); p.id = 'done'; p.textContent = String(text); document.body.append(p);
}});
</script></body></html>"#
    )
}

#[tokio::test]
async fn a_websocket_reaches_only_what_the_policy_allows() {
    let (refused_port, refused_hits) = listen(|_| NOT_FOUND.to_string()).await;
    let (allowed_port, allowed_hits) = listen(|_| NOT_FOUND.to_string()).await;
    let body = format!(
        r#"
function attempt(url) {{
  return new Promise(done => {{
    let ws;
    try {{ ws = new WebSocket(url); }} catch (e) {{ done(url + ' threw ' + e); return; }}
    ws.onopen = () => {{ done(url + ' open'); ws.close(); }};
    ws.onerror = () => done(url + ' error');
    ws.onclose = () => done(url + ' closed');
  }});
}}
const tried = await Promise.all([
  attempt('ws://127.0.0.1:{refused_port}/'),
  attempt('wss://127.0.0.1:{refused_port}/'),
  attempt('ws://localhost:{refused_port}/'),
  attempt('ws://127.0.0.1:{allowed_port}/'),
]);
return tried.join('; ');"#
    );
    let base = serve(page(&body)).await;
    let policy = UrlPolicy::new(&base, &[format!("127.0.0.1:{allowed_port}")], false).unwrap();
    let browser = browser().await;
    let done = outcome(&browser, &base, policy).await;
    println!("the page saw: {done}");
    assert_eq!(
        refused_hits.load(Ordering::SeqCst),
        0,
        "a WebSocket reached a port the policy refuses ({done})"
    );
    // The allowed one still goes through (the listener answers 404, so it does not open).
    assert!(allowed_hits.load(Ordering::SeqCst) >= 1, "{done}");
    browser.close().await;
}

#[tokio::test]
async fn webtransport_reaches_no_loopback_listener() {
    let (udp_port, datagrams) = udp_listener().await;
    let body = format!(
        r#"
if (typeof WebTransport === 'undefined') return 'WebTransport is not there';
try {{
  const wt = new WebTransport('https://127.0.0.1:{udp_port}/');
  return await within(3000, wt.ready.then(() => 'ready', e => 'refused: ' + e));
}} catch (e) {{ return 'threw: ' + e; }}"#
    );
    let base = serve(page(&body)).await;
    let browser = browser().await;
    let done = outcome(&browser, &base, UrlPolicy::new(&base, &[], false).unwrap()).await;
    println!("the page saw: {done}");
    assert_eq!(
        datagrams.load(Ordering::SeqCst),
        0,
        "WebTransport sent datagrams to a loopback port ({done})"
    );
    assert_ne!(done, "ready");
    browser.close().await;
}

#[tokio::test]
async fn webrtc_gathers_no_way_out_to_loopback_listeners() {
    let (stun_port, datagrams) = udp_listener().await;
    let (peer_port, peer_datagrams) = udp_listener().await;
    let (turn_port, turn_hits) = listen(|_| NOT_FOUND.to_string()).await;
    let body = format!(
        r#"
if (typeof RTCPeerConnection === 'undefined') return 'RTCPeerConnection is not there';
const pc = new RTCPeerConnection({{iceServers: [
  {{urls: 'stun:127.0.0.1:{stun_port}'}},
  {{urls: 'turn:127.0.0.1:{turn_port}?transport=tcp', username: 'u', credential: 'p'}},
]}});
const candidates = [];
pc.onicecandidate = e => {{ if (e.candidate && e.candidate.candidate) candidates.push(e.candidate.candidate); }};
pc.createDataChannel('probe');
await pc.setLocalDescription(await pc.createOffer());
const gathered = new Promise(r => {{
  if (pc.iceGatheringState === 'complete') r('complete');
  pc.onicegatheringstatechange = () => {{ if (pc.iceGatheringState === 'complete') r('complete'); }};
}});
const gathering = await within(5000, gathered);
// A peer at a loopback port: its answer and host candidate would start connectivity checks.
const answer = pc.localDescription.sdp.replace('a=setup:actpass', 'a=setup:active');
let checks = 'no checks';
try {{
  await pc.setRemoteDescription({{type: 'answer', sdp: answer}});
  await pc.addIceCandidate({{candidate: 'candidate:1 1 udp 2130706431 127.0.0.1 {peer_port} typ host', sdpMid: '0'}});
  checks = await within(3000, new Promise(r => {{
    pc.oniceconnectionstatechange = () => {{ if (['connected', 'failed'].includes(pc.iceConnectionState)) r(pc.iceConnectionState); }};
  }}));
}} catch (e) {{ checks = 'peer refused: ' + e; }}
pc.close();
return 'gathering ' + gathering + '; checks ' + checks + '; candidates: ' + candidates.join(' | ');"#
    );
    let base = serve(page(&body)).await;
    let browser = browser().await;
    let done = outcome(&browser, &base, UrlPolicy::new(&base, &[], false).unwrap()).await;
    println!("the page saw: {done}");
    assert_eq!(
        datagrams.load(Ordering::SeqCst),
        0,
        "STUN reached loopback ({done})"
    );
    assert_eq!(
        peer_datagrams.load(Ordering::SeqCst),
        0,
        "a loopback peer was reached ({done})"
    );
    assert_eq!(
        turn_hits.load(Ordering::SeqCst),
        0,
        "TURN over TCP reached loopback ({done})"
    );
    assert!(
        !done.contains("typ host"),
        "host candidates were gathered: {done}"
    );
    browser.close().await;
}
