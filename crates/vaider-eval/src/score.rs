//! The scorer: from each item's labels and what the tool answered to the run's numbers.
//! Detection is scored as a balanced accuracy (the mean of recall on defects and specificity
//! on controls), so an answerer that always says "defect" scores 0.5, not the share of
//! defects; classes get recall, precision and F1; expectations get the share of verdicts
//! that match the truth (an unclear verdict is wrong); localisation the share of labelled
//! defects whose time or region the answer hit. Failing runs are scored as steps named right
//! (the failing step, the step running at the first wrong moment) and that moment named
//! within half a second; flaky pairs as the step where the attempts parted named right and
//! the labelled kind of difference named.

use serde::{Deserialize, Serialize};

use crate::labels::{Kind, Truth, CLASSES};

/// One item's labels beside what the tool answered, as the report keeps it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub id: String,
    pub kind: Option<Kind>,
    /// The labelled classes (empty: a control).
    pub classes: Vec<String>,
    /// Whether the tool said something is wrong.
    pub flagged: bool,
    /// The classes the tool named (`unknown` when it flagged without naming one).
    pub predicted: Vec<String>,
    pub verdicts: Vec<VerdictOutcome>,
    /// Whether the answer hit the labelled time or region; none for a control or a label
    /// without a place.
    pub localised: Option<bool>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub latency_ms: u64,
    pub cached: bool,
    /// Set when the tool failed on the item: it is left out of the scores.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The tool's answer, shortened, to read why it scored as it did.
    #[serde(default)]
    pub answer: String,
    /// A failing run's steps and moment, labelled and named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureOutcome>,
    /// A flaky pair's parting step and kind of difference, labelled and named.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flaky: Option<FlakyOutcome>,
}

impl Outcome {
    /// A recording or a pair (or an older report's item, which has no other kind).
    fn is_defect_item(&self) -> bool {
        self.kind.is_none_or(|k| k.is_defect_item())
    }
}

/// How close a named moment must be to the labelled one, in seconds.
pub const MOMENT_TOLERANCE_S: f64 = 0.5;

/// A failing run: what its labels say beside what the tool named.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FailureOutcome {
    /// The labelled failing step's number, and the one named.
    pub failing_step: u64,
    pub failing_step_named: Option<u64>,
    /// The steps running at the labelled first wrong moment (any is right), and the one named.
    pub first_wrong_steps: Vec<u64>,
    pub first_wrong_step_named: Option<u64>,
    /// The labelled first wrong moment, and the one named (seconds on the video's clock).
    pub first_wrong_at: f64,
    pub first_wrong_at_named: Option<f64>,
    /// The stretch of the video the model watched.
    pub watched: (f64, f64),
    /// The cause, labelled and as the model said it.
    pub cause: String,
    pub cause_named: String,
}

impl FailureOutcome {
    pub fn failing_step_right(&self) -> bool {
        self.failing_step_named == Some(self.failing_step)
    }

    pub fn first_wrong_step_right(&self) -> bool {
        self.first_wrong_step_named
            .is_some_and(|n| self.first_wrong_steps.contains(&n))
    }

    /// Whether the labelled first wrong moment lay in the stretch the model watched (it
    /// cannot see a moment outside it).
    pub fn moment_watched(&self) -> bool {
        let (from, to) = self.watched;
        from - 1e-9 <= self.first_wrong_at && self.first_wrong_at <= to + 1e-9
    }

    pub fn moment_right(&self) -> bool {
        self.first_wrong_at_named
            .is_some_and(|at| (at - self.first_wrong_at).abs() <= MOMENT_TOLERANCE_S + 1e-9)
    }
}

/// A flaky pair: what its labels say beside what the comparison named.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FlakyOutcome {
    pub parted_at: u64,
    pub parted_at_named: Option<u64>,
    /// The labelled kind of difference (timing, console, network, screen) and whether the
    /// comparison named a difference of that kind.
    pub kind: String,
    pub kind_named: bool,
    pub differences: Vec<String>,
}

impl FlakyOutcome {
    pub fn parted_at_right(&self) -> bool {
        self.parted_at_named == Some(self.parted_at)
    }
}

