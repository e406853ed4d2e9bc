//! A small deterministic generator for tests that draw pictures, so every run draws the same
//! ones (a failure can be reproduced) without a dependency on a random-number crate.

/// Knuth's MMIX linear congruential generator, seeded by the test.
pub struct Lcg(pub u64);

impl Lcg {
    /// The next 31 bits.
    pub fn next_u32(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u32) -> u32 {
        self.next_u32() % n.max(1)
    }

    /// A byte.
    pub fn byte(&mut self) -> u8 {
        self.below(256) as u8
    }
}
