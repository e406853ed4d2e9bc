//! The address rules for host names: a name that passed the name rules (the base URL's, an
//! allow-listed one, or any public one under `*`) is resolved, and every address it resolves
//! to must pass the same rules as that address written in the URL. So an allow-listed name
//! that points at a link-local or metadata address, at this machine (when the base URL is not
//! on it) or at the private network (unless allowed) is refused. Names resolve with the system
//! resolver, except those the browser is told to map (`--host-resolver-rules`, see
//! [`HostRules`]), which resolve as Chromium resolves them. A name that does not resolve is
//! refused. Chromium resolves again for itself: a name whose DNS answers differently from one
//! moment to the next (rebinding) is not caught here.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use url::Host;

use super::{classify, classify_name, origin, parse, refusal, Class, Refusal, UrlPolicy};

/// How long a name's addresses are reused before it is resolved again.
const CACHE_FOR: Duration = Duration::from_secs(60);
/// The longest a lookup may take before the name counts as not resolving.
const LOOKUP_TIMEOUT: Duration = Duration::from_secs(5);

/// Chromium's `--host-resolver-rules` (`MAP name 1.2.3.4`, `MAP *.domain addr`, `MAP *
/// ~NOTFOUND`, `EXCLUDE name`), read so that Vaider judges a name by the address the browser
/// will use.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostRules {
    /// Pattern and address, in order (None: `~NOTFOUND`, or a name we cannot follow).
    maps: Vec<(String, Option<IpAddr>)>,
    /// Names no `MAP` applies to, whatever the order (as Chromium reads them).
    excludes: Vec<String>,
}

impl HostRules {
    /// The rules of a `--host-resolver-rules` value.
    pub fn parse(value: &str) -> HostRules {
        let mut rules = HostRules::default();
        for entry in value.split(',') {
            let words: Vec<&str> = entry.split_whitespace().collect();
            match words.as_slice() {
                [verb, pattern, target] if verb.eq_ignore_ascii_case("MAP") => {
                    let address = target
                        .trim_start_matches('[')
                        .trim_end_matches(']')
                        .parse::<IpAddr>()
                        .ok();
                    rules.maps.push((pattern.to_ascii_lowercase(), address));
                }
                [verb, pattern] if verb.eq_ignore_ascii_case("EXCLUDE") => {
                    rules.excludes.push(pattern.to_ascii_lowercase());
                }
                _ => {}
            }
        }
        rules
    }

    /// The rules among Chromium flags (`--host-resolver-rules=…`).
    pub fn from_flags(flags: &[String]) -> HostRules {
        let mut all = HostRules::default();
        for flag in flags {
            if let Some(value) = flag.strip_prefix("--host-resolver-rules=") {
                let more = HostRules::parse(value);
                all.maps.extend(more.maps);
                all.excludes.extend(more.excludes);
            }
        }
        all
    }

    pub fn is_empty(&self) -> bool {
        self.maps.is_empty() && self.excludes.is_empty()
    }

    /// The first rule mapping `name`: `Some(None)` when it maps the name to nothing; None when
    /// no rule applies (the system resolver answers).
    pub(super) fn lookup(&self, name: &str) -> Option<Option<IpAddr>> {
        let (_, address) = self
            .maps
            .iter()
            .find(|(pattern, _)| matches(pattern, name))?;
        if self.excludes.iter().any(|pattern| matches(pattern, name)) {
            return None;
        }
        Some(*address)
    }
}

fn matches(pattern: &str, name: &str) -> bool {
    match pattern.strip_prefix('*') {
        Some(suffix) => name.ends_with(suffix),
        None => pattern == name,
    }
}

/// When a name was resolved, and to what.
type Resolved = HashMap<String, (Instant, Vec<IpAddr>)>;

/// Names resolved lately, shared by every browser of the process.
static CACHE: Mutex<Option<Resolved>> = Mutex::new(None);

impl UrlPolicy {
    /// [`UrlPolicy::check`], and the address rules for what a host name resolves to.
    pub async fn check_resolved(&self, url: &str) -> Result<(), Refusal> {
        let base_class = self.base_class().await;
        self.check_with(url, base_class)?;
        self.check_addresses(url, base_class).await
    }

    /// [`UrlPolicy::check_part`], and the address rules for what a host name resolves to.
    pub async fn check_part_resolved(&self, url: &str) -> Result<(), Refusal> {
        let base_class = self.base_class().await;
        self.check_part_with(url, base_class)?;
        self.check_addresses(url, base_class).await
    }

    /// Names resolve by these rules before the system resolver (the browser's own rules).
    pub fn with_host_rules(mut self, rules: HostRules) -> UrlPolicy {
        self.host_rules = rules;
        self
    }

