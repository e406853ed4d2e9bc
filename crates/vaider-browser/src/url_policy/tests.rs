//! The address rules on the policy itself: no traffic, only parsing and classifying.

use super::*;
use proptest::prelude::*;

fn local() -> UrlPolicy {
    UrlPolicy::new("http://127.0.0.1:5173", &[], false).unwrap()
}

fn refused(policy: &UrlPolicy, url: &str) -> String {
    match policy.check(url) {
        Err(refusal) => {
            assert!(refusal.to_string().contains("refused"), "{refusal}");
            refusal.rule
        }
        Ok(()) => panic!("{url} was allowed"),
    }
}

#[test]
fn only_web_pages_and_about_blank() {
    let policy = local();
    assert!(policy.check("about:blank").is_ok());
    assert!(policy.check("http://127.0.0.1:5173/cart?x=1#top").is_ok());
    for url in [
        "file:///etc/passwd",
        "FILE:///etc/passwd",
        "view-source:file:///etc/passwd",
        "view-source:http://127.0.0.1:5173/",
        "data:text/html,<h1>hi</h1>",
        "javascript:alert(1)",
        "chrome://settings",
        "about:config",
        "blob:http://127.0.0.1:5173/x",
        "ftp://127.0.0.1/",
        "ws://127.0.0.1:5173/",
        "not a url",
    ] {
        let rule = refused(&policy, url);
        assert!(
            rule.contains("http") || rule.contains("not a URL"),
            "{url}: {rule}"
        );
    }
}

#[test]
fn a_base_url_must_be_a_web_page_the_rules_allow() {
    for base in [
        "file:///home/me/app/index.html",
        "view-source:http://127.0.0.1:3000",
        "about:blank",
        "http://169.254.169.254/latest/meta-data/",
        "http://metadata.google.internal/",
        "",
    ] {
        assert!(UrlPolicy::new(base, &[], true).is_err(), "{base}");
    }
    assert!(UrlPolicy::new("https://shop.example.com", &[], false).is_ok());
    assert!(UrlPolicy::new("http://192.168.1.20:8080", &[], false).is_ok());
}

#[test]
fn link_local_and_metadata_are_refused_in_every_spelling_even_when_allowed() {
    let policy = UrlPolicy::new("http://127.0.0.1:5173", &["*".into()], true).unwrap();
    for url in [
        "http://169.254.169.254/latest/meta-data/",
        "http://169.254.0.1/",
        "http://2852039166/",          // 169.254.169.254 in decimal
        "http://0xa9fea9fe/",          // in hex
        "http://0251.0376.0251.0376/", // in octal
        "http://169.254.43518/",       // two-part form
        "http://[::ffff:169.254.169.254]/",
        "http://[::ffff:a9fe:a9fe]/",
        "http://[64:ff9b::169.254.169.254]/",
        "http://[fe80::1]/",
        "http://[FE80::abcd%25eth0]/",
        "http://[febf::1]/",
        "http://[fd00:ec2::254]/",
        "http://100.100.100.200/",
        "http://metadata.google.internal/computeMetadata/v1/",
        "http://METADATA.google.internal./",
        "http://metadata.google.internal.:80/",
        "http://metadata/",
        "https://metadata.goog/",
    ] {
        if let Ok(parsed) = Url::parse(url) {
            assert!(policy.check(url).is_err(), "{url} ({parsed}) was allowed");
            let rule = refused(&policy, url);
            assert!(rule.contains("link-local"), "{url}: {rule}");
        }
    }
}

#[test]
fn hosts_are_the_base_origin_or_the_allow_list() {
    let policy = UrlPolicy::new(
        "https://shop.example.com",
        &[
            "cdn.example.net".into(),
            "*.images.example.org".into(),
            "https://api.example.com:8443".into(),
            "auth.example.com:444".into(),
        ],
        false,
    )
    .unwrap();
    for ok in [
        "https://shop.example.com/cart",
        "https://SHOP.example.com./cart",
        "https://shop.example.com:443/",
        "https://cdn.example.net/lib.js",
        "http://cdn.example.net/lib.js",
        "https://a.images.example.org/x.png",
        "https://a.b.images.example.org/x.png",
        "https://api.example.com:8443/v1",
        "https://auth.example.com:444/login",
    ] {
        assert!(policy.check(ok).is_ok(), "{ok}: {:?}", policy.check(ok));
    }
    for foreign in [
        "http://shop.example.com/",       // another scheme: another origin
        "https://shop.example.com:8443/", // another port
        "https://evil.test/",
        "https://shop.example.com.evil.test/",
        "https://images.example.org/x.png", // `*.` is for subdomains
        "https://ximages.example.org/",
        "https://api.example.com/",
        "https://auth.example.com/",
    ] {
        let rule = refused(&policy, foreign);
        assert!(rule.contains("allow-list"), "{foreign}: {rule}");
    }
}

