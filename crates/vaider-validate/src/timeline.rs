//! A test's steps and screencast frames on its video's clock, read from its `trace.zip`
//! (docs/validation.md, "The test's timeline"). The test runner's `test.trace` records every
//! `test.step`, Playwright action, `expect`, hook and fixture as before/after events; the
//! library's `N-trace.trace` files hold the screencast frames. Playwright's video places each
//! frame at the time Chromium showed it (`frameSwapWallTime`, wall clock) and starts at the
//! page's first frame; so does the timeline. The steps are on Playwright's monotonic clock,
//! put on the wall clock by their file's `context-options` (which pairs the two). Not the
//! frames' monotonic `timestamp`: that is when a frame reached Playwright, up to 0.3 s late
//! on a busy machine for the first frame, which would shift every time. Measured on
//! Playwright 1.65 (tests/timeline.rs checks it against a real recording): a step's colour
//! change shows in the video within one 40 ms frame. Everything is read through
//! [`crate::trace_zip`], line by line.

use std::collections::HashMap;
use std::path::Path;

use serde::Serialize;
use serde_json::Value;

use crate::trace_zip::TraceZipError;

mod events;

/// Steps kept, at most: a long test has a few thousand; the rest of a hostile trace is dropped.
const MAX_STEPS: usize = 20_000;

/// What a step is, by the `method` Playwright gives it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StepKind {
    /// A `test.step` block.
    Step,
    /// A Playwright API call (`Click`, `Fill`, `Evaluate`, ...).
    Action,
    /// An `expect` assertion.
    Expect,
    /// `Before Hooks`, `beforeEach hook`, `After Hooks`, `Worker Cleanup`.
    Hook,
    /// A fixture's setup or teardown (`Fixture "page"`).
    Fixture,
    /// `test.attach` / `testInfo.attach`.
    Attach,
    Other,
}

impl StepKind {
    fn from_method(method: &str) -> StepKind {
        match method {
            "test.step" => StepKind::Step,
            "pw:api" => StepKind::Action,
            "expect" => StepKind::Expect,
            "hook" => StepKind::Hook,
            "fixture" => StepKind::Fixture,
            "test.attach" => StepKind::Attach,
            _ => StepKind::Other,
        }
    }

    fn word(self) -> &'static str {
        match self {
            StepKind::Step => "step",
            StepKind::Action => "action",
            StepKind::Expect => "expect",
            StepKind::Hook => "hook",
            StepKind::Fixture => "fixture",
            StepKind::Attach => "attachment",
            StepKind::Other => "call",
        }
    }
}

/// One `test.step` block, action, expect, hook or fixture.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Step {
    /// 1-based, in start order, among the test's own steps; None for `setup` ones.
    pub number: Option<usize>,
    /// As Playwright shows it: `add the chair`, `Click locator('#b')`.
    pub title: String,
    pub kind: StepKind,
    /// 0 for a step at the test's top level.
    pub depth: usize,
    /// The enclosing step's index in [`Timeline::steps`].
    pub parent: Option<usize>,
    /// Not the test's own code path: a hook, a fixture, anything inside one, and what
    /// Playwright does once the body ended (its attachments). A caller may leave them out.
    pub setup: bool,
    /// Seconds on the video's clock ([`Timeline::clock`]); times before the video began are 0.
    pub start: Option<f64>,
    /// None when the trace has no end for it (the run was cut short).
    pub end: Option<f64>,
    /// Its error, colours removed, without Playwright's call log, cut to 200 characters.
    pub error: Option<String>,
}

/// One screencast frame.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Frame {
    /// Seconds on the video's clock.
    pub time: f64,
    /// The JPEG's entry in the trace.zip (`screencast/page@...jpeg`, or `resources/<sha1>`).
    pub entry: String,
    pub width: u32,
    pub height: u32,
    /// 0 for the test's first page (the one whose video the clock follows), 1 for the next
    /// page it opened, ...
    pub page: usize,
}

/// Where time 0 is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Clock {
    /// The first screencast frame of the test's first page: where its video starts. Frames
    /// are placed by when Chromium showed them, as in Playwright's video.
    Video,
    /// The same origin, for a trace without the frames' swap times or the files' wall
    /// clock (before Playwright 1.5x): by when each frame reached Playwright.
    VideoArrival,
    /// The page's creation (it sent no frame): about where a video would have started.
    PageCreated,
    /// The test's start (it opened no page).
    TestStart,
}

/// A test's steps and frames, on one clock.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Timeline {
    pub steps: Vec<Step>,
    /// Every page's frames, in time order.
    pub frames: Vec<Frame>,
    pub clock: Clock,
}

