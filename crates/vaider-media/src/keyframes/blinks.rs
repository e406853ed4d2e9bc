//! Small places that keep changing: a blinking text caret, a spinner. Each of their changes is
//! a real change of the screen (a 12 px spinner appearing must reach the model), but counted
//! one by one a caret blinking twice a second makes a recording look never still, and every
//! still stretch a burst. So changes that repeat at one small spot, each soon after the one
//! before, are one ongoing change:
//!
//! - a blink (the spot goes back to how it was before it started, then changes again: a
//!   caret, a blinking badge) adds no change at all, since the model already sees the spot
//!   as it was; only where it stops, if it does, is a change;
//! - anything else (a spinner, a small animation) is a change where it starts and one where
//!   it stops (if it does before the recording ends).
//!
//! A toast shown once, a text changed once or twice, stay changes of their own: a run needs
//! `MIN_CHANGES` changes to be ongoing.

use super::change::{self, Probe, Spot};

/// Changes at one spot, each at most this long after the one before, are one run. A caret
/// blinks every 0.5 to 0.6 s; a change elsewhere at the same sample can hide one blink.
const GAP_SECONDS: f64 = 1.3;
/// Changes in a run before it is an ongoing change (two blinks of a caret and more).
const MIN_CHANGES: usize = 5;

/// A small spot that kept changing, from its first change to its last.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ongoing {
    pub start: f64,
    pub end: f64,
    /// It went back to how it looked before it started (a caret), rather than moving on (a
    /// spinner).
    pub blinking: bool,
}

/// One change, as the scan found it.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// The sample it was found at.
    pub index: u64,
    /// Seconds into the video.
    pub at: f64,
    /// The share of the screen that changed (the first frame counts as the largest).
    pub share: f64,
    /// The changed part of the new screen has fine detail (text).
    pub detail: bool,
    /// It is not all small spots (or it is a pale change over an area, or the first frame),
    /// so no run of a blinking or spinning spot can leave it out when the scan ends.
    pub lasting: bool,
}

/// Changes at one small spot, in quick succession.
struct Run {
    spot: Spot,
    /// Indices of its changes in the scan's list.
    members: Vec<usize>,
    last_at: f64,
    /// The screen before its first change.
    before: Probe,
    /// Whether its latest change brought the spot back to `before`.
    last_returns: bool,
    /// Whether a change other than its latest did.
    returned: bool,
}

/// Follows the runs while the scan goes.
#[derive(Default)]
pub(super) struct Runs {
    runs: Vec<Run>,
    /// The changes made of small spots only (index, spots): the ones runs may leave out.
    whole: Vec<(usize, usize)>,
}

impl Runs {
    /// Notes change `index` (at `at`, over `spots`), the screen now and the screen before it.
    /// A change that is not all small spots (or a pale change over an area, which has none)
    /// can never be left out, but its small spots still carry their runs on (a caret blinks
    /// on while a panel opens).
    pub fn note(&mut self, index: usize, at: f64, spots: &[Spot], now: &Probe, before: &Probe) {
        if !spots.is_empty() && spots.iter().all(|s| s.is_small()) {
            self.whole.push((index, spots.len()));
        }
        for &spot in spots.iter().filter(|s| s.is_small()) {
            self.note_spot(index, at, spot, now, before);
        }
        // Runs long over hold a probe each for nothing.
        self.runs
            .retain(|run| run.members.len() >= MIN_CHANGES || at - run.last_at <= GAP_SECONDS);
    }

    fn note_spot(&mut self, index: usize, at: f64, spot: Spot, now: &Probe, before: &Probe) {
        let open = self.runs.iter_mut().rev().find(|run| {
            at - run.last_at <= GAP_SECONDS + 1e-6
                && run.spot.meets(spot)
                && run.spot.union(spot).is_small()
        });
        match open {
            Some(run) => {
                run.spot = run.spot.union(spot);
                run.members.push(index);
                run.last_at = at;
                run.returned |= run.last_returns;
                run.last_returns = change::same_within(&run.before, now, run.spot);
            }
            None => self.runs.push(Run {
                spot,
                members: vec![index],
                last_at: at,
                before: before.clone(),
                last_returns: false,
                returned: false,
            }),
        }
    }