/// The failing runs' scores.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FailureScores {
    pub items: u64,
    /// The step that failed, named right.
    pub failing_step: Ratio,
    /// The step running at the first wrong moment, named right.
    pub first_wrong_step: Ratio,
    /// The first wrong moment named within [`MOMENT_TOLERANCE_S`].
    pub moment: Ratio,
    /// The labelled first wrong moment lay in the stretch the model watched.
    #[serde(default)]
    pub moment_watched: Ratio,
    pub cost_usd: f64,
}

/// The flaky pairs' scores.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FlakyScores {
    pub items: u64,
    /// The step where the attempts parted, named right.
    pub parted_at: Ratio,
    /// The labelled kind of difference, named.
    pub kind_named: Ratio,
    pub cost_usd: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VerdictOutcome {
    pub expectation: String,
    pub truth: Truth,
    /// The tool's verdict; none when it was unclear or missing.
    pub answer: Option<Truth>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassScore {
    pub class: String,
    pub support: u64,
    pub tp: u64,
    pub fp: u64,
    #[serde(rename = "fn")]
    pub fn_: u64,
    pub precision: Option<f64>,
    pub recall: Option<f64>,
    pub f1: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Detection {
    pub tp: u64,
    pub fp: u64,
    pub tn: u64,
    #[serde(rename = "fn")]
    pub fn_: u64,
    pub recall: Option<f64>,
    pub specificity: Option<f64>,
    pub balanced_accuracy: Option<f64>,
    pub accuracy: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Ratio {
    pub hits: u64,
    pub total: u64,
    pub rate: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Spend {
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost_usd: f64,
    pub mean_input_tokens: Option<f64>,
    pub mean_cost_usd: Option<f64>,
    pub mean_latency_ms: Option<f64>,
    pub cached: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Scores {
    pub items: u64,
    pub errors: u64,
    pub detection: Detection,
    pub classes: Vec<ClassScore>,
    pub verdicts: Ratio,
    pub localisation: Ratio,
    /// Over every item scored, failing runs and flaky pairs included.
    pub spend: Spend,
    #[serde(default)]
    pub failures: FailureScores,
    #[serde(default)]
    pub flaky: FlakyScores,
}

fn share(hits: usize, total: usize) -> Ratio {
    Ratio {
        hits: hits as u64,
        total: total as u64,
        rate: ratio(hits as u64, total as u64),
    }
}

/// The failing runs' scores, from the outcomes that have one.
pub fn failure_scores(scored: &[&Outcome]) -> FailureScores {
    let runs: Vec<(&Outcome, &FailureOutcome)> = scored
        .iter()
        .filter_map(|o| Some((*o, o.failure.as_ref()?)))
        .collect();
    let count = |f: &dyn Fn(&FailureOutcome) -> bool| runs.iter().filter(|(_, r)| f(r)).count();
    FailureScores {
        items: runs.len() as u64,
        failing_step: share(count(&FailureOutcome::failing_step_right), runs.len()),
        first_wrong_step: share(count(&FailureOutcome::first_wrong_step_right), runs.len()),
        moment: share(count(&FailureOutcome::moment_right), runs.len()),
        moment_watched: share(count(&FailureOutcome::moment_watched), runs.len()),
        cost_usd: runs.iter().map(|(o, _)| o.cost_usd).sum(),
    }
}

/// The flaky pairs' scores, from the outcomes that have one.
pub fn flaky_scores(scored: &[&Outcome]) -> FlakyScores {
    let pairs: Vec<(&Outcome, &FlakyOutcome)> = scored
        .iter()
        .filter_map(|o| Some((*o, o.flaky.as_ref()?)))
        .collect();
    let parted = pairs.iter().filter(|(_, p)| p.parted_at_right()).count();
    let named = pairs.iter().filter(|(_, p)| p.kind_named).count();
    FlakyScores {
        items: pairs.len() as u64,
        parted_at: share(parted, pairs.len()),
        kind_named: share(named, pairs.len()),
        cost_usd: pairs.iter().map(|(o, _)| o.cost_usd).sum(),
    }
}

fn ratio(num: u64, den: u64) -> Option<f64> {
    (den > 0).then(|| num as f64 / den as f64)
}

/// F1 as 2TP / (2TP + FP + FN): the harmonic mean of precision and recall, and 0 (not
/// undefined) for a class that was missed every time and never guessed.
fn f1(tp: u64, fp: u64, fn_: u64) -> Option<f64> {
    ratio(2 * tp, 2 * tp + fp + fn_)
}

pub fn detection(tp: u64, fp: u64, tn: u64, fn_: u64) -> Detection {
    let recall = ratio(tp, tp + fn_);
    let specificity = ratio(tn, tn + fp);
    Detection {
        tp,
        fp,
        tn,
        fn_,
        recall,
        specificity,
        balanced_accuracy: match (recall, specificity) {
            (Some(r), Some(s)) => Some((r + s) / 2.0),
            _ => None,
        },
        accuracy: ratio(tp + tn, tp + fp + tn + fn_),
    }
}

pub fn class_score(class: &str, tp: u64, fp: u64, fn_: u64) -> ClassScore {
    let precision = ratio(tp, tp + fp);
    let recall = ratio(tp, tp + fn_);
    ClassScore {
        class: class.to_string(),
        support: tp + fn_,
        tp,
        fp,
        fn_,
        precision,
        recall,
        f1: f1(tp, fp, fn_),
    }
}

/// The run's scores; items that failed count in `errors` only. Detection, classes, verdicts
/// and localisation are the recordings' and pairs'.
pub fn score(outcomes: &[Outcome]) -> Scores {
    let all: Vec<&Outcome> = outcomes.iter().filter(|o| o.error.is_none()).collect();
    let scored: Vec<&Outcome> = all.iter().copied().filter(|o| o.is_defect_item()).collect();
    let (mut tp, mut fp, mut tn, mut fn_) = (0, 0, 0, 0);
    for o in &scored {
        match (!o.classes.is_empty(), o.flagged) {
            (true, true) => tp += 1,
            (false, true) => fp += 1,
            (false, false) => tn += 1,
            (true, false) => fn_ += 1,
        }
    }
    let classes = CLASSES
        .iter()
        .map(|class| {
            let has = |list: &Vec<String>| list.iter().any(|c| c == class);
            let count =
                |f: &dyn Fn(&Outcome) -> bool| scored.iter().filter(|o| f(o)).count() as u64;
            class_score(
                class,
                count(&|o| has(&o.classes) && has(&o.predicted)),
                count(&|o| !has(&o.classes) && has(&o.predicted)),
                count(&|o| has(&o.classes) && !has(&o.predicted)),
            )
        })
        .collect();
    let verdicts: Vec<&VerdictOutcome> = scored.iter().flat_map(|o| &o.verdicts).collect();
    let right = verdicts
        .iter()
        .filter(|v| v.answer == Some(v.truth))
        .count() as u64;
    let placed: Vec<bool> = scored.iter().filter_map(|o| o.localised).collect();
    let hits = placed.iter().filter(|hit| **hit).count() as u64;
    Scores {
        items: all.len() as u64,
        errors: (outcomes.len() - all.len()) as u64,
        detection: detection(tp, fp, tn, fn_),
        classes,
        verdicts: Ratio {
            hits: right,
            total: verdicts.len() as u64,
            rate: ratio(right, verdicts.len() as u64),
        },
        localisation: Ratio {
            hits,
            total: placed.len() as u64,
            rate: ratio(hits, placed.len() as u64),
        },
        spend: spend(&all),
        failures: failure_scores(&all),
        flaky: flaky_scores(&all),
    }
}

fn spend(scored: &[&Outcome]) -> Spend {
    let n = scored.len() as f64;
    let mean = |total: f64| (n > 0.0).then(|| total / n);
    let input: u64 = scored.iter().map(|o| o.input_tokens).sum();
    let cost: f64 = scored.iter().map(|o| o.cost_usd).sum();
    let latency: u64 = scored.iter().map(|o| o.latency_ms).sum();
    Spend {
        input_tokens: input,
        output_tokens: scored.iter().map(|o| o.output_tokens).sum(),
        cost_usd: cost,
        mean_input_tokens: mean(input as f64),
        mean_cost_usd: mean(cost),
        mean_latency_ms: mean(latency as f64),
        cached: scored.iter().filter(|o| o.cached).count() as u64,
    }
}