/// The step a failure belongs to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Failing<'a> {
    /// The innermost step with an error (the `expect` that timed out, the action that threw).
    pub step: &'a Step,
    /// The `test.step` block around it, if any.
    pub within: Option<&'a Step>,
}

/// Reads `trace_zip`'s timeline within the limits of [`crate::trace_zip`].
pub fn read_timeline(trace_zip: &Path) -> Result<Timeline, TraceZipError> {
    let raw = events::read(trace_zip)?;
    Ok(raw.place())
}

impl Timeline {
    /// The innermost failed step (the first, in start order, if several failed).
    pub fn failing_step(&self) -> Option<Failing<'_>> {
        let mut failing_child = vec![false; self.steps.len()];
        for step in self.steps.iter().filter(|s| s.error.is_some()) {
            if let Some(parent) = step.parent {
                failing_child[parent] = true;
            }
        }
        let at =
            (0..self.steps.len()).find(|&i| self.steps[i].error.is_some() && !failing_child[i])?;
        let step = &self.steps[at];
        Some(Failing {
            step,
            within: self.ancestors(at).find(|s| s.kind == StepKind::Step),
        })
    }

    /// The steps around `index`, innermost first.
    fn ancestors(&self, index: usize) -> impl Iterator<Item = &Step> {
        std::iter::successors(self.steps[index].parent, |&i| self.steps[i].parent)
            .map(|i| &self.steps[i])
    }

    /// Only the first page's frames: those its video (or a screencast made of them) shows.
    pub fn video_frames(&self) -> impl Iterator<Item = &Frame> {
        self.frames.iter().filter(|f| f.page == 0)
    }

    /// The test's own steps, one a line, indented by depth, with their times and errors:
    /// `3. 00:02.0–00:03.1 step 'paint blue' — failed: ...`.
    pub fn step_list(&self) -> String {
        let mut list = String::new();
        for step in self.steps.iter().filter(|s| !s.setup) {
            let indent = "  ".repeat(step.depth.min(8));
            let number = step.number.unwrap_or_default();
            let span = match (step.start, step.end) {
                (Some(start), Some(end)) => format!("{}–{}", clock(start), clock(end)),
                (Some(start), None) => format!("{}–(no end)", clock(start)),
                _ => "(no time)".to_string(),
            };
            let title = &step.title;
            let kind = step.kind.word();
            list.push_str(&format!("{indent}{number}. {span} {kind} '{title}'"));
            if let Some(error) = &step.error {
                list.push_str(&format!(" — failed: {}", error.replace('\n', " ")));
            }
            list.push('\n');
        }
        list
    }
}

/// How descriptions name a step: `step 3 'add the chair', 00:04.2`; a hook or fixture by its
/// kind (`hook 'beforeEach hook', 00:00.1`); without a time when the trace has none.
pub fn name_step(step: &Step) -> String {
    let head = match step.number {
        Some(n) => format!("step {n} '{}'", step.title),
        None => format!("{} '{}'", step.kind.word(), step.title),
    };
    match step.start {
        Some(start) => format!("{head}, {}", clock(start)),
        None => head,
    }
}

/// Seconds as `mm:ss.d` (`00:04.2`), to the nearest tenth.
pub fn clock(seconds: f64) -> String {
    let tenths = (seconds.max(0.0) * 10.0).round() as u64;
    let (minutes, rest) = (tenths / 600, tenths % 600);
    format!("{minutes:02}:{:02}.{}", rest / 10, rest % 10)
}

/// A raw step, on Playwright's monotonic clock, before it is placed.
#[derive(Debug, Default)]
struct RawStep {
    parent_call: Option<String>,
    title: String,
    kind: Option<StepKind>,
    start_ms: Option<f64>,
    end_ms: Option<f64>,
    error: Option<String>,
}

/// A raw screencast frame.
#[derive(Debug)]
struct RawFrame {
    /// When it reached Playwright (monotonic ms).
    mono: f64,
    /// When Chromium showed it (wall ms): what Playwright's video places it by.
    swap_wall: Option<f64>,
    entry: String,
    width: u32,
    height: u32,
    page: String,
}

/// What the event files said, before the clock is chosen.
#[derive(Debug, Default)]
struct Raw {
    steps: Vec<RawStep>,
    by_call: HashMap<String, usize>,
    /// Wall ms minus monotonic ms in the file the steps came from.
    steps_wall_offset: Option<f64>,
    frames: Vec<RawFrame>,
    /// (monotonic ms, page id) of each page's creation.
    pages: Vec<(f64, String)>,
    /// The test runner's start (test.trace's `context-options`).
    test_start_ms: Option<f64>,
}

