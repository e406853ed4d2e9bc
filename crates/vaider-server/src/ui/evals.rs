//! `GET /api/evals`: the runs of `vaider eval` kept in the data folder's `evals/` (each a
//! report.json, docs/eval.md), newest first, summarised for the UI's eval page: the headline
//! scores and each class's recall, precision and F1. A file that is not a report is skipped.

use axum::extract::State;
use axum::Json;
use serde_json::{json, Value};

use crate::api_error::ApiError;
use crate::AppState;

pub(super) async fn evals(State(state): State<AppState>) -> Result<Json<Value>, ApiError> {
    let dir = state.engine.data_dir().join("evals");
    let runs = super::blocking(move || Ok(read_runs(&dir))).await?;
    Ok(Json(json!({ "runs": runs })))
}

fn read_runs(dir: &std::path::Path) -> Vec<Value> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    files.sort();
    files.reverse();
    files
        .iter()
        .filter_map(|p| std::fs::read(p).ok())
        .filter_map(|bytes| serde_json::from_slice::<Value>(&bytes).ok())
        .filter_map(|report| summary(&report))
        .collect()
}

/// The page's view of one report; none when it has no scores.
fn summary(report: &Value) -> Option<Value> {
    let s = report.get("scores")?.as_object()?;
    let classes: Vec<Value> = s
        .get("classes")?
        .as_array()?
        .iter()
        .map(|c| {
            json!({"class": c["class"], "support": c["support"], "precision": c["precision"],
                   "recall": c["recall"], "f1": c["f1"]})
        })
        .collect();
    Some(json!({
        "finishedAt": report["finished_at"],
        "provider": report["provider"],
        "model": report["model"],
        "sampling": report["sampling"],
        "only": report["only"],
        "items": s["items"],
        "errors": s["errors"],
        "balancedAccuracy": s["detection"]["balanced_accuracy"],
        "recall": s["detection"]["recall"],
        "specificity": s["detection"]["specificity"],
        "verdictAccuracy": s["verdicts"]["rate"],
        "localisation": s["localisation"]["rate"],
        "costUsd": s["spend"]["cost_usd"],
        "meanLatencyMs": s["spend"]["mean_latency_ms"],
        "classes": classes,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_are_listed_newest_first_and_other_files_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let report = |at: &str, ba: f64| {
            json!({"finished_at": at, "provider": "gemini", "model": "m", "sampling": "full",
                "scores": {"items": 10, "errors": 1,
                    "detection": {"balanced_accuracy": ba, "recall": 1.0, "specificity": 0.0},
                    "verdicts": {"rate": 0.5}, "localisation": {"rate": null},
                    "spend": {"cost_usd": 0.01, "mean_latency_ms": 900.0},
                    "classes": [{"class": "overlap", "support": 4, "precision": 0.5, "recall": 1.0, "f1": 0.667}]}})
        };
        std::fs::write(
            dir.path().join("20261101.json"),
            report("2026-11-01", 0.5).to_string(),
        )
        .unwrap();
        std::fs::write(
            dir.path().join("20261127.json"),
            report("2026-11-27", 0.75).to_string(),
        )
        .unwrap();
        std::fs::write(dir.path().join("broken.json"), "{").unwrap();
        std::fs::write(dir.path().join("notes.txt"), "x").unwrap();
        let runs = read_runs(dir.path());
        assert_eq!(runs.len(), 2);
        assert_eq!(runs[0]["finishedAt"], "2026-11-27");
        assert_eq!(runs[0]["balancedAccuracy"], 0.75);
        assert_eq!(runs[1]["classes"][0]["class"], "overlap");
        assert!(read_runs(&dir.path().join("missing")).is_empty());
    }
}
