//! The scorer against answers whose right scores are known: confusion matrices worked out by
//! hand, an answerer that always says "defect" (balanced accuracy 0.5, whatever the share of
//! defects), and recordings and pairs answered right, wrong and partly right.

use vaider_core::analysis::{AnalysisResult, ExpectationVerdict, Usage, Verdict};
use vaider_eval::failures::{read_failure, read_flaky, step_number};
use vaider_eval::labels::{
    Box2, Expectation, FailureLabel, FirstWrong, FlakyLabel, Item, Kind, StepRef, TimeRange, Truth,
    Where,
};
use vaider_eval::run::{read_pair, read_recording};
use vaider_eval::score::{class_score, detection, score, Outcome};
use vaider_validate::failure::{FailureAnalysis, Watched};
use vaider_validate::flaky::FlakyAnalysis;
use vaider_visual::service::{
    AgenticAnalysis, CompareData, PixelDiffData, RegionData, UnexpectedChange, Validation,
};

fn close(a: Option<f64>, b: f64) {
    let a = a.expect("a defined score");
    assert!((a - b).abs() < 1e-9, "{a} != {b}");
}

#[test]
fn precision_recall_and_f1_from_a_known_confusion_matrix() {
    let c = class_score("overlap", 3, 1, 2);
    close(c.precision, 0.75);
    close(c.recall, 0.6);
    close(c.f1, 2.0 * 0.75 * 0.6 / 1.35);
    assert_eq!(c.support, 5);
    // Never guessed, always missed: recall and F1 are 0, precision has no meaning.
    let missed = class_score("overlap", 0, 0, 4);
    assert_eq!(missed.precision, None);
    close(missed.recall, 0.0);
    close(missed.f1, 0.0);
    // No item and no guess: nothing to say.
    assert_eq!(class_score("overlap", 0, 0, 0).f1, None);
}

#[test]
fn balanced_accuracy_is_the_mean_of_recall_and_specificity() {
    let d = detection(40, 5, 25, 10);
    close(d.recall, 0.8);
    close(d.specificity, 25.0 / 30.0);
    close(d.balanced_accuracy, (0.8 + 25.0 / 30.0) / 2.0);
    close(d.accuracy, 65.0 / 80.0);
}

fn outcome(id: &str, classes: &[&str], flagged: bool, predicted: &[&str]) -> Outcome {
    Outcome {
        id: id.into(),
        classes: classes.iter().map(|c| c.to_string()).collect(),
        flagged,
        predicted: predicted.iter().map(|c| c.to_string()).collect(),
        ..Default::default()
    }
}

#[test]
fn an_answerer_that_always_says_defect_scores_half() {
    // As in VideoGameQA-Bench: most items are bugs, so "always bug" has a high accuracy.
    let mut outcomes: Vec<Outcome> = (0..90)
        .map(|i| outcome(&format!("d{i}"), &["overlap"], true, &["overlap"]))
        .collect();
    outcomes.extend((0..10).map(|i| outcome(&format!("c{i}"), &[], true, &["overlap"])));
    let s = score(&outcomes);
    close(s.detection.accuracy, 0.9);
    close(s.detection.balanced_accuracy, 0.5);
    close(s.detection.specificity, 0.0);
    let overlap = s.classes.iter().find(|c| c.class == "overlap").unwrap();
    close(overlap.precision, 0.9);
    close(overlap.recall, 1.0);
    // And one that never says it: also 0.5, with no recall at all.
    let never: Vec<Outcome> = outcomes
        .iter()
        .map(|o| Outcome {
            flagged: false,
            predicted: vec![],
            ..o.clone()
        })
        .collect();
    let s = score(&never);
    close(s.detection.balanced_accuracy, 0.5);
    close(s.detection.recall, 0.0);
}

