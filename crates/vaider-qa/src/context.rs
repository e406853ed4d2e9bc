//! What the model is told about the code base when it writes a plan: chosen, not dumped. The
//! README, then the files that name the app's routes and pages, then its components, and a list
//! of the test ids, labels and placeholders the markup has (what good selectors are made of),
//! until the token budget is spent. The budget and the files used are kept in the plan.
//!
//! The code base is a local folder, or a GitHub repository or pull request read through
//! GitHub's API (a pull request's changed files come first).

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{ErrorCode, QaError};

/// The default budget: enough for a README and a few pages, small beside the screenshot.
pub const DEFAULT_BUDGET_TOKENS: usize = 6_000;
/// No single file may take more than this share of the budget (in characters: tokens x 4).
const MAX_FILE_CHARS: usize = 6_000;
/// Files looked at in a local folder, at most (a monorepo is not read whole).
const MAX_FILES_SEEN: usize = 5_000;
/// Files read, at most: only those that could go in are read, and only this many of them.
const MAX_FILES_READ: usize = 300;
/// Bytes read of one file, at most: what goes in is cut far shorter ([`MAX_FILE_CHARS`]), but
/// a selector list is made from the markup, so a little more is read than kept.
const MAX_FILE_BYTES: u64 = 64 * 1024;
/// Bytes read from a folder or from GitHub for one plan, at most.
const MAX_TOTAL_BYTES: u64 = 4 * 1024 * 1024;
/// Bytes of one GitHub answer (a file, a tree listing), at most.
const MAX_GITHUB_BYTES: usize = 8 * 1024 * 1024;
const SKIPPED_DIRS: &[&str] = &[
    ".git",
    "node_modules",
    "target",
    "dist",
    "build",
    ".next",
    ".nuxt",
    ".svelte-kit",
    ".qa-agent",
    ".screenshots",
    "coverage",
    "vendor",
    ".venv",
    "venv",
    "__pycache__",
    ".tools",
    "test-results",
    "playwright-report",
    ".cache",
];
const SOURCE_EXTENSIONS: &[&str] = &[
    "html", "htm", "jsx", "tsx", "js", "ts", "mjs", "vue", "svelte", "astro", "erb", "jinja", "j2",
    "hbs", "ejs", "php", "py", "rb",
];

/// The context chosen, as the plan records it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PlanContext {
    /// The folder or URL it came from.
    pub source: String,
    pub budget_tokens: usize,
    /// About 4 characters a token.
    pub used_tokens: usize,
    /// What went in, in order.
    pub files: Vec<String>,
    #[serde(skip)]
    pub text: String,
}

/// One file that could go in, with how much it matters.
struct Candidate {
    name: String,
    rank: u8,
    text: String,
}

/// Context from a local folder, read on a blocking thread (never on the async workers).
pub async fn from_folder_async(root: &Path, budget_tokens: usize) -> Result<PlanContext, QaError> {
    let root = root.to_path_buf();
    tokio::task::spawn_blocking(move || from_folder(&root, budget_tokens))
        .await
        .map_err(|e| {
            QaError::new(
                ErrorCode::ExecutionFailed,
                format!("reading the code base stopped: {e}"),
            )
        })?
}

/// Context from a local folder. Blocking: at most [`MAX_FILES_READ`] files, each at most
/// [`MAX_FILE_BYTES`], [`MAX_TOTAL_BYTES`] in all.
pub fn from_folder(root: &Path, budget_tokens: usize) -> Result<PlanContext, QaError> {
    if !root.is_dir() {
        return Err(QaError::invalid(format!(
            "{} is not a folder: give repoUrl as a local folder or a GitHub URL such as https://github.com/owner/repo",
            root.display()
        )));
    }
    let mut files = Vec::new();
    walk(root, &mut files);
    let mut ranked: Vec<(u8, String, PathBuf)> = files
        .into_iter()
        .filter_map(|path| {
            let name = path.strip_prefix(root).ok()?.display().to_string();
            Some((rank(&name)?, name, path))
        })
        .collect();
    // The files that matter most are read first, while the caps last.
    ranked.sort_by(|a, b| (a.0, &a.1).cmp(&(b.0, &b.1)));
    let mut left = MAX_TOTAL_BYTES;
    let mut candidates = Vec::new();
    for (rank, name, path) in ranked.into_iter().take(MAX_FILES_READ) {
        if left == 0 {
            break;
        }
        let Some(text) = read_capped(&path, MAX_FILE_BYTES.min(left)) else {
            continue;
        };
        left = left.saturating_sub(text.len() as u64);
        candidates.push(Candidate { name, rank, text });
    }
    Ok(choose(
        root.display().to_string(),
        candidates,
        budget_tokens,
    ))
}