    pub(crate) fn has_host_rules(&self) -> bool {
        !self.host_rules.is_empty()
    }

    async fn check_addresses(&self, url: &str, base_class: Class) -> Result<(), Refusal> {
        let Some(target) = parse(url).ok().as_ref().and_then(origin) else {
            return Ok(()); // about:blank, data: and blob: parts: no host to resolve
        };
        let Some(name) = resolvable(&target.host) else {
            return Ok(()); // an address, or a name judged by itself (localhost, metadata)
        };
        let addresses = self.resolve(name, target.port).await.ok_or_else(|| {
            refusal(
                url,
                &format!("the host name {name} does not resolve to an address"),
            )
        })?;
        for address in addresses {
            let rule = self.address_rule(ip_class(address), base_class);
            if let Err(rule) = rule {
                return Err(refusal(
                    url,
                    &format!("{name} resolves to {address}: {rule}"),
                ));
            }
        }
        Ok(())
    }

    /// The base URL's kind of address; a name is resolved (a base of `myapp.test` that points
    /// at this machine is a loopback base).
    async fn base_class(&self) -> Class {
        let Some(base) = &self.base else {
            return Class::Public;
        };
        let Some(name) = resolvable(&base.host) else {
            return classify(&base.host);
        };
        let addresses = self.resolve(name, base.port).await.unwrap_or_default();
        // The most trusted kind it resolves to: a base on this machine lets loopback in.
        [Class::Loopback, Class::Private]
            .into_iter()
            .find(|class| addresses.iter().any(|a| ip_class(*a) == *class))
            .unwrap_or(Class::Public)
    }

    /// The addresses `name` resolves to, by the rules and else the system resolver; None when
    /// it resolves to nothing.
    async fn resolve(&self, name: &str, port: u16) -> Option<Vec<IpAddr>> {
        if let Some(mapped) = self.host_rules.lookup(name) {
            return mapped.map(|address| vec![address]);
        }
        if let Some(addresses) = cached(name) {
            return Some(addresses);
        }
        let lookup = tokio::net::lookup_host((name, port));
        let addresses: Vec<IpAddr> = match tokio::time::timeout(LOOKUP_TIMEOUT, lookup).await {
            Ok(Ok(found)) => found.map(|a| a.ip()).collect(),
            _ => return None,
        };
        if addresses.is_empty() {
            return None;
        }
        remember(name, &addresses);
        Some(addresses)
    }
}

/// The name to resolve, when the host is a name that the name rules did not judge already.
fn resolvable(host: &Host<String>) -> Option<&str> {
    match host {
        Host::Domain(name) if classify_name(name) == Class::Public => Some(name.as_str()),
        _ => None,
    }
}

fn ip_class(address: IpAddr) -> Class {
    match address {
        IpAddr::V4(ip) => super::classify_v4(ip),
        IpAddr::V6(ip) => super::classify_v6(ip),
    }
}

fn cached(name: &str) -> Option<Vec<IpAddr>> {
    let cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let (at, addresses) = cache.as_ref()?.get(name)?;
    (at.elapsed() < CACHE_FOR).then(|| addresses.clone())
}

fn remember(name: &str, addresses: &[IpAddr]) {
    let mut cache = CACHE.lock().unwrap_or_else(|p| p.into_inner());
    let cache = cache.get_or_insert_with(HashMap::new);
    if cache.len() > 1000 {
        cache.retain(|_, (at, _)| at.elapsed() < CACHE_FOR);
        if cache.len() > 1000 {
            cache.clear();
        }
    }
    cache.insert(name.to_string(), (Instant::now(), addresses.to_vec()));
}

impl UrlPolicy {
    /// The addresses a connection to `url`'s host goes to: the address written in it, this
    /// machine's for `localhost`, else what the name resolves to (the same answer the checks
    /// judged, from the cache or the browser's rules). None when there is no host or address.
    pub(crate) async fn addresses(&self, url: &str) -> Option<Vec<IpAddr>> {
        let target = origin(&parse(url).ok()?)?;
        match &target.host {
            Host::Ipv4(ip) => Some(vec![IpAddr::V4(*ip)]),
            Host::Ipv6(ip) => Some(vec![IpAddr::V6(*ip)]),
            Host::Domain(name) => match classify_name(name) {
                Class::Loopback => Some(vec![
                    IpAddr::V4(std::net::Ipv4Addr::LOCALHOST),
                    IpAddr::V6(std::net::Ipv6Addr::LOCALHOST),
                ]),
                Class::Public => self.resolve(name, target.port).await,
                _ => None,
            },
        }
    }
}
