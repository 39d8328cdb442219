//! The integration tests, one binary of modules by command (as ripgrep's
//! `tests/tests.rs`), with the concerns that cross every command beside them:
//! hostile input and the engine's faults under supervision. Every `mge` a test
//! starts has a deadline (`crate::common::mge`). Expected values come from MegEngine
//! (`fixtures/`), never from `mge` itself.

mod common;

mod check;
mod ci_reports;
mod compare;
mod cuda;
mod docs;
mod dump;
mod hostile;
mod info;
mod pack_testcases;
mod profile;
mod reduce;
mod reports;
mod repro;
mod run;
mod runtime;
mod supervision;
mod tune;
mod zoo;
