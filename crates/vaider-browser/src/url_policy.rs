//! The one URL policy for every browser Vaider drives (QA steps, agentic browsing, web
//! capture, validation's own pages): which addresses a page may load. Plans and pages are not
//! trusted, so the rules hold for what the browser actually requests (see `guard`), not only
//! for the text of a step:
//!
//! - only `http:` and `https:` (and `about:blank`); `file:`, `view-source:`, `data:`,
//!   `javascript:`, `chrome:` and the rest are refused;
//! - link-local addresses (169.254.0.0/16, fe80::/10) and cloud metadata endpoints
//!   (`metadata.google.internal`, 100.100.100.200, fd00:ec2::254, …) are always refused, however
//!   they are spelled (decimal, octal or hex IPv4, IPv4-mapped IPv6, a trailing dot);
//! - otherwise a host must be the base URL's origin or match the allow-list (`host`,
//!   `host:port`, `*.domain`, a whole origin, or `*` for any public host: a loopback or
//!   private address must be named);
//! - loopback only when the base URL is loopback, private ranges only when the base URL is
//!   private or private networks are allowed.
//!
//! Host names are judged by name here ([`UrlPolicy::check`]) and then by what they resolve to
//! ([`UrlPolicy::check_resolved`], in `resolve`): the browser's guard uses both.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use url::{Host, Url};

mod resolve;
pub use resolve::HostRules;

/// Cloud metadata services reached by name.
const METADATA_NAMES: &[&str] = &[
    "metadata.google.internal",
    "metadata.goog",
    "metadata",
    "instance-data",
    "instance-data.ec2.internal",
    "metadata.azure.internal",
];

/// Why a URL is refused: the rule, said so the plan's author can act on it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("refused {url}: {rule}")]
pub struct Refusal {
    /// The URL as asked for (cut to a readable length).
    pub url: String,
    pub rule: String,
}

/// What a page may reach, made from the base URL and the allow-list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlPolicy {
    base: Option<Origin>,
    allowed: Vec<Allowed>,
    allow_private: bool,
    /// A page shot: the parts of the page (images, fonts, scripts) may come from any public
    /// host, while the page itself stays on its origin.
    parts_from_anywhere: bool,
    /// How names resolve before the system resolver (the browser's `--host-resolver-rules`).
    host_rules: HostRules,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct Origin {
    scheme: String,
    host: Host<String>,
    port: u16,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Allowed {
    /// `*`: any host the address rules let through.
    Any,
    /// A whole origin (`https://cdn.example.com:8443`).
    Origin(Origin),
    /// `host` or `host:port` (either scheme); `*.domain` for its subdomains.
    Host {
        host: String,
        subdomains: bool,
        port: Option<u16>,
    },
}

/// What kind of address a host is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    LinkLocalOrMetadata,
    Loopback,
    Private,
    Public,
}

impl UrlPolicy {
    /// The policy of a run whose pages live at `base_url`; `allowed` adds hosts or origins;
    /// `allow_private` lets private-network addresses through. A base URL the rules refuse is
    /// refused here.
    pub fn new(base_url: &str, allowed: &[String], allow_private: bool) -> Result<Self, Refusal> {
        let url = parse(base_url)?;
        let base = origin(&url).ok_or_else(|| {
            refusal(
                base_url,
                "a base URL must be an http:// or https:// address",
            )
        })?;
        let policy = UrlPolicy {
            base: Some(base),
            allowed: allowed.iter().filter_map(|a| parse_allowed(a)).collect(),
            allow_private,
            parts_from_anywhere: false,
            host_rules: HostRules::default(),
        };
        policy.check(base_url)?;
        Ok(policy)
    }

    /// A single page shot: the page stays on `page_url`'s origin (a redirect or a script
    /// sending it elsewhere is refused); its parts may come from any public host; never
    /// link-local or metadata addresses; loopback and private addresses as `page_url` is.
    pub fn for_page(page_url: &str) -> Result<Self, Refusal> {
        let mut policy = UrlPolicy::new(page_url, &[], false)?;
        policy.parts_from_anywhere = true;
        Ok(policy)
    }

