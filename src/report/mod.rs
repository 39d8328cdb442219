//! Presentation: tables, progress and files written for people and machines.

pub mod file;
pub mod progress;
pub mod run;
pub mod table;