#[test]
fn right_wrong_and_partly_right_answers_score_as_they_should() {
    let outcomes = vec![
        outcome("right-defect", &["overlap"], true, &["overlap"]),
        outcome("right-control", &[], false, &[]),
        // Partly right: it saw a defect but named the wrong class.
        outcome("wrong-class", &["wrong-text"], true, &["overlap"]),
        outcome("missed", &["layout-shift"], false, &[]),
        outcome("false-alarm", &[], true, &["unknown"]),
        Outcome {
            error: Some("timeout".into()),
            ..outcome("failed", &["overlap"], false, &[])
        },
    ];
    let s = score(&outcomes);
    assert_eq!((s.items, s.errors), (5, 1));
    let d = &s.detection;
    assert_eq!((d.tp, d.fp, d.tn, d.fn_), (2, 1, 1, 1));
    close(d.balanced_accuracy, (2.0 / 3.0 + 0.5) / 2.0);
    let class = |name: &str| s.classes.iter().find(|c| c.class == name).unwrap().clone();
    let overlap = class("overlap");
    assert_eq!((overlap.tp, overlap.fp, overlap.fn_), (1, 1, 0));
    let wrong_text = class("wrong-text");
    assert_eq!((wrong_text.tp, wrong_text.fn_), (0, 1));
    close(wrong_text.f1, 0.0);
}

fn recording_item() -> Item {
    Item {
        id: "rec-x".into(),
        kind: Kind::Recording,
        media: Some("rec-x.webm".into()),
        before: None,
        after: None,
        classes: vec!["flash-error-toast".into()],
        expectations: vec![
            Expectation {
                text: "The message appears".into(),
                truth: Truth::Met,
            },
            Expectation {
                text: "No error message is shown".into(),
                truth: Truth::NotMet,
            },
        ],
        duration_s: Some(3.4),
        place: Some(Where {
            time: Some(TimeRange {
                start_s: 1.1,
                end_s: 1.6,
            }),
            region: None,
        }),
        trace: None,
        test: None,
        error: None,
        failure: None,
        attempts: Vec::new(),
        flaky: None,
        dir: Default::default(),
    }
}

fn analysis(description: &str, verdicts: &[(Verdict, &str)]) -> AnalysisResult {
    AnalysisResult {
        description: description.into(),
        expectations: verdicts
            .iter()
            .map(|(verdict, evidence)| ExpectationVerdict {
                expectation: String::new(),
                verdict: *verdict,
                evidence: evidence.to_string(),
            })
            .collect(),
        all_expectations_met: None,
        provider: "gemini".into(),
        model: "m".into(),
        duration_ms: 10,
        usage: Usage {
            input_tokens: 900,
            output_tokens: 100,
            ..Default::default()
        },
        cost_usd: 0.001,
        cached: false,
        interaction_id: String::new(),
        log_dir: String::new(),
        media_path: String::new(),
        media_type: String::new(),
        frames_analysed: 3,
        details: None,
        adaptations: vec![],
        sampling: None,
    }
}

