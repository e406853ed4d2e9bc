//! `vaider eval` end to end against the fake Gemini, on a few items of the shipped set. The
//! fake answers from what it receives and never sees the labels, so these tests check the run
//! and the scorer, not a model: the fake's own answers go through the whole pipeline, and an
//! answer scripted to call every item a defect must score a balanced accuracy of exactly 0.5.

mod common;

use common::*;
use fake_gemini::FakeGemini;
use serde_json::Value;

fn set() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/../../eval/set").to_string()
}

/// The shipped set, copied into the sandbox: a run keeps each item's interaction files beside
/// its media, as for any analysed file, and those belong in no repository.
fn set_in(sandbox: &Sandbox) -> std::path::PathBuf {
    let copy = sandbox.work().join("set");
    if !copy.exists() {
        copy_tree(std::path::Path::new(&set()), &copy);
    }
    copy
}

/// `from` copied to `to`, without the interaction folders an earlier run left in it.
fn copy_tree(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let (name, kind) = (entry.file_name(), entry.file_type().unwrap());
        if kind.is_dir() && !name.to_string_lossy().ends_with(".VaiderInteractions") {
            copy_tree(&entry.path(), &to.join(&name));
        } else if kind.is_file() {
            std::fs::copy(entry.path(), to.join(&name)).unwrap();
        }
    }
}

fn eval(sandbox: &Sandbox, fake: &FakeGemini, extra: &[&str]) -> std::process::Command {
    let mut command = sandbox.vaider();
    let out = sandbox.work().join("run");
    command
        .args(["eval", "--provider", "gemini", "--yes", "--json", "--set"])
        .arg(set_in(sandbox))
        .arg("--out")
        .arg(&out)
        .args(extra)
        .env("GEMINI_API_KEY", FakeGemini::API_KEY)
        .env("VAIDER_GEMINI_BASE_URL", fake.base_url());
    command
}

async fn run_eval(command: std::process::Command) -> Value {
    let output = tokio::task::spawn_blocking(move || run(command))
        .await
        .unwrap();
    assert!(output.status.success(), "{}", stderr(&output));
    serde_json::from_str(&stdout(&output)).unwrap()
}

