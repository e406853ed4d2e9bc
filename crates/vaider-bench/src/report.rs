//! Statistics and the markdown report.

use std::fmt::Write as _;
use std::time::Duration;

/// Median and 95th percentile (nearest rank) of a sample, and its extremes.
#[derive(Debug, Clone, Copy)]
pub struct Spread {
    pub min: Duration,
    pub median: Duration,
    pub p95: Duration,
    pub max: Duration,
}

impl Spread {
    pub fn of(values: &[Duration]) -> Spread {
        let mut sorted = values.to_vec();
        sorted.sort();
        let rank = |q: f64| {
            let i = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
            sorted.get(i - 1).copied().unwrap_or_default()
        };
        Spread {
            min: sorted.first().copied().unwrap_or_default(),
            median: rank(0.5),
            p95: rank(0.95),
            max: sorted.last().copied().unwrap_or_default(),
        }
    }
}

pub fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1000.0)
}

pub fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

/// KiB (as /proc reports) → "12.3 MB" in decimal megabytes, the unit of the targets.
pub fn mb(kib: u64) -> String {
    format!("{:.1} MB", kib_to_mb(kib))
}

pub fn kib_to_mb(kib: u64) -> f64 {
    kib as f64 * 1024.0 / 1e6
}

pub fn verdict(pass: bool) -> &'static str {
    if pass {
        "PASS"
    } else {
        "MISS"
    }
}

/// A markdown table under construction.
pub struct Table {
    out: String,
}

impl Table {
    pub fn new(headers: &[&str]) -> Table {
        let mut out = String::new();
        let _ = writeln!(out, "| {} |", headers.join(" | "));
        let _ = writeln!(
            out,
            "|{}",
            headers.iter().map(|_| "---|").collect::<String>()
        );
        Table { out }
    }

    pub fn row(&mut self, cells: &[&str]) {
        let _ = writeln!(self.out, "| {} |", cells.join(" | "));
    }

    pub fn finish(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank() {
        let values: Vec<Duration> = (1..=20).map(Duration::from_millis).collect();
        let s = Spread::of(&values);
        assert_eq!(s.median, Duration::from_millis(10));
        assert_eq!(s.p95, Duration::from_millis(19));
        assert_eq!(s.max, Duration::from_millis(20));
        assert_eq!(Spread::of(&[]).median, Duration::ZERO);
    }
}