#[test]
fn a_recording_answered_right_wrong_and_partly_right() {
    let item = recording_item();
    let mut right = Outcome::default();
    read_recording(
        &item,
        &analysis(
            "00:00 The cart.\n00:01 A red error flashes.\nDEFECTS: flash-error-toast [00:01]",
            &[
                (Verdict::Met, "00:02 shown"),
                (Verdict::NotMet, "at 00:01 an error toast"),
            ],
        ),
        &mut right,
    );
    assert!(right.flagged);
    assert_eq!(right.predicted, vec!["flash-error-toast"]);
    assert_eq!(right.localised, Some(true));
    assert!(right.verdicts.iter().all(|v| v.answer == Some(v.truth)));
    assert_eq!((right.input_tokens, right.output_tokens), (900, 100));

    let mut wrong = Outcome::default();
    read_recording(
        &item,
        &analysis(
            "00:03 All fine.\nDEFECTS: none",
            &[(Verdict::Met, ""), (Verdict::Met, "")],
        ),
        &mut wrong,
    );
    assert!(!wrong.flagged);
    assert_eq!(wrong.localised, Some(false));
    assert_eq!(wrong.verdicts[1].answer, Some(Truth::Met));

    // Partly right: it flags the expectation but names no class and a moment far off.
    let mut partly = Outcome::default();
    read_recording(
        &item,
        &analysis(
            "00:00 The cart.",
            &[(Verdict::Unclear, ""), (Verdict::NotMet, "at 00:09")],
        ),
        &mut partly,
    );
    assert!(partly.flagged);
    assert_eq!(partly.predicted, vec!["unknown"]);
    assert_eq!(partly.localised, Some(false));
    assert_eq!(partly.verdicts[0].answer, None);

    let s = score(&[right, wrong, partly]);
    // Right: 2 of 2; wrong: 1 of 2 (the first was met); partly: 1 of 2 (unclear is wrong).
    close(s.verdicts.rate, 4.0 / 6.0);
    close(s.localisation.rate, 1.0 / 3.0);
    let toast = s
        .classes
        .iter()
        .find(|c| c.class == "flash-error-toast")
        .unwrap();
    assert_eq!((toast.tp, toast.fn_), (1, 2));
}

fn compare_data(unexpected: &[(&str, &str)], matched: &[&str], missed: &[&str]) -> CompareData {
    CompareData {
        annotated_screenshot: String::new(),
        pixel_diff: PixelDiffData {
            total_changes: 2,
            changed_pixels: 900,
            diff_percentage: 1.0,
        },
        agentic_analysis: AgenticAnalysis {
            summary: "Two changes.".into(),
            found_changes: vec![],
            unexpected_changes: unexpected
                .iter()
                .map(|(region, change)| UnexpectedChange {
                    region: region.to_string(),
                    change: change.to_string(),
                    severity: "error".into(),
                })
                .collect(),
        },
        validation: Validation {
            expected_matched: matched.iter().map(|s| s.to_string()).collect(),
            expected_missed: missed.iter().map(|s| s.to_string()).collect(),
            unexpected_found: vec![],
            regressions: !unexpected.is_empty(),
        },
        diff_image: None,
        heat_map: String::new(),
        close_ups: None,
        ignored_regions: vec![],
        regions: vec![
            RegionData {
                number: 1,
                x: 20,
                y: 200,
                width: 100,
                height: 30,
                changed_pixels: 400,
            },
            RegionData {
                number: 2,
                x: 150,
                y: 70,
                width: 260,
                height: 90,
                changed_pixels: 500,
            },
        ],
        size_change: None,
        interaction_id: None,
        cost_usd: 0.002,
    }
}

#[test]
fn a_pair_answered_right_and_wrong() {
    let item = Item {
        id: "pair-x".into(),
        kind: Kind::Pair,
        media: None,
        before: Some("b.png".into()),
        after: Some("a.png".into()),
        classes: vec!["overlap".into()],
        expectations: vec![Expectation {
            text: "The button reads Save again".into(),
            truth: Truth::Met,
        }],
        duration_s: None,
        place: Some(Where {
            time: None,
            region: Some(Box2 {
                x: 150,
                y: 70,
                width: 260,
                height: 90,
            }),
        }),
        trace: None,
        test: None,
        error: None,
        failure: None,
        attempts: Vec::new(),
        flaky: None,
        dir: Default::default(),
    };
    let mut right = Outcome::default();
    read_pair(
        &item,
        &compare_data(
            &[("Region 2", "A yellow panel covers the buttons")],
            &["The button reads Save again"],
            &[],
        ),
        &mut right,
    );
    assert!(right.flagged);
    assert_eq!(right.predicted, vec!["overlap"]);
    assert_eq!(right.localised, Some(true));
    assert_eq!(right.verdicts[0].answer, Some(Truth::Met));

    // Wrong place and wrong words: flagged, but not this class and not this region.
    let mut wrong = Outcome::default();
    read_pair(
        &item,
        &compare_data(
            &[("Region 1", "The label text changed")],
            &[],
            &["The button reads Save again"],
        ),
        &mut wrong,
    );
    assert!(wrong.flagged);
    assert_eq!(wrong.predicted, vec!["wrong-text"]);
    assert_eq!(wrong.localised, Some(false));
    assert_eq!(wrong.verdicts[0].answer, Some(Truth::NotMet));

    let mut silent = Outcome::default();
    read_pair(
        &item,
        &compare_data(&[], &["The button reads Save again"], &[]),
        &mut silent,
    );
    assert!(!silent.flagged);
    assert!(silent.predicted.is_empty());
}

