//! Where a client works: the one rule every door and tool follows to turn what a client said
//! (a `cwd` argument, its workspace roots) into the folders a relative path is looked for in
//! and the project folder whose stores (`.screenshots/`, `.qa-agent/`) are written.
//!
//! The rule: an explicit `cwd` wins (the agent named the folder for this call); without one,
//! the client's roots in the order it listed them, however they arrived (MCP `roots/list` on
//! 2025 sessions, a multi-round-trip `input_required` answer on 2026-07-28). A relative path
//! is then looked for in those folders and last in the server's working folder (the pipeline
//! does that, see `source::resolve`). The project folder is the first of them; the server's
//! working folder stands in only for a server started by its one client (`vaider stdio`,
//! whose client starts it in the project), never for the shared HTTP server.

use std::path::{Path, PathBuf};

/// The folders a client's relative paths point into, in the order they are tried.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Workspace {
    folders: Vec<PathBuf>,
    /// The server runs for this one client in its project (stdio): its working folder may
    /// stand in for the project.
    server_is_the_clients: bool,
}

/// Why there is no project folder to write into.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no workspace: the client sent no workspace roots and no `cwd`; pass `cwd`, the project folder (absolute)")]
pub struct NoWorkspace;

impl Workspace {
    /// The rule itself: `cwd` when given (blank counts as not given), else the roots.
    pub fn of(cwd: Option<&str>, roots: impl IntoIterator<Item = PathBuf>) -> Workspace {
        let folders = match cwd.map(str::trim).filter(|c| !c.is_empty()) {
            Some(cwd) => vec![PathBuf::from(cwd)],
            None => {
                let mut folders: Vec<PathBuf> = Vec::new();
                for root in roots {
                    if !root.as_os_str().is_empty() && !folders.contains(&root) {
                        folders.push(root);
                    }
                }
                folders
            }
        };
        Workspace {
            folders,
            server_is_the_clients: false,
        }
    }

    /// The same workspace, for a server started by its one client (stdio).
    pub fn for_own_server(mut self) -> Workspace {
        self.server_is_the_clients = true;
        self
    }

    /// Where a relative path is looked for, first to last (the pipeline tries the server's
    /// working folder after these).
    pub fn folders(&self) -> &[PathBuf] {
        &self.folders
    }

    /// The project folder: the first folder; for a server of its own, else its working folder.
    pub fn project(&self) -> Result<PathBuf, NoWorkspace> {
        if let Some(first) = self.folders.first() {
            return Ok(first.clone());
        }
        if self.server_is_the_clients {
            if let Ok(dir) = std::env::current_dir() {
                return Ok(dir);
            }
        }
        Err(NoWorkspace)
    }
}

/// The folders of a client's roots (`file://` URIs, percent-encoded); other schemes are not
/// folders on this machine and are skipped.
pub fn folders_of_roots<'a>(uris: impl IntoIterator<Item = &'a str>) -> Vec<PathBuf> {
    uris.into_iter()
        .filter_map(|uri| uri.strip_prefix("file://"))
        .filter_map(|path| crate::source::file_url_path(path).ok())
        .collect()
}

/// Whether a source or path the agent gave is relative to a workspace: a plain relative path,
/// not an absolute one, `~/…`, or a URL (`http(s)://`, `data:`, `file://`).
pub fn is_relative_to_workspace(source: &str) -> bool {
    let source = source.trim();
    if source.is_empty() || source == "~" || source.starts_with("~/") {
        return false;
    }
    let lower = source.to_ascii_lowercase();
    if lower.starts_with("data:") || source.contains("://") {
        return false;
    }
    !Path::new(source).is_absolute()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explicit_cwd_wins_over_the_roots() {
        let roots = [PathBuf::from("/r1"), PathBuf::from("/r2")];
        let ws = Workspace::of(Some(" /proj "), roots.clone());
        assert_eq!(ws.folders(), [PathBuf::from("/proj")]);
        assert_eq!(ws.project(), Ok(PathBuf::from("/proj")));
        let ws = Workspace::of(Some("  "), roots.clone());
        assert_eq!(ws.folders(), roots);
        assert_eq!(ws.project(), Ok(PathBuf::from("/r1")));
    }

    #[test]
    fn roots_keep_their_order_once_each() {
        let ws = Workspace::of(None, ["/b", "/a", "/b", ""].into_iter().map(PathBuf::from));
        assert_eq!(ws.folders(), [PathBuf::from("/b"), PathBuf::from("/a")]);
    }

    #[test]
    fn the_server_folder_stands_in_only_for_a_server_of_its_own() {
        let shared = Workspace::of(None, Vec::new());
        assert_eq!(shared.project(), Err(NoWorkspace));
        assert!(NoWorkspace.to_string().contains("`cwd`"));
        let own = Workspace::of(None, Vec::new()).for_own_server();
        assert_eq!(own.project().ok(), std::env::current_dir().ok());
    }

    #[test]
    fn roots_are_file_urls_decoded() {
        let folders = folders_of_roots(["file:///home/a%20b/app", "https://x/y", "file:///c"]);
        assert_eq!(
            folders,
            [PathBuf::from("/home/a b/app"), PathBuf::from("/c")]
        );
    }

    #[test]
    fn only_plain_relative_paths_need_a_workspace() {
        for relative in [
            "video.webm",
            "test-results/a/video.webm",
            "./x.png",
            "../x.png",
        ] {
            assert!(is_relative_to_workspace(relative), "{relative}");
        }
        for not in [
            "",
            "/abs/video.webm",
            "~/video.webm",
            "~",
            "http://127.0.0.1/v.webm",
            "HTTPS://x/y",
            "data:image/png;base64,AAAA",
            "file:///abs/v.webm",
        ] {
            assert!(!is_relative_to_workspace(not), "{not}");
        }
    }
}