/// The first `max` bytes of a text file (cut at a character boundary); None if unreadable.
fn read_capped(path: &Path, max: u64) -> Option<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(max)
        .read_to_end(&mut bytes)
        .ok()?;
    match String::from_utf8(bytes) {
        Ok(text) => Some(text),
        // Cut inside a character: keep what is whole.
        Err(e) if e.utf8_error().error_len().is_none() => {
            let valid = e.utf8_error().valid_up_to();
            let mut bytes = e.into_bytes();
            bytes.truncate(valid);
            String::from_utf8(bytes).ok()
        }
        Err(_) => None,
    }
}

/// Every file under `dir`, skipping dependency and build folders and hidden ones.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        if out.len() >= MAX_FILES_SEEN {
            return;
        }
        let name = entry.file_name().to_string_lossy().to_string();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() && !SKIPPED_DIRS.contains(&name.as_str()) && !name.starts_with('.') {
            walk(&entry.path(), out);
        } else if kind.is_file() {
            out.push(entry.path());
        }
    }
}

/// Files that may hold secrets: never read into a prompt, which the history keeps.
fn sensitive(relative: &str) -> bool {
    let lower = relative.to_lowercase();
    let file = lower.rsplit('/').next().unwrap_or(&lower);
    file.starts_with(".env")
        || [
            "secret",
            "credential",
            "password",
            "token",
            "private",
            "settings.py",
        ]
        .iter()
        .any(|word| file.contains(word))
        || [".pem", ".key", ".p12", ".pfx"]
            .iter()
            .any(|ext| file.ends_with(ext))
}

/// How much a file matters for writing tests of the UI (0 first), or None: not at all.
fn rank(relative: &str) -> Option<u8> {
    if sensitive(relative) {
        return None;
    }
    let lower = relative.to_lowercase();
    let file = lower.rsplit('/').next().unwrap_or(&lower);
    if file.starts_with("readme") && !lower.contains('/') {
        return Some(0);
    }
    let extension = file.rsplit_once('.').map(|(_, e)| e).unwrap_or("");
    if !SOURCE_EXTENSIONS.contains(&extension) || file.contains(".min.") || lower.contains("test") {
        return None;
    }
    let routes = ["route", "router", "pages/", "app/", "views/", "screens/"];
    if routes.iter().any(|r| lower.contains(r)) || extension.starts_with("htm") {
        return Some(1);
    }
    if lower.contains("component") {
        return Some(2);
    }
    Some(3)
}

/// The README, routes, pages and components in rank order until the budget is spent, then the
/// selectors found in every file.
fn choose(source: String, mut candidates: Vec<Candidate>, budget_tokens: usize) -> PlanContext {
    candidates.sort_by(|a, b| (a.rank, &a.name).cmp(&(b.rank, &b.name)));
    let budget_chars = budget_tokens * 4;
    let selectors = selector_list(&candidates, budget_chars / 4);
    let mut text = String::new();
    let mut files = Vec::new();
    for candidate in candidates.iter().filter(|c| c.rank < 3) {
        let room = budget_chars.saturating_sub(text.len() + selectors.len());
        if room < 200 {
            break;
        }
        let body = cut(&candidate.text, room.min(MAX_FILE_CHARS) - 40);
        text.push_str(&format!("--- {} ---\n{body}\n", candidate.name));
        files.push(candidate.name.clone());
    }
    if !selectors.is_empty() {
        text.push_str(&selectors);
        files.push("(selectors found in the markup)".into());
    }
    PlanContext {
        source,
        budget_tokens,
        used_tokens: text.len().div_ceil(4),
        files,
        text,
    }
}

/// The test ids, ids, labels, names and placeholders in the markup: what selectors are made of.
fn selector_list(candidates: &[Candidate], max_chars: usize) -> String {
    let pattern = regex::Regex::new(
        r#"(data-testid|data-test|id|aria-label|name|placeholder|for)\s*=\s*["']([^"'{}<>]{1,60})["']"#,
    )
    .expect("a fixed pattern");
    let mut found: Vec<String> = Vec::new();
    for candidate in candidates {
        for capture in pattern.captures_iter(&candidate.text) {
            let item = format!("{}=\"{}\"", &capture[1], &capture[2]);
            if !found.contains(&item) {
                found.push(item);
            }
        }
    }
    if found.is_empty() {
        return String::new();
    }
    let mut list = "--- selectors in the markup ---\n".to_string();
    for item in found {
        if list.len() + item.len() + 1 > max_chars {
            break;
        }
        list.push_str(&item);
        list.push('\n');
    }
    list
}