#[test]
fn loopback_only_with_a_loopback_base_and_private_only_when_allowed() {
    let public = UrlPolicy::new("https://shop.example.com", &["*".into()], false).unwrap();
    for url in [
        "http://127.0.0.1:3456/api/settings",
        "http://localhost:3456/",
        "http://app.localhost/",
        "http://2130706433/",
        "http://0177.0.0.1/",
        "http://0x7f.1/",
        "http://[::1]/",
        "http://[::ffff:127.0.0.1]/",
        "http://0.0.0.0:3456/",
    ] {
        refused(&public, url);
    }
    for url in [
        "http://10.0.0.1/",
        "http://172.16.5.4/",
        "http://192.168.1.1/",
        "http://100.64.0.1/",
        "http://[fd12::1]/",
        "http://[::ffff:10.1.2.3]/",
        "http://167772161/", // 10.0.0.1
    ] {
        refused(&public, url);
    }
    // Named: then the address class decides.
    let named = ["192.168.1.1".to_string(), "127.0.0.1".to_string()];
    let private_named = UrlPolicy::new("https://shop.example.com", &named, false).unwrap();
    let rule = refused(&private_named, "http://192.168.1.1/");
    assert!(rule.contains("private"), "{rule}");
    let rule = refused(&private_named, "http://127.0.0.1/");
    assert!(rule.contains("loopback"), "{rule}");
    let private_ok = UrlPolicy::new("https://shop.example.com", &named, true).unwrap();
    assert!(private_ok.check("http://192.168.1.1/").is_ok());
    assert!(private_ok.check("http://127.0.0.1/").is_err());
    // `*` never stands for an address of this machine or the private network.
    let any_private = UrlPolicy::new("https://shop.example.com", &["*".into()], true).unwrap();
    assert!(any_private.check("http://192.168.1.1/").is_err());

    // A loopback base: its own origin; other loopback ports only when allowed.
    let local = local();
    assert!(local.check("http://localhost:5173/").is_err());
    let with_api =
        UrlPolicy::new("http://127.0.0.1:5173", &["127.0.0.1:8000".into()], false).unwrap();
    assert!(with_api.check("http://127.0.0.1:8000/api").is_ok());
    assert!(with_api
        .check("http://127.0.0.1:3456/api/settings")
        .is_err());
}

#[test]
fn a_page_shot_reaches_public_hosts_but_not_metadata_or_the_machine() {
    let policy = UrlPolicy::for_page("https://example.com/").unwrap();
    assert!(policy
        .check_part("https://fonts.example.net/a.woff2")
        .is_ok());
    // The page itself stays on its origin.
    assert!(policy.check("https://fonts.example.net/").is_err());
    assert!(policy.check("https://example.com/next").is_ok());
    for url in [
        "http://169.254.169.254/",
        "http://127.0.0.1:3456/",
        "file:///etc/passwd",
    ] {
        assert!(policy.check_part(url).is_err(), "{url}");
    }
    let local = UrlPolicy::for_page("http://127.0.0.1:4000/").unwrap();
    assert!(local.check("http://127.0.0.1:4000/app.js").is_ok());
    assert!(local
        .check_part("http://127.0.0.1:3456/api/settings")
        .is_err());
    // A plan's policy holds its parts to the same rule as its pages.
    assert!(local_plan_parts_follow_the_rules());
    assert!(UrlPolicy::for_page("file:///etc/passwd").is_err());
}

fn local_plan_parts_follow_the_rules() -> bool {
    local().check_part("https://cdn.example.net/x.js").is_err()
}

#[test]
fn refusals_name_the_url_and_the_rule() {
    let refusal = local().check("file:///etc/passwd").unwrap_err();
    let text = refusal.to_string();
    assert!(
        text.contains("file:///etc/passwd") && text.contains("http"),
        "{text}"
    );
    let long = format!("https://evil.test/{}", "a".repeat(1000));
    assert!(local().check(&long).unwrap_err().url.chars().count() <= 201);
}

proptest! {
    /// Every spelling the URL parser accepts of a link-local IPv4 address is refused.
    #[test]
    fn any_link_local_v4_is_refused(c in any::<u8>(), d in any::<u8>(), form in 0usize..4) {
        let ip = Ipv4Addr::new(169, 254, c, d);
        let n = u32::from(ip);
        let host = match form {
            0 => ip.to_string(),
            1 => n.to_string(),
            2 => format!("0x{n:x}"),
            _ => format!("[::ffff:{ip}]"),
        };
        let policy = UrlPolicy::new("http://127.0.0.1:5173", &["*".into()], true).unwrap();
        let url = format!("http://{host}/");
        prop_assert!(policy.check(&url).is_err(), "{}", url);
    }

    /// Only the base origin passes an empty allow-list, whatever the host and port.
    #[test]
    fn without_an_allow_list_only_the_base_origin_passes(
        host in "[a-z]{1,8}\\.(test|example|com)", port in 1u16..u16::MAX
    ) {
        let policy = UrlPolicy::new("http://127.0.0.1:5173", &[], false).unwrap();
        let url = format!("http://{host}:{port}/");
        prop_assert!(policy.check(&url).is_err());
        let v4 = format!("http://127.0.0.1:{port}/");
        prop_assert_eq!(policy.check(&v4).is_ok(), port == 5173);
    }

    /// Any text at all: a verdict, never a panic.
    #[test]
    fn any_text_gets_a_verdict(url in ".{0,80}") {
        let _ = local().check(&url);
        let _ = UrlPolicy::new(&url, std::slice::from_ref(&url), true);
    }
}

