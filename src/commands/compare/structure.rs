//! `mge compare A.mge B.mge --structure`: the two models' graphs compared
//! from their files (`model::diff`), no engine; and the same diff for the
//! reports of two runs and of two folders.

use std::path::Path;
use std::time::Instant;

use anyhow::{Context, Result};

use crate::commands::CheckFailed;
use crate::input_files;
use crate::model::diff::{diff_files, StructureDiff};
use crate::model::ModelFile;
use crate::report::print;
use crate::report::structure::StructureReport;

/// How the graphs of models `a` and `b` differ.
pub fn structure_of([a, b]: [&Path; 2]) -> Result<StructureDiff> {
    let read =
        |path: &Path| ModelFile::read(path, None).with_context(|| format!("the structure of {}", path.display()));
    diff_files(&read(a)?, &read(b)?)
}

/// `--structure`: the report, and exit 1 when the graphs differ.
pub fn compare_structures(models: [&Path; 2], json: bool) -> Result<()> {
    let started = Instant::now();
    for model in models {
        input_files::claim(model)?;
    }
    let structure = structure_of(models)?;
    let same = structure.same();
    let report = StructureReport {
        a: models[0].display().to_string(),
        b: models[1].display().to_string(),
        structure,
        seconds: started.elapsed().as_secs_f64(),
    };
    print(&report, json)?;
    match same {
        true => Ok(()),
        false => Err(CheckFailed("the graphs differ".into()).into()),
    }
}
