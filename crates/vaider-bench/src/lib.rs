//! Pieces shared by the benchmark binaries: starting a release `vaider serve`, reading its
//! memory from /proc, building large test videos, timing curl's uploads and `npx playwright
//! test`, and printing the report.

pub mod curl;
pub mod playwright;
pub mod report;
pub mod server;
pub mod video;
