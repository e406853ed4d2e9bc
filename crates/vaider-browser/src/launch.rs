//! Chromium's command line and profile: the flags Puppeteer and chromiumoxide start it with,
//! ours for stable pixels, the caller's, and last the ones that hold the page's network to the
//! URL policy (`egress`), so that a caller's flag cannot undo them. Also the settings of
//! chromiumoxide's connection, the same as its own launcher's.

use std::path::Path;

use chromiumoxide::handler::HandlerConfig;

/// chromiumoxide's (Puppeteer's) defaults, without those set below.
const DEFAULTS: &[&str] = &[
    "--disable-background-networking",
    "--enable-features=NetworkService,NetworkServiceInProcess",
    "--disable-background-timer-throttling",
    "--disable-backgrounding-occluded-windows",
    "--disable-breakpad",
    "--disable-client-side-phishing-detection",
    "--disable-component-extensions-with-background-pages",
    "--disable-default-apps",
    "--disable-dev-shm-usage",
    "--disable-hang-monitor",
    "--disable-ipc-flooding-protection",
    "--disable-popup-blocking",
    "--disable-prompt-on-repost",
    "--disable-renderer-backgrounding",
    "--disable-sync",
    "--metrics-recording-only",
    "--no-first-run",
    "--enable-automation",
    "--password-store=basic",
    "--use-mock-keychain",
    "--enable-blink-features=IdleDetection",
    "--lang=en_US",
    "--disable-extensions",
];

/// Ours: one pixel per pixel whatever the machine (see `Browser::page_screenshot`).
const OURS: &[&str] = &[
    "--hide-scrollbars",
    "--force-color-profile=srgb",
    "--font-render-hinting=none",
];

/// Flags a caller may not give: they would open DevTools to the machine again or let the
/// network around the policy proxy (see `devtools`, `egress`).
const REFUSED_FLAGS: &[&str] = &[
    "--remote-debugging-port",
    "--remote-debugging-address",
    "--remote-debugging-pipe",
    "--remote-allow-origins",
    "--proxy-server",
    "--proxy-bypass-list",
    "--no-proxy-server",
    "--proxy-pac-url",
    "--proxy-auto-detect",
    "--enable-quic",
    "--webrtc-ip-handling-policy",
];

/// Chromium reads only the last `--disable-features`: every list is merged into one.
const DISABLE_FEATURES: &str = "--disable-features=";

/// Every flag of Chromium but its DevTools switch: the defaults, the profile, headless or not,
/// the sandbox, ours, the caller's `flags` (but none of [`REFUSED_FLAGS`]), then `last`.
pub(crate) fn chromium_args(
    headless: bool,
    profile: &Path,
    flags: &[String],
    last: &[String],
) -> Vec<String> {
    let mut args: Vec<String> = DEFAULTS.iter().map(|f| f.to_string()).collect();
    args.push(format!("--user-data-dir={}", profile.display()));
    if headless {
        args.extend(["--headless=new", "--mute-audio"].map(String::from));
    }
    if running_as_root() {
        // Chromium refuses to start its sandbox as root; elsewhere the sandbox stays on.
        args.extend(["--no-sandbox", "--disable-setuid-sandbox"].map(String::from));
    }
    args.extend(OURS.iter().map(|f| f.to_string()));
    let mut disabled = vec!["TranslateUI".to_string()];
    let allowed = flags.iter().filter(|flag| {
        let name = flag.split('=').next().unwrap_or_default();
        let refused = REFUSED_FLAGS.contains(&name);
        if refused {
            tracing::warn!(
                flag = name,
                "a browser flag that would undo Vaider's protections was left out"
            );
        }
        !refused
    });
    for flag in allowed.chain(last) {
        match flag.strip_prefix(DISABLE_FEATURES) {
            Some(features) => disabled.push(features.to_string()),
            None => args.push(flag.clone()),
        }
    }
    args.push(format!("{DISABLE_FEATURES}{}", disabled.join(",")));
    args
}

/// chromiumoxide's connection as its launcher sets it, but no viewport of its own: the
/// viewport is set per page, explicitly, right before each shot.
#[cfg_attr(not(unix), allow(dead_code))]
pub(crate) fn handler_config() -> HandlerConfig {
    HandlerConfig {
        viewport: None,
        ..HandlerConfig::default()
    }
}

/// Turns off the profile's network prediction: Chromium would otherwise open connections to
/// hosts a page merely points at (a frame, a link) before the URL policy judges the request,
/// so a refused host would still see a connection from this machine. Downloads, which the
/// browser denies, would land in the profile (removed with it), never in the user's folder.
/// WebRTC uses only proxied connections (the flag holds in headless mode, this pref in both).
pub(crate) fn quiet_profile(dir: &Path) -> std::io::Result<()> {
    let default = dir.join("Default");
    std::fs::create_dir_all(&default)?;
    let prefs = serde_json::json!({
        "net": {"network_prediction_options": 2},
        "webrtc": {"ip_handling_policy": crate::egress::WEBRTC_PROXIED_ONLY},
        "download": {
            "default_directory": dir.join("Downloads"),
            "prompt_for_download": false
        }
    });
    std::fs::write(default.join("Preferences"), prefs.to_string())
}

#[cfg(unix)]
pub(crate) fn running_as_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(not(unix))]
pub(crate) fn running_as_root() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_disable_features_list_ends_up_in_the_one_chromium_reads() {
        let flags = ["--disable-features=A,B".to_string(), "--x".to_string()];
        let last = ["--disable-features=C".to_string()];
        let args = chromium_args(true, Path::new("/p"), &flags, &last);
        let lists: Vec<&String> = args
            .iter()
            .filter(|a| a.starts_with(DISABLE_FEATURES))
            .collect();
        assert_eq!(lists, ["--disable-features=TranslateUI,A,B,C"]);
        assert!(args.contains(&"--x".to_string()));
        assert!(args.contains(&"--user-data-dir=/p".to_string()));
    }

    #[test]
    fn a_callers_flag_cannot_reopen_devtools_or_route_around_the_proxy() {
        let flags = [
            "--remote-debugging-port=9222".to_string(),
            "--proxy-server=http://elsewhere:8080".to_string(),
            "--no-proxy-server".to_string(),
            "--host-resolver-rules=MAP * ~NOTFOUND".to_string(),
        ];
        let last = ["--proxy-server=socks5://127.0.0.1:1".to_string()];
        let args = chromium_args(true, Path::new("/p"), &flags, &last);
        assert!(!args.iter().any(|a| a.starts_with("--remote-debugging")));
        assert!(!args.iter().any(|a| a == "--no-proxy-server"));
        let proxies: Vec<&String> = args
            .iter()
            .filter(|a| a.starts_with("--proxy-server"))
            .collect();
        assert_eq!(proxies, ["--proxy-server=socks5://127.0.0.1:1"]);
        assert!(args.contains(&flags[3]));
    }
}