    /// Whether the browser may load `url` as a part of a page (an image, a script, a frame).
    pub fn check_part(&self, url: &str) -> Result<(), Refusal> {
        self.check_part_with(url, self.base_class_by_name())
    }

    fn check_part_with(&self, url: &str, base_class: Class) -> Result<(), Refusal> {
        if !self.parts_from_anywhere {
            return self.check_with(url, base_class);
        }
        let wider = UrlPolicy {
            allowed: vec![Allowed::Any],
            parts_from_anywhere: false,
            ..self.clone()
        };
        wider.check_with(url, base_class)
    }

    /// Whether the browser may load `url` (as the page itself: any navigation).
    pub fn check(&self, url: &str) -> Result<(), Refusal> {
        self.check_with(url, self.base_class_by_name())
    }

    /// The base URL's kind of address, judged by its name.
    fn base_class_by_name(&self) -> Class {
        self.base
            .as_ref()
            .map_or(Class::Public, |b| classify(&b.host))
    }

    /// [`UrlPolicy::check`], the base URL being of `base_class`.
    fn check_with(&self, url: &str, base_class: Class) -> Result<(), Refusal> {
        if url == "about:blank" {
            return Ok(());
        }
        let parsed = parse(url)?;
        let Some(target) = origin(&parsed) else {
            return Err(refusal(
                url,
                &format!(
                    "only http:// and https:// pages may be opened, not {}:",
                    parsed.scheme()
                ),
            ));
        };
        let class = classify(&target.host);
        if class == Class::LinkLocalOrMetadata {
            return Err(refusal(
                url,
                "link-local and cloud metadata addresses are never opened",
            ));
        }
        let base = self.base.as_ref();
        let same_origin = base == Some(&target);
        if !same_origin && !self.allowed.iter().any(|a| a.matches(&target)) {
            return Err(refusal(
                url,
                "the host is neither the base URL's origin nor in the allow-list (the plan's allowedHosts or qa.allowed_hosts)",
            ));
        }
        self.address_rule(class, base_class)
            .map_err(|rule| refusal(url, rule))
    }

    /// The rule an address of `class` breaks, given the base URL's class.
    fn address_rule(&self, class: Class, base_class: Class) -> Result<(), &'static str> {
        match class {
            Class::LinkLocalOrMetadata => {
                Err("link-local and cloud metadata addresses are never opened")
            }
            Class::Loopback if base_class != Class::Loopback => {
                Err("loopback addresses are opened only when the base URL is loopback")
            }
            Class::Private if base_class != Class::Private && !self.allow_private => Err(
                "private-network addresses are opened only when the base URL is one or private networks are allowed (qa.allow_private_network)",
            ),
            _ => Ok(()),
        }
    }
}

fn parse(url: &str) -> Result<Url, Refusal> {
    Url::parse(url.trim()).map_err(|e| refusal(url, &format!("not a URL ({e})")))
}

fn refusal(url: &str, rule: &str) -> Refusal {
    let mut shown: String = url.chars().take(200).collect();
    if shown.len() < url.len() {
        shown.push('…');
    }
    Refusal {
        url: shown,
        rule: rule.to_string(),
    }
}

/// The origin of an http(s) URL, its host normalised (lower case, no trailing dot).
fn origin(url: &Url) -> Option<Origin> {
    if !matches!(url.scheme(), "http" | "https") {
        return None;
    }
    let host = match url.host()? {
        Host::Domain(name) => Host::Domain(name.trim_end_matches('.').to_ascii_lowercase()),
        Host::Ipv4(ip) => Host::Ipv4(ip),
        Host::Ipv6(ip) => Host::Ipv6(ip),
    };
    Some(Origin {
        scheme: url.scheme().to_string(),
        host,
        port: url.port_or_known_default()?,
    })
}

