//! `vaider eval`: measures what Vaider sees. It runs Vaider's own tools (video analysis for the
//! recordings, the visual compare for the screenshot pairs) on the labelled set of GUI defects
//! in `eval/set/` (made by `scripts/eval-set.sh`), and scores the answers against the labels:
//! recall, precision and F1 per defect class, balanced accuracy, verdict accuracy on the
//! stated expectations, localisation, and tokens, cost and latency per item. Failing Playwright
//! runs and flaky pairs are run as `validate_test` runs them and scored on the steps and the
//! moment they name. See docs/eval.md.

pub mod classify;
pub mod failures;
pub mod labels;
pub mod report;
pub mod run;
pub mod score;

pub use labels::{Item, Kind, Truth};
pub use run::{run, Options, Outcome, RunReport};
pub use score::Scores;
