//! What a run's outputs are held against after it: `run --expect`'s files
//! (`expect.rs`) and finite values (`finite.rs`, `--check-finite`).

pub mod expect;
pub mod finite;