fn failing_item(failing: u64, running: &[u64], at: f64) -> Item {
    let step = |number: u64| StepRef {
        number,
        title: format!("step {number}"),
    };
    let mut item = recording_item();
    item.id = "fail-x".into();
    item.kind = Kind::Failure;
    item.classes = Vec::new();
    item.expectations = Vec::new();
    item.failure = Some(FailureLabel {
        defect: "wrong-text".into(),
        failing_step: step(failing),
        first_wrong: FirstWrong {
            at_s: at,
            step: running.first().map(|n| step(*n)),
            running: running.iter().map(|n| step(*n)).collect(),
        },
        cause: "The save showed the wrong message.".into(),
    });
    item
}

fn watched(failing: &str, first: Option<&str>, at: Option<f64>) -> FailureAnalysis {
    FailureAnalysis {
        test: "saves".into(),
        failing_step: Some(failing.into()),
        watched: Watched {
            from: 1.5,
            to: 4.0,
            fps: 8.0,
        },
        screen_at_failure: "The message reads Order plased.".into(),
        expected: "Order placed".into(),
        first_wrong: first.map(str::to_string),
        first_wrong_at: at,
        cause: "a misspelt message".into(),
        video: "fail-x.webm".into(),
        interaction_id: "i".into(),
        model: "m".into(),
        cost_usd: 0.001,
        cached: false,
    }
}

fn failure_of(item: &Item, analysis: &FailureAnalysis) -> Outcome {
    let mut outcome = Outcome::default();
    read_failure(item, analysis, &mut outcome);
    outcome
}

#[test]
fn a_failing_run_is_scored_on_the_steps_and_the_moment_it_names() {
    let answer = watched(
        "step 12 'Expect \"toHaveText\"', 00:03.0",
        Some("step 10 'Wait for timeout', 00:02.3"),
        Some(2.3),
    );
    // Labelled as the answer says: the failing step, a step running then, 0.3 s off.
    let right = failure_of(&failing_item(12, &[8, 10], 2.0), &answer);
    let r = right.failure.clone().unwrap();
    assert!(r.failing_step_right() && r.first_wrong_step_right() && r.moment_right());
    // A label the answer does not match: every score is wrong.
    let wrong = failure_of(&failing_item(13, &[5, 6], 1.0), &answer);
    let w = wrong.failure.clone().unwrap();
    assert!(!w.failing_step_right() && !w.first_wrong_step_right() && !w.moment_right());
    // Half a second is the edge; no moment named is wrong.
    assert!(failure_of(&failing_item(12, &[10], 2.8), &answer)
        .failure
        .unwrap()
        .moment_right());
    assert!(!failure_of(&failing_item(12, &[10], 2.85), &answer)
        .failure
        .unwrap()
        .moment_right());
    let silent = watched("step 12 'Expect', 00:03.0", None, None);
    let s = failure_of(&failing_item(12, &[10], 2.3), &silent)
        .failure
        .unwrap();
    assert!(s.failing_step_right() && !s.first_wrong_step_right() && !s.moment_right());

    let scores = score(&[right, wrong]);
    let f = &scores.failures;
    assert_eq!(f.items, 2);
    assert_eq!((f.failing_step.hits, f.failing_step.total), (1, 2));
    assert_eq!((f.first_wrong_step.hits, f.moment.hits), (1, 1));
    close(f.moment.rate, 0.5);
    // Watched 1.5-4.0 s: the right label's 2.0 s lay in it, the wrong one's 1.0 s did not.
    assert_eq!((f.moment_watched.hits, f.moment_watched.total), (1, 2));
    assert!((f.cost_usd - 0.002).abs() < 1e-12);
    // Failing runs are no defect items: detection counts none of them.
    assert_eq!(scores.detection.tp + scores.detection.fp, 0);
    assert_eq!(scores.detection.tn + scores.detection.fn_, 0);
    assert_eq!(scores.items, 2);
}

