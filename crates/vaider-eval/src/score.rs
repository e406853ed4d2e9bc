//! The scorer: from each item's labels and what the tool answered to the run's numbers.
//! Detection is scored as a balanced accuracy (the mean of recall on defects and specificity
//! on controls), so an answerer that always says "defect" scores 0.5, not the share of
//! defects; classes get recall, precision and F1; expectations get the share of verdicts
//! that match the truth (an unclear verdict is wrong); localisation the share of labelled
//! defects whose time or region the answer hit.

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
    pub spend: Spend,
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

/// The run's scores; items that failed count in `errors` only.
pub fn score(outcomes: &[Outcome]) -> Scores {
    let scored: Vec<&Outcome> = outcomes.iter().filter(|o| o.error.is_none()).collect();
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
        items: scored.len() as u64,
        errors: (outcomes.len() - scored.len()) as u64,
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
        spend: spend(&scored),
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