/// The start of `text`, at most `max` bytes, cut at a character boundary and marked.
fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}\n[cut]", &text[..end])
}

/// A GitHub repository or pull request named by a URL.
#[derive(Debug, Clone, PartialEq)]
pub struct GitHubTarget {
    pub owner: String,
    pub repo: String,
    pub pull: Option<u64>,
}

/// `https://github.com/owner/repo`, `…/tree/branch`, `…/pull/N`, or None for anything else.
pub fn github_target(url: &str) -> Option<GitHubTarget> {
    let rest = url
        .trim()
        .strip_prefix("https://github.com/")
        .or_else(|| url.trim().strip_prefix("http://github.com/"))
        .or_else(|| url.trim().strip_prefix("github.com/"))?;
    let parts: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
    let (owner, repo) = (*parts.first()?, parts.get(1)?.trim_end_matches(".git"));
    if owner.is_empty() || repo.is_empty() {
        return None;
    }
    let pull = match parts.get(2) {
        Some(&"pull") => Some(parts.get(3)?.parse().ok()?),
        _ => None,
    };
    Some(GitHubTarget {
        owner: owner.to_string(),
        repo: repo.to_string(),
        pull,
    })
}

/// Context from GitHub's API at `api` (https://api.github.com). `GITHUB_TOKEN`, when set, is
/// sent for private repositories and a higher rate limit; it never reaches a log or an error.
pub async fn from_github(
    target: &GitHubTarget,
    url: &str,
    api: &str,
    budget_tokens: usize,
) -> Result<PlanContext, QaError> {
    let client = GitHub::new(api);
    let base = format!("/repos/{}/{}", target.owner, target.repo);
    let failed = |e: Failure| github_error(e, url);
    let mut candidates = Vec::new();
    if let Ok(readme) = client.raw(&format!("{base}/readme")).await {
        candidates.push(Candidate {
            name: "README.md".into(),
            rank: 0,
            text: readme,
        });
    }
    let paths = github_paths(&client, &base, target.pull)
        .await
        .map_err(failed)?;
    for (rank, path) in paths.into_iter().filter(|(r, _)| *r < 3).take(12) {
        if let Ok(text) = client.raw(&format!("{base}/contents/{path}")).await {
            candidates.push(Candidate {
                name: path,
                rank,
                text,
            });
        }
    }
    Ok(choose(url.to_string(), candidates, budget_tokens))
}

/// What a refusal or an unreachable GitHub means for the agent, and what to do.
fn github_error(e: Failure, url: &str) -> QaError {
    match e {
        Failure::Refused(status) => QaError::invalid(format!(
            "GitHub has no repository {url} that this machine may read (HTTP {status}): check the URL, or set GITHUB_TOKEN for a private repository"
        )),
        Failure::Unreachable(e) => QaError::new(
            ErrorCode::ExecutionFailed,
            format!("cannot read {url} through GitHub's API: {e}. Is this machine online? Without a network, pass the repository's local folder as repoUrl"),
        ),
    }
}

/// The repository's files worth reading, ranked: a pull request's files first (rank 0,
/// whatever they are), then pages and components; a file listed twice keeps its first place.
async fn github_paths(
    client: &GitHub,
    base: &str,
    pull: Option<u64>,
) -> Result<Vec<(u8, String)>, Failure> {
    let mut paths: Vec<(u8, String)> = match pull {
        Some(number) => client
            .json(&format!("{base}/pulls/{number}/files?per_page=100"))
            .await?
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|f| f["filename"].as_str())
            .filter(|name| !sensitive(name))
            .map(|name| (0, name.to_string()))
            .collect(),
        None => Vec::new(),
    };
    let tree = client
        .json(&format!("{base}/git/trees/HEAD?recursive=1"))
        .await?;
    paths.extend(
        tree["tree"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| e["type"] == "blob")
            .filter_map(|e| e["path"].as_str())
            .filter_map(|p| Some((rank(p)?, p.to_string()))),
    );
    paths.sort();
    let mut seen = std::collections::HashSet::new();
    paths.retain(|(_, path)| seen.insert(path.clone()));
    Ok(paths)
}

/// Why GitHub did not answer: it refused (a status: not found, private, rate-limited) or
/// could not be reached.
enum Failure {
    Refused(u16),
    Unreachable(String),
}

/// A small GitHub API client: JSON and raw file contents, each with a time limit.
struct GitHub {
    api: String,
    client: reqwest::Client,
}