/// Names resolved by rules, as Chromium's `--host-resolver-rules` would: no lookup leaves the
/// machine (`MAP * ~NOTFOUND` for every other name).
fn mapped(base: &str, allowed: &[&str], allow_private: bool) -> UrlPolicy {
    let rules = HostRules::parse(
        "MAP app.test 203.0.113.7, MAP sneaky.test 127.0.0.1, MAP v6.test [::1], \
         MAP meta.test 169.254.169.254, MAP lan.test 10.0.0.5, MAP local-app.test 127.0.0.1, \
         EXCLUDE other.test, MAP * ~NOTFOUND",
    );
    let allowed: Vec<String> = allowed.iter().map(|a| a.to_string()).collect();
    UrlPolicy::new(base, &allowed, allow_private)
        .unwrap()
        .with_host_rules(rules)
}

#[tokio::test]
async fn allow_listed_names_are_judged_by_the_addresses_they_resolve_to() {
    let names = [
        "sneaky.test",
        "v6.test",
        "meta.test",
        "lan.test",
        "gone.test",
    ];
    let policy = mapped("http://app.test", &names, false);
    assert!(policy.check_resolved("http://app.test/cart").await.is_ok());
    for (host, address, rule) in [
        ("sneaky.test", "127.0.0.1", "loopback"),
        ("v6.test", "::1", "loopback"),
        ("meta.test", "169.254.169.254", "link-local"),
        ("lan.test", "10.0.0.5", "private"),
    ] {
        let url = format!("http://{host}/x");
        // By name alone it passes: it is on the allow-list.
        assert!(policy.check(&url).is_ok(), "{url}");
        let refusal = policy.check_resolved(&url).await.unwrap_err();
        let said = refusal.to_string();
        assert!(
            said.contains(host) && said.contains(address) && said.contains(rule),
            "{said}"
        );
        assert!(policy.check_part_resolved(&url).await.is_err(), "{url}");
    }
    let gone = policy
        .check_resolved("http://gone.test/")
        .await
        .unwrap_err();
    assert!(gone.rule.contains("does not resolve"), "{gone}");

    // Private networks when allowed; link-local never.
    let private = mapped("http://app.test", &["lan.test", "meta.test"], true);
    assert!(private.check_resolved("http://lan.test/").await.is_ok());
    assert!(private.check_resolved("http://meta.test/").await.is_err());
}

#[tokio::test]
async fn a_base_name_on_this_machine_lets_this_machine_in() {
    let policy = mapped(
        "http://local-app.test:3000",
        &["sneaky.test", "localhost"],
        false,
    );
    assert!(policy
        .check_resolved("http://local-app.test:3000/")
        .await
        .is_ok());
    assert!(policy.check_resolved("http://sneaky.test/").await.is_ok());
    assert!(policy
        .check_resolved("http://localhost:8080/")
        .await
        .is_ok());
    assert!(policy.check_resolved("http://meta.test/").await.is_err());
}

#[tokio::test]
async fn a_page_shots_parts_are_judged_by_their_addresses_too() {
    let rules =
        HostRules::parse("MAP app.test 203.0.113.7, MAP sneaky.test 127.0.0.1, MAP * ~NOTFOUND");
    let policy = UrlPolicy::for_page("http://app.test/")
        .unwrap()
        .with_host_rules(rules);
    assert!(policy
        .check_part_resolved("http://app.test/a.png")
        .await
        .is_ok());
    // `*` stands for public hosts: a public-looking name on this machine is refused.
    let refusal = policy
        .check_part_resolved("http://sneaky.test/a.png")
        .await
        .unwrap_err();
    assert!(refusal.rule.contains("127.0.0.1"), "{refusal}");
}

#[test]
fn host_rules_read_chromiums_map_entries() {
    let flags = vec![
        "--hide-scrollbars".to_string(),
        "--host-resolver-rules=MAP a.test 127.0.0.1, MAP *.b.test [::1],EXCLUDE c.test, MAP * ~NOTFOUND"
            .to_string(),
    ];
    let rules = HostRules::from_flags(&flags);
    assert_eq!(
        rules.lookup("a.test"),
        Some(Some("127.0.0.1".parse().unwrap()))
    );
    assert_eq!(rules.lookup("x.b.test"), Some(Some("::1".parse().unwrap())));
    assert_eq!(
        rules.lookup("c.test"),
        None,
        "excluded: the system resolver answers"
    );
    assert_eq!(rules.lookup("d.test"), Some(None));
    assert!(HostRules::from_flags(&flags[..1]).is_empty());
}