fn parse_allowed(entry: &str) -> Option<Allowed> {
    let entry = entry.trim().to_ascii_lowercase();
    if entry.is_empty() {
        return None;
    }
    if entry == "*" {
        return Some(Allowed::Any);
    }
    if entry.contains("://") {
        return Url::parse(&entry)
            .ok()
            .as_ref()
            .and_then(origin)
            .map(Allowed::Origin);
    }
    let (host, subdomains) = match entry.strip_prefix("*.") {
        Some(rest) => (rest, true),
        None => (entry.as_str(), false),
    };
    // Parsed as a URL's authority, so `host:port`, IP spellings and IDNs read as a browser would.
    let url = Url::parse(&format!("http://{host}")).ok()?;
    let host = match origin(&url)?.host {
        Host::Domain(name) => name,
        Host::Ipv4(ip) => ip.to_string(),
        Host::Ipv6(ip) => format!("[{ip}]"),
    };
    Some(Allowed::Host {
        host,
        subdomains,
        port: url.port(),
    })
}

impl Allowed {
    fn matches(&self, target: &Origin) -> bool {
        match self {
            // `*` is for public hosts: this machine and the private network must be named.
            Allowed::Any => classify(&target.host) == Class::Public,
            Allowed::Origin(origin) => origin == target,
            Allowed::Host {
                host,
                subdomains,
                port,
            } => {
                let name = match &target.host {
                    Host::Domain(name) => name.clone(),
                    Host::Ipv4(ip) => ip.to_string(),
                    Host::Ipv6(ip) => format!("[{ip}]"),
                };
                let host_matches = match subdomains {
                    true => name
                        .strip_suffix(host.as_str())
                        .is_some_and(|rest| rest.ends_with('.')),
                    false => name == *host,
                };
                host_matches && port.is_none_or(|p| p == target.port)
            }
        }
    }
}

fn classify(host: &Host<String>) -> Class {
    match host {
        Host::Domain(name) => classify_name(name),
        Host::Ipv4(ip) => classify_v4(*ip),
        Host::Ipv6(ip) => classify_v6(*ip),
    }
}

fn classify_name(name: &str) -> Class {
    if METADATA_NAMES.contains(&name) {
        return Class::LinkLocalOrMetadata;
    }
    if name == "localhost" || name.ends_with(".localhost") {
        return Class::Loopback;
    }
    // The URL parser reads every IPv4 spelling into an address, so a name here is a name.
    match name.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => classify_v4(ip),
        Ok(IpAddr::V6(ip)) => classify_v6(ip),
        Err(_) => Class::Public,
    }
}

fn classify_v4(ip: Ipv4Addr) -> Class {
    let [a, b, ..] = ip.octets();
    if ip.is_link_local() || ip == Ipv4Addr::new(100, 100, 100, 200) {
        Class::LinkLocalOrMetadata
    } else if ip.is_loopback() || ip.is_unspecified() || a == 0 {
        // Chromium sends 0.0.0.0 to this machine.
        Class::Loopback
    } else if ip.is_private() || (a == 100 && (64..128).contains(&b)) || ip.is_broadcast() {
        Class::Private
    } else {
        Class::Public
    }
}

fn classify_v6(ip: Ipv6Addr) -> Class {
    if let Some(v4) = embedded_v4(ip) {
        return classify_v4(v4);
    }
    let first = ip.segments()[0];
    if ip == Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254) {
        // AWS's metadata service over IPv6.
        Class::LinkLocalOrMetadata
    } else if first & 0xffc0 == 0xfe80 {
        Class::LinkLocalOrMetadata
    } else if ip.is_loopback() || ip.is_unspecified() {
        Class::Loopback
    } else if first & 0xfe00 == 0xfc00 || first & 0xffc0 == 0xfec0 {
        // Unique local (fc00::/7) and the old site-local (fec0::/10).
        Class::Private
    } else {
        Class::Public
    }
}

/// The IPv4 address inside an IPv4-mapped (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`)
/// or NAT64 (`64:ff9b::a.b.c.d`) IPv6 address.
fn embedded_v4(ip: Ipv6Addr) -> Option<Ipv4Addr> {
    if let Some(v4) = ip.to_ipv4_mapped() {
        return Some(v4);
    }
    let s = ip.segments();
    let tail = Ipv4Addr::new((s[6] >> 8) as u8, s[6] as u8, (s[7] >> 8) as u8, s[7] as u8);
    let compatible = s[..6] == [0; 6] && !ip.is_loopback() && !ip.is_unspecified();
    let nat64 = s[..6] == [0x64, 0xff9b, 0, 0, 0, 0];
    (compatible || nat64).then_some(tail)
}

#[cfg(test)]
mod tests;