impl GitHub {
    fn new(api: &str) -> GitHub {
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(15))
            .user_agent(concat!("vaider/", env!("CARGO_PKG_VERSION")))
            .build()
            .unwrap_or_default();
        GitHub {
            api: api.trim_end_matches('/').to_string(),
            client,
        }
    }

    async fn get(&self, path: &str, accept: &str) -> Result<reqwest::Response, Failure> {
        let mut request = self
            .client
            .get(format!("{}{path}", self.api))
            .header("accept", accept);
        if let Ok(token) = std::env::var("GITHUB_TOKEN") {
            request = request.bearer_auth(token.trim());
        }
        // reqwest's message names the URL, never the header.
        let unreachable = |e: reqwest::Error| Failure::Unreachable(e.without_url().to_string());
        let response = request.send().await.map_err(unreachable)?;
        match response.status() {
            s if s.is_success() => Ok(response),
            s => Err(Failure::Refused(s.as_u16())),
        }
    }

    async fn json(&self, path: &str) -> Result<Value, Failure> {
        let response = self.get(path, "application/vnd.github+json").await?;
        // An issue, its comments or a listing past the limit is an error, not a cut JSON.
        let bytes = vaider_core::body::read_capped(response, MAX_GITHUB_BYTES)
            .await
            .map_err(broke_off)?;
        serde_json::from_slice(&bytes)
            .map_err(|e| Failure::Unreachable(format!("GitHub's answer is not JSON: {e}")))
    }

    /// A file's contents, its first [`MAX_FILE_BYTES`] only.
    async fn raw(&self, path: &str) -> Result<String, Failure> {
        let response = self.get(path, "application/vnd.github.raw").await?;
        let bytes = vaider_core::body::read_prefix(response, MAX_FILE_BYTES as usize)
            .await
            .map_err(broke_off)?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}

