//! `mge compare`: two sets of tensors, a row each, and for two io dumps the
//! first var where the runs part ways.

use anyhow::Result;

use super::CheckFailed;
use crate::cli::CompareArgs;
use crate::compare::sides::Side;
use crate::compare::{compare_sides, first_divergence, Tolerance};
use crate::model::DEFAULT_MAXERR;
use crate::report::compare::CompareReport;
use crate::report::print;

pub fn compare(args: CompareArgs) -> Result<()> {
    let tolerance = match (args.maxerr, args.atol, args.rtol) {
        (_, None, None) => Tolerance::AssertEqual {
            maxerr: args.maxerr.unwrap_or(DEFAULT_MAXERR),
        },
        (_, atol, rtol) => Tolerance::Close {
            atol: atol.unwrap_or(0.0),
            rtol: rtol.unwrap_or(0.0),
        },
    };
    let (a, b) = (Side::open(&args.a)?, Side::open(&args.b)?);
    let rows = compare_sides(&a, &b, tolerance)?;
    let divergence = (a.is_io_dump() && b.is_io_dump()).then(|| first_divergence(&rows));
    let report = CompareReport::new(
        args.a.display().to_string(),
        args.b.display().to_string(),
        tolerance,
        rows,
        divergence,
    );
    print(&report, args.json)?;
    if report.failed > 0 {
        return Err(CheckFailed(format!("{} of {} tensors differ", report.failed, report.tensors.len())).into());
    }
    Ok(())
}
