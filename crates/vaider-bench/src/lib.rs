//! Pieces shared by the benchmark binaries: starting a release `vaider serve`, reading its
//! memory from /proc, building large test videos, and printing the report.

pub mod report;
pub mod server;
pub mod video;
