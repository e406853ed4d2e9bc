//! The shipped set holds what the issue asks of it: at least 40 recordings and 40 pairs, a
//! third of controls, every defect class, and for every item its media, its expectations with
//! a truth, and (for a defect) where it is; a recording's defect time lies inside the video.
//! At least 10 failing runs and 5 flaky pairs, whose labelled steps are the steps Vaider's
//! timeline reads from their traces (same number, same title, the moment inside them).

use std::path::Path;

use vaider_eval::labels::{self, Kind, Truth, CLASSES};
use vaider_validate::recording::steps_of;
use vaider_validate::timeline::read_timeline;

fn set() -> Vec<labels::Item> {
    labels::load(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../eval/set")).unwrap()
}

#[test]
fn the_shipped_set_has_its_sizes_classes_and_controls() {
    let items = set();
    let count = |kind: Kind| items.iter().filter(|i| i.kind == kind).count();
    assert!(count(Kind::Recording) >= 40, "{}", count(Kind::Recording));
    assert!(count(Kind::Pair) >= 40, "{}", count(Kind::Pair));
    assert!(count(Kind::Failure) >= 10, "{}", count(Kind::Failure));
    assert!(count(Kind::Flaky) >= 5, "{}", count(Kind::Flaky));
    let defect_items = items.iter().filter(|i| i.kind.is_defect_item()).count();
    let controls = items.iter().filter(|i| i.is_control()).count();
    assert!(
        controls * 100 >= defect_items * 30,
        "{controls} of {defect_items}"
    );
    for class in CLASSES {
        assert!(
            items.iter().any(|i| i.classes.iter().any(|c| c == class)),
            "no item of {class}"
        );
    }
}

#[test]
fn every_item_has_its_media_expectations_and_place() {
    for item in set().into_iter().filter(|i| i.kind.is_defect_item()) {
        let media = match item.kind {
            Kind::Recording => vec![&item.media],
            _ => vec![&item.before, &item.after],
        };
        for name in media {
            assert!(item.path(name).unwrap().is_file(), "{}: {name:?}", item.id);
        }
        if item.is_control() {
            assert!(
                item.expectations.iter().all(|e| e.truth == Truth::Met),
                "{}",
                item.id
            );
            continue;
        }
        let place = item
            .place
            .clone()
            .unwrap_or_else(|| panic!("{}: no place", item.id));
        assert!(place.region.is_some(), "{}", item.id);
        if item.kind == Kind::Recording {
            let time = place.time.unwrap();
            let end = item.duration_s.unwrap();
            assert!(
                0.0 < time.start_s && time.start_s <= time.end_s && time.end_s <= end + 0.1,
                "{}: {time:?}",
                item.id
            );
            assert!(item.expectations.len() >= 4, "{}", item.id);
        }
    }
}

/// A step as Vaider's timeline reads it: number, title, start and end.
type Step = (u64, String, f64, f64);

/// The steps of a trace as Vaider numbers them, and the failing one.
fn steps_in(trace: &Path) -> (Vec<Step>, Option<u64>) {
    let timeline = read_timeline(trace).unwrap_or_else(|e| panic!("{}: {e}", trace.display()));
    let (steps, failing) = steps_of(&timeline);
    let steps = steps
        .into_iter()
        .map(|s| {
            (
                s.number as u64,
                s.title,
                s.start,
                s.end.unwrap_or(f64::INFINITY),
            )
        })
        .collect();
    (steps, failing.map(|n| n as u64))
}

#[test]
fn a_failing_runs_labelled_steps_are_the_steps_its_trace_holds() {
    let runs: Vec<_> = set()
        .into_iter()
        .filter(|i| i.kind == Kind::Failure)
        .collect();
    assert!(runs.len() >= 10);
    for item in runs {
        let label = item.failure.clone().unwrap();
        assert!(item.path(&item.media).unwrap().is_file(), "{}", item.id);
        let (steps, failing) = steps_in(&item.path(&item.trace).unwrap());
        let find = |n: u64| steps.iter().find(|s| s.0 == n).cloned();
        assert_eq!(failing, Some(label.failing_step.number), "{}", item.id);
        let named = find(label.failing_step.number).unwrap();
        assert_eq!(named.1, label.failing_step.title, "{}", item.id);
        // The first wrong moment lies in every step labelled as running then (within a
        // frame: the labels and the timeline read the same clock by different routes).
        let at = label.first_wrong.at_s;
        assert!(!label.first_wrong.running.is_empty(), "{}", item.id);
        for running in &label.first_wrong.running {
            let (_, title, start, end) = find(running.number).unwrap();
            assert_eq!(title, running.title, "{}", item.id);
            assert!(
                start - 0.05 <= at && at <= end + 0.05,
                "{}: {at} s is outside step {} ({start}-{end})",
                item.id,
                running.number
            );
        }
        // The defect shows before or at the failure, never after it.
        assert!(at <= named.3 + 0.05, "{}: {at} after the failure", item.id);
        assert!(
            !label.cause.is_empty() && item.error.is_some(),
            "{}",
            item.id
        );
    }
}

#[test]
fn a_flaky_pair_failed_once_where_its_labels_say_and_passed_on_retry() {
    let pairs: Vec<_> = set()
        .into_iter()
        .filter(|i| i.kind == Kind::Flaky)
        .collect();
    assert!(pairs.len() >= 5);
    let kinds: Vec<String> = pairs
        .iter()
        .map(|p| p.flaky.clone().unwrap().kind)
        .collect();
    for kind in ["timing", "console", "network", "screen"] {
        assert!(
            kinds.iter().any(|k| k == kind),
            "no flaky pair of kind {kind}"
        );
    }
    for item in pairs {
        let label = item.flaky.clone().unwrap();
        assert_eq!(item.attempts.len(), 2, "{}", item.id);
        for attempt in &item.attempts {
            assert!(item.dir.join(&attempt.video).is_file(), "{}", item.id);
        }
        let (steps, failing) = steps_in(&item.dir.join(&item.attempts[0].trace));
        assert_eq!(failing, Some(label.parted_at.number), "{}", item.id);
        let parted = steps
            .iter()
            .find(|s| s.0 == label.parted_at.number)
            .unwrap();
        assert_eq!(parted.1, label.parted_at.title, "{}", item.id);
        let (_, passed) = steps_in(&item.dir.join(&item.attempts[1].trace));
        assert_eq!(passed, None, "{}: the retry failed too", item.id);
    }
}