impl Raw {
    /// Chooses the clock and places every step and frame on it.
    fn place(mut self) -> Timeline {
        let order = self.page_order();
        let index: HashMap<&str, usize> = order
            .iter()
            .enumerate()
            .map(|(i, p)| (p.as_str(), i))
            .collect();
        let page_of = |id: &str| index.get(id).copied().unwrap_or(order.len());
        // On the wall clock when the steps' file pairs its clocks and the page's first frame
        // has its swap time, as Playwright's video does; else on the monotonic clock.
        let first = self.frames.iter().filter(|f| page_of(&f.page) == 0);
        let first_swap = first
            .clone()
            .filter_map(|f| f.swap_wall)
            .min_by(f64::total_cmp);
        let first_mono = first.map(|f| f.mono).min_by(f64::total_cmp);
        let offset = self.steps_wall_offset.filter(|_| first_swap.is_some());
        let frame_ms = |f: &RawFrame| match offset {
            Some(offset) => f.swap_wall.unwrap_or(f.mono + offset),
            None => f.mono,
        };
        self.frames
            .sort_by(|a, b| frame_ms(a).total_cmp(&frame_ms(b)));
        let first_page = self.pages.iter().map(|p| p.0).min_by(f64::total_cmp);
        let (clock, origin) = match (first_swap.zip(offset), first_mono, first_page) {
            (Some((swap, offset)), ..) => (Clock::Video, swap - offset),
            (None, Some(ms), _) => (Clock::VideoArrival, ms),
            (None, None, Some(ms)) => (Clock::PageCreated, ms),
            (None, None, None) => (Clock::TestStart, self.test_start().unwrap_or(0.0)),
        };
        // Every time as monotonic ms of the steps' file, less the origin.
        let at = |ms: f64| ((ms - origin) / 1000.0).max(0.0);
        let frames = self
            .frames
            .iter()
            .map(|f| Frame {
                time: at(frame_ms(f) - offset.unwrap_or(0.0)),
                entry: f.entry.clone(),
                width: f.width,
                height: f.height,
                page: page_of(&f.page),
            })
            .collect();
        Timeline {
            steps: self.placed_steps(at),
            frames,
            clock,
        }
    }

    /// Page ids by creation (a page with frames but no creation event comes after).
    fn page_order(&self) -> Vec<String> {
        let mut pages = self.pages.clone();
        pages.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut order: Vec<String> = Vec::new();
        let mut known = std::collections::HashSet::new();
        let seen = pages
            .iter()
            .map(|p| &p.1)
            .chain(self.frames.iter().map(|f| &f.page));
        for id in seen {
            if known.insert(id) {
                order.push(id.clone());
            }
        }
        order
    }

    fn test_start(&self) -> Option<f64> {
        self.test_start_ms.or_else(|| {
            self.steps
                .iter()
                .filter_map(|s| s.start_ms)
                .min_by(f64::total_cmp)
        })
    }

    /// Links parents, marks setup steps, numbers the others.
    fn placed_steps(&self, at: impl Fn(f64) -> f64) -> Vec<Step> {
        let mut steps: Vec<Step> = Vec::with_capacity(self.steps.len());
        // Once the body began, a top-level hook is the end of it: what follows is teardown.
        let (mut body_began, mut body_ended) = (false, false);
        let mut number = 0;
        for (index, raw) in self.steps.iter().enumerate() {
            let kind = raw.kind.unwrap_or(StepKind::Other);
            // A parent is always an earlier step: no cycle, whatever the trace says.
            let parent = raw
                .parent_call
                .as_ref()
                .and_then(|call| self.by_call.get(call).copied())
                .filter(|&p| p < index);
            let parent_step = parent.map(|p| &steps[p]);
            let hook_like = matches!(kind, StepKind::Hook | StepKind::Fixture);
            if parent.is_none() {
                body_ended |= body_began && hook_like;
                body_began |= !hook_like;
            }
            let setup = hook_like || body_ended || parent_step.is_some_and(|p| p.setup);
            if !setup {
                number += 1;
            }
            steps.push(Step {
                number: (!setup).then_some(number),
                title: raw.title.clone(),
                kind,
                depth: parent_step.map_or(0, |p| p.depth + 1),
                parent,
                setup,
                start: raw.start_ms.map(&at),
                end: raw.end_ms.map(&at),
                error: raw.error.clone(),
            });
        }
        steps
    }
}

/// An error's message as a step carries it: colours removed, Playwright's call log left
/// out (the step list says what was called), cut like every message.
fn error_message(error: &Value) -> Option<String> {
    let text = error["message"]
        .as_str()
        .or_else(|| error["error"]["message"].as_str())?;
    let text = crate::report::strip_ansi(text);
    let text = text
        .split("\n\nCall log:")
        .next()
        .unwrap_or_default()
        .trim();
    (!text.is_empty()).then(|| crate::trace::cut(text))
}

#[cfg(test)]
mod tests;