fn broke_off(e: vaider_core::body::BodyError) -> Failure {
    Failure::Unreachable(e.describe("GitHub", "answer"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_file_is_read_only_up_to_its_cap() {
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("index.html");
        // 2 MB of markup, a multi-byte character across the cut.
        let mut text = "é".repeat(MAX_FILE_BYTES as usize / 2 - 1);
        text.push_str("xé");
        text.push_str(&"<p>".repeat(700_000));
        std::fs::write(&page, &text).unwrap();
        let read = read_capped(&page, MAX_FILE_BYTES).unwrap();
        assert!(read.len() as u64 <= MAX_FILE_BYTES);
        assert!(read.len() as u64 >= MAX_FILE_BYTES - 4);
        let context = from_folder(dir.path(), DEFAULT_BUDGET_TOKENS).unwrap();
        assert_eq!(context.files, ["index.html"]);
        assert!(context.text.len() < 2 * MAX_FILE_CHARS + 1_000);
    }

    #[test]
    fn at_most_the_cap_of_files_is_read() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..MAX_FILES_READ + 50 {
            std::fs::write(dir.path().join(format!("page{i:04}.html")), "<p>x</p>").unwrap();
        }
        // A budget that would take every file: only the cap stops the reading.
        let context = from_folder(dir.path(), 1_000_000).unwrap();
        assert!(
            context.files.len() <= MAX_FILES_READ,
            "{}",
            context.files.len()
        );
    }

    fn write(root: &Path, name: &str, text: &str) {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn the_readme_and_pages_come_first_and_the_budget_holds() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        write(root, "README.md", "# Shop\nA shop app.");
        write(
            root,
            "src/pages/login.tsx",
            r#"<input data-testid="email" placeholder="Email">"#,
        );
        write(
            root,
            "src/components/Button.tsx",
            r#"<button id="buy">Buy</button>"#,
        );
        write(root, "src/util.ts", "export const x = 1;");
        write(root, "node_modules/react/index.js", r#"<b id="never">"#);
        write(root, "src/pages/login.test.tsx", "test");
        write(root, "src/pages/secrets.ts", r#"<b id="leak">"#);
        write(
            root,
            "app/settings.py",
            r#"SECRET_KEY = "x" <i id="leak2">"#,
        );
        let context = from_folder(root, 1_000).unwrap();
        assert_eq!(
            context.files,
            [
                "README.md",
                "src/pages/login.tsx",
                "src/components/Button.tsx",
                "(selectors found in the markup)"
            ]
        );
        assert!(context
            .text
            .contains("data-testid=\"email\"\nplaceholder=\"Email\"\nid=\"buy\""));
        assert!(!context.text.contains("never"));
        assert!(
            !context.text.contains("leak"),
            "files that may hold secrets stay out"
        );
        assert!(context.used_tokens <= 1_000 && context.used_tokens > 10);

        let big = "x".repeat(50_000);
        write(root, "src/pages/huge.html", &big);
        let small = from_folder(root, 500).unwrap();
        assert!(small.used_tokens <= 500, "{}", small.used_tokens);
        assert_eq!(small.budget_tokens, 500);
    }

    #[test]
    fn github_urls_name_a_repository_or_a_pull_request() {
        let repo = github_target("https://github.com/acme/shop").unwrap();
        assert_eq!(
            (repo.owner.as_str(), repo.repo.as_str(), repo.pull),
            ("acme", "shop", None)
        );
        let pull = github_target("https://github.com/acme/shop/pull/42/files").unwrap();
        assert_eq!(pull.pull, Some(42));
        assert_eq!(
            github_target("https://github.com/acme/shop.git")
                .unwrap()
                .repo,
            "shop"
        );
        assert!(github_target("https://gitlab.com/acme/shop").is_none());
        assert!(github_target("/home/me/shop").is_none());
        assert!(github_target("https://github.com/acme/shop/pull/x").is_none());
    }

    /// A GitHub API on loopback: a README, a tree, two files and a pull request's changes.
    async fn fake_github() -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let api = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                let mut request = vec![0u8; 4096];
                let n = socket.read(&mut request).await.unwrap_or(0);
                let request = String::from_utf8_lossy(&request[..n]).to_string();
                let path = request.split_whitespace().nth(1).unwrap_or("").to_string();
                let (status, body) = match path.as_str() {
                    "/repos/acme/shop/readme" => (200, "# Shop\nSign in to buy.".to_string()),
                    "/repos/acme/shop/git/trees/HEAD?recursive=1" => (
                        200,
                        serde_json::json!({"tree": [
                            {"path": "src/pages/login.tsx", "type": "blob"},
                            {"path": "src/util.ts", "type": "blob"},
                            {"path": "src", "type": "tree"}
                        ]})
                        .to_string(),
                    ),
                    "/repos/acme/shop/pulls/7/files?per_page=100" => (
                        200,
                        serde_json::json!([
                            {"filename": "web/Checkout.tsx"},
                        {"filename": ".env.production"}
                        ])
                        .to_string(),
                    ),
                    "/repos/acme/shop/contents/src/pages/login.tsx" => {
                        (200, r#"<input data-testid="email">"#.to_string())
                    }
                    "/repos/acme/shop/contents/web/Checkout.tsx" => {
                        (200, r#"<button id="checkout">Pay</button>"#.to_string())
                    }
                    _ => (404, "{}".to_string()),
                };
                let response = format!(
                    "HTTP/1.1 {status} X\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(response.as_bytes()).await;
            }
        });
        api
    }

    #[tokio::test]
    async fn a_pull_request_s_files_come_first_then_the_pages_of_the_repository() {
        let api = fake_github().await;
        let url = "https://github.com/acme/shop/pull/7";
        let target = github_target(url).unwrap();
        let context = from_github(&target, url, &api, 1_000).await.unwrap();
        assert_eq!(context.source, url);
        assert_eq!(
            context.files,
            [
                "README.md",
                "web/Checkout.tsx",
                "src/pages/login.tsx",
                "(selectors found in the markup)"
            ]
        );
        assert!(context.text.contains("Sign in to buy."));
        assert!(context.text.contains("id=\"checkout\""), "{}", context.text);
        assert!(context.text.contains("data-testid=\"email\""));
        assert!(
            !context.text.contains("util.ts"),
            "a file that names no page is left out"
        );
    }

    #[tokio::test]
    async fn a_repository_github_does_not_show_says_so() {
        let api = fake_github().await;
        let url = "https://github.com/acme/private";
        let error = from_github(&github_target(url).unwrap(), url, &api, 1_000)
            .await
            .unwrap_err();
        assert_eq!(error.code, ErrorCode::InvalidInput);
        assert!(error.message.contains("(HTTP 404)"), "{}", error.message);
        assert!(error.message.contains("GITHUB_TOKEN"), "{}", error.message);
    }

    #[tokio::test]
    async fn github_unreachable_is_a_clear_error() {
        // A port nothing listens on: what an offline machine meets.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let api = format!("http://{}", listener.local_addr().unwrap());
        drop(listener);
        let target = github_target("https://github.com/acme/shop").unwrap();
        let error = from_github(&target, "https://github.com/acme/shop", &api, 1000)
            .await
            .unwrap_err();
        assert_eq!(error.code, ErrorCode::ExecutionFailed);
        assert!(
            error.message.contains("Is this machine online?"),
            "{}",
            error.message
        );
        assert!(error.message.contains("local folder"), "{}", error.message);
    }
}