    /// Removes from `changes` what the ongoing runs make redundant; `end` is the last
    /// sample's time. Returns the ongoing changes.
    pub fn collapse(self, changes: &mut Vec<Change>, end: f64) -> Vec<Ongoing> {
        // A change is left out when each of its spots is a repeat some ongoing run leaves out.
        let mut spots_left = vec![usize::MAX; changes.len()];
        for &(index, spots) in &self.whole {
            spots_left[index] = spots;
        }
        let mut ongoing = Vec::new();
        for run in self.runs.iter().filter(|r| r.members.len() >= MIN_CHANGES) {
            let blinking = run.returned;
            let stops = end - run.last_at > GAP_SECONDS;
            let (first, last) = (run.members[0], run.members[run.members.len() - 1]);
            for &member in &run.members {
                let keep = (member == first && !blinking) || (member == last && stops);
                if !keep {
                    spots_left[member] = spots_left[member].saturating_sub(1);
                }
            }
            ongoing.push(Ongoing {
                start: changes[first].at,
                end: if stops { changes[last].at } else { end },
                blinking,
            });
        }
        let mut index = 0;
        changes.retain(|_| {
            index += 1;
            spots_left[index - 1] != 0
        });
        ongoing.sort_by(|a, b| a.start.total_cmp(&b.start));
        ongoing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn probe(dark: &[(usize, usize)]) -> Probe {
        let mut planes = [
            vec![235u8; 160 * 90],
            vec![128; 160 * 90],
            vec![128; 160 * 90],
        ];
        for &(x, y) in dark {
            planes[0][y * 160 + x] = 40;
        }
        Probe {
            planes,
            width: 160,
            height: 90,
        }
    }

    fn spot(x: usize, y: usize) -> Spot {
        Spot {
            x0: x,
            y0: y,
            x1: x + 1,
            y1: y + 4,
        }
    }

    fn change(at: f64) -> Change {
        Change {
            index: (at * 4.0) as u64,
            at,
            share: 0.001,
            detail: false,
            lasting: false,
        }
    }

    /// Notes `count` changes at `spot`, every half second from `start`, alternating between
    /// `a` and `b` (a caret) or moving on (a spinner: `b` each time, never back to `a`).
    fn run(
        runs: &mut Runs,
        changes: &mut Vec<Change>,
        start: f64,
        count: usize,
        blinks: bool,
        a: &Probe,
        b: &Probe,
    ) {
        for k in 0..count {
            let at = start + 0.5 * k as f64;
            let (before, now) = if blinks && k % 2 == 1 { (b, a) } else { (a, b) };
            runs.note(changes.len(), at, &[spot(70, 40)], now, before);
            changes.push(change(at));
        }
    }

    #[test]
    fn a_caret_blinking_all_along_adds_no_change() {
        let (a, b) = (probe(&[]), probe(&[(70, 40)]));
        let mut runs = Runs::default();
        let mut changes = vec![change(0.0)];
        run(&mut runs, &mut changes, 0.5, 40, true, &a, &b);
        let ongoing = runs.collapse(&mut changes, 20.25);
        assert_eq!(changes, vec![change(0.0)]);
        assert_eq!(ongoing.len(), 1);
        assert!(ongoing[0].blinking);
    }

    #[test]
    fn a_spinner_is_a_change_where_it_starts_and_where_it_stops() {
        let (a, b) = (probe(&[]), probe(&[(70, 40)]));
        let mut runs = Runs::default();
        let mut changes = vec![change(0.0)];
        run(&mut runs, &mut changes, 3.0, 8, false, &a, &b);
        // A large change elsewhere meanwhile stays.
        let panel = Spot {
            x0: 0,
            y0: 0,
            x1: 50,
            y1: 50,
        };
        runs.note(changes.len(), 8.0, &[panel], &b, &a);
        changes.push(change(8.0));
        let ongoing = runs.collapse(&mut changes, 20.0);
        let times: Vec<f64> = changes.iter().map(|c| c.at).collect();
        assert_eq!(times, vec![0.0, 3.0, 6.5, 8.0]);
        assert_eq!(
            ongoing,
            vec![Ongoing {
                start: 3.0,
                end: 6.5,
                blinking: false
            }]
        );
    }

    #[test]
    fn a_toast_shown_once_or_twice_stays_its_own_changes() {
        let (a, b) = (probe(&[]), probe(&[(70, 40)]));
        let mut runs = Runs::default();
        let mut changes = vec![change(0.0)];
        run(&mut runs, &mut changes, 3.0, 4, true, &a, &b);
        assert!(runs.collapse(&mut changes, 20.0).is_empty());
        assert_eq!(changes.len(), 5);
    }
}