fn flaky_item(kind: &str, parted: u64) -> Item {
    let mut item = failing_item(1, &[1], 0.0);
    item.id = "flaky-x".into();
    item.kind = Kind::Flaky;
    item.failure = None;
    item.flaky = Some(FlakyLabel {
        parted_at: StepRef {
            number: parted,
            title: "Click locator('#primary')".into(),
        },
        difference: "what differed".into(),
        kind: kind.into(),
        words: if kind == "screen" {
            vec!["cookie".into(), "banner".into()]
        } else {
            Vec::new()
        },
    });
    item
}

fn compared(differences: &[&str], screen: &str) -> FlakyAnalysis {
    FlakyAnalysis {
        test: "saves".into(),
        attempts: "attempt 1 failed, attempt 2 passed".into(),
        diverged_at: Some("step 9 'Click locator('#primary')', 00:02.1".into()),
        differences: differences.iter().map(|d| d.to_string()).collect(),
        failed_attempt: Some(watched("step 9 'Click', 00:02.1", None, None)),
        passed_attempt_screen: Some(screen.into()),
        cost_usd: 0.002,
    }
}

#[test]
fn a_flaky_pair_is_scored_on_where_they_parted_and_the_kind_of_difference_named() {
    let timing = "step 12 'Expect' took 1.0 s in attempt 1 and 0.1 s in attempt 2";
    let console = "attempt 1 had console errors that attempt 2 did not: \"Uncaught TypeError: x\"";
    let network =
        "attempt 1 had network failures that attempt 2 did not: \"net::ERR_CONNECTION_REFUSED\"";
    let cases = [
        ("timing", vec![timing], "", true),
        ("timing", vec![console], "", false),
        ("console", vec![timing, console], "", true),
        ("network", vec![console], "", false),
        ("network", vec![network], "", true),
        ("screen", vec![timing], "A form with a Save button.", false),
        (
            "screen",
            vec![timing],
            "A Cookie banner covers the form.",
            true,
        ),
    ];
    for (kind, differences, screen, named) in cases {
        let mut outcome = Outcome::default();
        read_flaky(
            &flaky_item(kind, 9),
            &compared(&differences, screen),
            &mut outcome,
        );
        let f = outcome.flaky.unwrap();
        assert_eq!(f.kind_named, named, "{kind}: {differences:?} {screen}");
        assert!(f.parted_at_right());
    }
    // A label that says they parted elsewhere scores the answer wrong.
    let mut outcome = Outcome::default();
    read_flaky(
        &flaky_item("timing", 12),
        &compared(&[timing], ""),
        &mut outcome,
    );
    let s = score(&[outcome]);
    assert_eq!((s.flaky.parted_at.hits, s.flaky.parted_at.total), (0, 1));
    assert_eq!((s.flaky.kind_named.hits, s.flaky.items), (1, 1));
}

#[test]
fn a_step_is_read_from_how_results_name_it() {
    assert_eq!(
        step_number("step 12 'Expect \"toHaveText\"', 00:03.0"),
        Some(12)
    );
    assert_eq!(step_number("hook 'beforeEach hook', 00:00.1"), None);
}