#[tokio::test]
async fn a_few_items_run_through_the_pipeline_and_a_resumed_run_asks_nothing_again() {
    let fake = FakeGemini::start().await;
    let sandbox = Sandbox::new();
    let report = run_eval(eval(&sandbox, &fake, &["--limit", "4"])).await;
    let items = report["items"].as_array().unwrap();
    assert_eq!(items.len(), 4, "{report}");
    assert_eq!(report["scores"]["errors"], 0, "{report}");
    assert_eq!(report["provider"], "gemini");
    // The kinds in turn, each answered by the model with its tokens counted.
    let kinds: Vec<&str> = items.iter().map(|i| i["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["recording", "pair", "failure", "flaky"]);
    for item in items {
        assert!(item["input_tokens"].as_u64().unwrap() > 0, "{item}");
        assert!(
            item["answer"].as_str().unwrap().contains("sha256"),
            "{item}"
        );
    }
    // A flaky pair asks twice: the failed attempt's failing step, the passing one's.
    let asked = fake.generate_requests().len();
    assert_eq!(asked, 5);
    for name in ["report.json", "report.md", "items.jsonl"] {
        assert!(sandbox.work().join("run").join(name).is_file(), "{name}");
    }
    let md = std::fs::read_to_string(sandbox.work().join("run/report.md")).unwrap();
    assert!(md.contains("balanced accuracy"), "{md}");

    let again = run_eval(eval(&sandbox, &fake, &["--limit", "4", "--resume"])).await;
    assert_eq!(again["items"], report["items"]);
    assert_eq!(
        fake.generate_requests().len(),
        asked,
        "a resumed run asked again"
    );
}

/// The "done when": `vaider eval --provider gemini` runs the whole shipped set end to
/// end against the fake, every item answered through the pipeline and scored.
#[tokio::test]
async fn the_whole_set_runs_end_to_end_against_the_fake() {
    let manifest: Value =
        serde_json::from_str(&std::fs::read_to_string(format!("{}/manifest.json", set())).unwrap())
            .unwrap();
    let listed = manifest["items"].as_array().unwrap();
    let shipped = listed.len();
    let of = |folder: &str| {
        listed
            .iter()
            .filter(|p| p.as_str().unwrap().starts_with(folder))
            .count()
    };
    let (defect_items, flaky) = (of("recordings/") + of("pairs/"), of("flaky/"));
    assert!(
        defect_items >= 80,
        "the set has {defect_items} recordings and pairs"
    );
    assert!(of("failures/") >= 10 && flaky >= 5, "{shipped} items");
    let fake = FakeGemini::start().await;
    let sandbox = Sandbox::new();
    let report = run_eval(eval(&sandbox, &fake, &[])).await;
    let items = report["items"].as_array().unwrap();
    assert_eq!(items.len(), shipped, "every item is run");
    assert_eq!(report["scores"]["errors"], 0, "{}", report["scores"]);
    // Every item is answered by a model call of its own, except identical pairs (no change, so
    // nothing to ask) and items whose media and prompt were asked before (the cache).
    let identical = items
        .iter()
        .filter(|i| i["input_tokens"].as_u64() == Some(0))
        .inspect(|i| assert!(i["answer"].as_str().unwrap().contains("identical"), "{i}"))
        .count();
    let cached = items.iter().filter(|i| i["cached"] == true).count();
    // A flaky pair is two calls.
    assert_eq!(
        fake.generate_requests().len() + identical + cached,
        shipped + flaky,
        "{identical} identical, {cached} cached"
    );
    let detection = &report["scores"]["detection"];
    let judged = ["tp", "fp", "tn", "fn"]
        .iter()
        .map(|k| detection[k].as_u64().unwrap())
        .sum::<u64>();
    assert_eq!(
        judged as usize, defect_items,
        "every recording and pair is scored: {detection}"
    );
    let scores = &report["scores"];
    assert_eq!(scores["failures"]["items"], of("failures/"));
    assert_eq!(scores["flaky"]["items"], flaky);
}

#[tokio::test]
async fn an_answer_that_always_says_defect_scores_a_balanced_accuracy_of_one_half() {
    let fake = FakeGemini::start().await;
    // One answer for every request: every expectation not met, an overlap at 00:02, and an
    // unexpected change in region 1 for the compare.
    let always = serde_json::json!({
        "description": "00:02 A panel covers the buttons.\nDEFECTS: overlap [00:02]",
        "expectations": (0..8).map(|_| serde_json::json!({
            "expectation": "", "verdict": "not_met", "evidence": "00:02 a panel"})).collect::<Vec<_>>(),
        "summary": "A panel covers the buttons.",
        "found_changes": [],
        "unexpected_changes": [{"region": "Region 1", "change": "A panel overlaps the buttons", "severity": "error"}],
        "expected_matched": [],
    });
    fake.set_reply_text(Some(always.to_string()));
    let sandbox = Sandbox::new();
    let report = run_eval(eval(&sandbox, &fake, &["--only", "overlap"])).await;
    let scores = &report["scores"];
    assert_eq!(scores["errors"], 0, "{report}");
    let detection = &scores["detection"];
    // --only overlap: its 7 items and 7 controls, all called defects.
    assert_eq!(
        (
            &detection["tp"],
            &detection["fp"],
            &detection["tn"],
            &detection["fn"]
        ),
        (
            &Value::from(7),
            &Value::from(7),
            &Value::from(0),
            &Value::from(0)
        ),
        "{detection}"
    );
    assert_eq!(detection["balanced_accuracy"], 0.5);
    assert_eq!(detection["recall"], 1.0);
    let overlap = scores["classes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["class"] == "overlap")
        .unwrap();
    assert_eq!(overlap["precision"], 0.5);
    assert_eq!(overlap["recall"], 1.0);
}

#[test]
fn compare_shows_two_runs_side_by_side() {
    let sandbox = Sandbox::new();
    let report = |ba: f64| {
        serde_json::json!({
            "version": 1, "started_at": "", "finished_at": "2026-11-27", "provider": "gemini",
            "model": "m", "sampling": "full", "prompt": "default", "set": "eval/set", "only": null, "limit": null,
            "items": [],
            "scores": {"items": 10, "errors": 0, "classes": [],
                "detection": {"tp": 5, "fp": 0, "tn": 5, "fn": 0, "recall": ba, "specificity": ba,
                    "balanced_accuracy": ba, "accuracy": ba},
                "verdicts": {"hits": 0, "total": 0, "rate": null},
                "localisation": {"hits": 0, "total": 0, "rate": null},
                "spend": {"input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0, "cached": 0,
                    "mean_input_tokens": null, "mean_cost_usd": null, "mean_latency_ms": null}}
        })
    };
    for (name, ba, sampling) in [("a.json", 0.5, "full"), ("b.json", 0.75, "auto")] {
        let mut body = report(ba);
        body["sampling"] = sampling.into();
        std::fs::write(sandbox.work().join(name), body.to_string()).unwrap();
    }
    let mut command = sandbox.vaider();
    command.args(["eval", "compare", "a.json", "b.json"]);
    let output = run(command);
    assert!(output.status.success(), "{}", stderr(&output));
    let md = stdout(&output);
    assert!(
        md.contains("| balanced accuracy (defect or not) | 50.0 % | 75.0 % |"),
        "{md}"
    );
    // Recall 50 % under full, 75 % under auto: the change-aware goal holds.
    assert!(
        md.contains("recall +25.0 points; the goal (within 2 points) is kept"),
        "{md}"
    );
}

#[tokio::test]
async fn a_prompt_variant_goes_to_the_model_and_is_named_in_the_report() {
    let fake = FakeGemini::start().await;
    let sandbox = Sandbox::new();
    let variant = sandbox.work().join("terse.txt");
    std::fs::write(
        &variant,
        "List GUI defects only. End with DEFECTS: <names> or DEFECTS: none.",
    )
    .unwrap();
    let file = variant.display().to_string();
    let report = run_eval(eval(
        &sandbox,
        &fake,
        &["--limit", "1", "--prompt-file", &file],
    ))
    .await;
    assert_eq!(report["prompt"], "terse", "{report}");
    let sent = serde_json::to_string(&fake.generate_requests()).unwrap();
    assert!(
        sent.contains("List GUI defects only."),
        "the variant was not sent"
    );
}

fn failure_outcomes(report: &Value) -> Vec<&Value> {
    report["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| &i["failure"])
        .collect()
}

/// Every failing run reaches the model with the stretch around its failing step: the fake
/// names the failing step (as the first wrong one) only when the video clip it received
/// covers that step's time, so an answer naming it is the fake's proof. The scores are
/// computed: the fake's first wrong moment is the failing step's start, which is right only
/// where the defect showed there.
#[tokio::test]
async fn every_failing_run_reaches_the_model_around_its_failing_step_and_is_scored() {
    let fake = FakeGemini::start().await;
    let sandbox = Sandbox::new();
    let report = run_eval(eval(&sandbox, &fake, &["--only", "failing-run"])).await;
    let items = report["items"].as_array().unwrap();
    assert!(items.len() >= 10, "{report}");
    assert_eq!(report["scores"]["errors"], 0, "{report}");
    assert_eq!(fake.generate_requests().len(), items.len());
    let mut moments_right = 0;
    for (item, f) in items.iter().zip(failure_outcomes(&report)) {
        assert_eq!(item["kind"], "failure");
        assert_eq!(f["failing_step_named"], f["failing_step"], "{item}");
        assert_eq!(
            f["first_wrong_step_named"], f["failing_step"],
            "the fake did not see the failing step: {item}"
        );
        let (from, to) = (
            f["watched"][0].as_f64().unwrap(),
            f["watched"][1].as_f64().unwrap(),
        );
        assert!(0.0 <= from && from < to, "{item}");
        assert!(item["input_tokens"].as_u64().unwrap() > 0, "{item}");
        let off =
            f["first_wrong_at_named"].as_f64().unwrap() - f["first_wrong_at"].as_f64().unwrap();
        moments_right += usize::from(off.abs() <= 0.5);
    }
    let scores = &report["scores"]["failures"];
    // The figures docs/eval.md quotes for the fake.
    eprintln!("failing-run scores against the fake: {scores}");
    let n = items.len() as u64;
    assert_eq!(scores["items"], n);
    assert_eq!(scores["failing_step"]["hits"], n);
    assert_eq!(scores["moment"]["total"], n);
    assert_eq!(scores["moment"]["hits"], moments_right as u64);
    // Most defects show steps before the failure: the fake, which names the failing step,
    // gets them wrong.
    assert!(
        scores["first_wrong_step"]["hits"].as_u64().unwrap() < n,
        "{scores}"
    );
    assert!(scores["cost_usd"].as_f64().unwrap() > 0.0);
    let md = std::fs::read_to_string(sandbox.work().join("run/report.md")).unwrap();
    assert!(
        md.contains(&format!(
            "| failing runs: failing step named right | 100.0 % ({n}/{n}) |"
        )),
        "{md}"
    );
    assert!(md.contains("## Failing runs"), "{md}");
}

/// The scorer can fail: the same answer against a label made wrong scores wrong.
#[tokio::test]
async fn a_wrong_label_scores_the_same_answer_wrong() {
    let fake = FakeGemini::start().await;
    let sandbox = Sandbox::new();
    let args = ["--only", "failing-run", "--limit", "1"];
    let first = run_eval(eval(&sandbox, &fake, &args)).await;
    let f = failure_outcomes(&first)[0].clone();
    assert_eq!(f["failing_step_named"], f["failing_step"], "{first}");
    let named_at = f["first_wrong_at_named"].as_f64().unwrap();
    let id = first["items"][0]["id"].as_str().unwrap().to_string();

    let path = set_in(&sandbox).join(format!("failures/{id}.json"));
    let relabel = |failing: u64, at: f64| {
        let mut label: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        label["failure"]["failing_step"]["number"] = failing.into();
        label["failure"]["first_wrong"]["at_s"] = at.into();
        std::fs::write(&path, label.to_string()).unwrap();
    };
    let failing = f["failing_step"].as_u64().unwrap();
    relabel(failing + 1, named_at + 0.6);
    let wrong = run_eval(eval(&sandbox, &fake, &args)).await;
    let scores = &wrong["scores"]["failures"];
    assert_eq!(scores["failing_step"]["hits"], 0, "{wrong}");
    assert_eq!(scores["moment"]["hits"], 0, "{wrong}");
    relabel(failing, named_at - 0.4);
    let right = run_eval(eval(&sandbox, &fake, &args)).await;
    let scores = &right["scores"]["failures"];
    assert_eq!(scores["failing_step"]["hits"], 1, "{right}");
    assert_eq!(scores["moment"]["hits"], 1, "{right}");
}

/// Every flaky pair's attempts are compared: the step where they parted named from the
/// failed attempt's trace, both attempts watched, and the labelled kind of difference named
/// where the traces tell it (timing, console, network; the screen is the model's to say).
#[tokio::test]
async fn every_flaky_pair_is_compared_and_scored() {
    let fake = FakeGemini::start().await;
    let sandbox = Sandbox::new();
    let report = run_eval(eval(&sandbox, &fake, &["--only", "flaky-pair"])).await;
    let items = report["items"].as_array().unwrap();
    assert!(items.len() >= 5, "{report}");
    assert_eq!(report["scores"]["errors"], 0, "{report}");
    assert_eq!(fake.generate_requests().len(), 2 * items.len());
    for item in items {
        let f = &item["flaky"];
        assert_eq!(f["parted_at_named"], f["parted_at"], "{item}");
        if f["kind"] != "screen" {
            assert_eq!(f["kind_named"], true, "{item}");
        }
    }
    let scores = &report["scores"]["flaky"];
    let n = items.len() as u64;
    assert_eq!(scores["parted_at"]["hits"], n, "{scores}");
    assert_eq!(scores["kind_named"]["total"], n, "{scores}");
    let md = std::fs::read_to_string(sandbox.work().join("run/report.md")).unwrap();
    assert!(md.contains("## Flaky pairs"), "{md}");
}
