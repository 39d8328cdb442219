//! `compare --by-layer`'s table: each pair of vars, B against A, in A's
//! execution order, and where the SQNR falls most.

use std::fmt::Write;

use crate::compare::layers::ByLayer;
use crate::report::table::Table;
use crate::text::{number, printable};

/// The pairs as a table, then the layer where the SQNR falls most.
pub fn by_layer_text(layers: &ByLayer) -> String {
    let mut out = format!(
        "\nby layer  {} pairs of vars matched by topology, b against a in a's order; {} layers only in a, {} only in b\n",
        layers.pairs.len(),
        layers.unpaired_a,
        layers.unpaired_b
    );
    let mut table = Table::new(
        &["a var", "b var", "a dtype", "b dtype", "SQNR dB", "cosine", "max abs"],
        &[4, 5, 6],
    );
    let shown = |value: Option<f64>, digits: usize| match value {
        Some(value) if value.is_infinite() => "same".to_string(),
        Some(value) => format!("{value:.digits$}"),
        None => "-".to_string(),
    };
    for pair in &layers.pairs {
        table.row(vec![
            pair.a_var.clone(),
            pair.b_var.clone(),
            pair.a_dtype.clone(),
            pair.b_dtype.clone(),
            shown(pair.sqnr_db, 1),
            shown(pair.cosine, 5),
            pair.max_abs.map_or_else(|| "-".to_string(), number),
        ]);
    }
    out.push_str(&table.render("  "));
    if let Some(fall) = &layers.largest_fall {
        let _ = writeln!(
            out,
            "SQNR falls most at '{}' / '{}': {:.1} dB, from {:.1} dB at its inputs to {:.1} dB",
            printable(&fall.a_var),
            printable(&fall.b_var),
            fall.fall_db,
            fall.from_db,
            fall.to_db
        );
    }
    out
}
