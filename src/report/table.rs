//! Plain-text tables with aligned columns.

use unicode_width::UnicodeWidthStr;

use crate::text::{cut, markdown_cell, printable};

/// The most bytes of a cell's text a table shows in a column it pads: a
/// longer name keeps its ends (`text::cut`), so that one name cannot widen
/// every row of its column (JSON output keeps it whole).
const PADDED_CELL_BYTES: usize = 160;

/// The most bytes of a cell's text in the last column when it is
/// left-aligned: that column pads no row, so a reason or a detail there
/// shows whole up to this, and a report stays bounded whatever it holds.
const FREE_CELL_BYTES: usize = 1024;

/// Rows of cells printed with each column padded to its widest shown cell.
/// Columns listed in `right` are right-aligned (numbers).
pub struct Table {
    rows: Vec<Vec<String>>,
    right: Vec<usize>,
    /// The last column, when left-aligned: cut at `FREE_CELL_BYTES`, never padded.
    free: Option<usize>,
}

impl Table {
    pub fn new(header: &[&str], right: &[usize]) -> Table {
        let free = header.len().checked_sub(1).filter(|last| !right.contains(last));
        let mut table = Table {
            rows: Vec::new(),
            right: right.to_vec(),
            free,
        };
        table.rows.push(table.shown(header));
        table
    }

    /// A row of cells as they are shown (see `shown`).
    pub fn row(&mut self, cells: Vec<String>) {
        let row = self.shown(&cells);
        self.rows.push(row);
    }

    /// Cells, the header's too, as the table shows them: cut to their
    /// column's bound, their hidden characters escaped (see
    /// `text::printable`), so that a name can neither break its row nor pad
    /// every other.
    fn shown<S: AsRef<str>>(&self, cells: &[S]) -> Vec<String> {
        let bound = |c| match Some(c) == self.free {
            true => FREE_CELL_BYTES,
            false => PADDED_CELL_BYTES,
        };
        cells
            .iter()
            .enumerate()
            .map(|(c, cell)| printable(&cut(cell.as_ref(), bound(c))).into_owned())
            .collect()
    }

    /// The table in GitHub-flavoured markdown: its shown cells (see `shown`)
    /// escaped as markdown cells, the columns in `right` right-aligned.
    pub fn render_markdown(&self) -> String {
        let mut out = String::new();
        let line = |cells: Vec<String>| format!("| {} |\n", cells.join(" | "));
        for (r, row) in self.rows.iter().enumerate() {
            out.push_str(&line(row.iter().map(|cell| markdown_cell(cell)).collect()));
            if r == 0 {
                let rule = |c| if self.right.contains(&c) { "---:" } else { "---" }.to_string();
                out.push_str(&line((0..row.len()).map(rule).collect()));
            }
        }
        out
    }

    pub fn render(&self, indent: &str) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|s| s.width())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let mut out = String::new();
        for row in &self.rows {
            let cells: Vec<String> = row
                .iter()
                .enumerate()
                .map(|(c, cell)| {
                    if Some(c) == self.free {
                        return cell.clone();
                    }
                    let padding = " ".repeat(widths[c] - cell.width());
                    if self.right.contains(&c) {
                        format!("{padding}{cell}")
                    } else {
                        format!("{cell}{padding}")
                    }
                })
                .collect();
            out.push_str(indent);
            out.push_str(cells.join("  ").trim_end());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns() {
        let mut table = Table::new(&["name", "ms"], &[1]);
        table.row(vec!["conv".into(), "1.5".into()]);
        table.row(vec!["elemwise_long".into(), "12.25".into()]);
        assert_eq!(
            table.render(""),
            "name              ms\nconv             1.5\nelemwise_long  12.25\n"
        );
    }

    /// A name in two-column characters lines up; one with a line break stays on its row.
    #[test]
    fn aligns_wide_characters_and_keeps_names_on_their_row() {
        let mut table = Table::new(&["name", "dtype"], &[]);
        table.row(vec!["输出".into(), "f32".into()]);
        table.row(vec!["line1\nline2".into(), "f32".into()]);
        assert_eq!(
            table.render(""),
            "name          dtype\n输出          f32\nline1\\nline2  f32\n"
        );
    }

    /// A name of any length shows its ends, the header's names escaped
    /// too: the table stays as wide as its shown cells.
    #[test]
    fn cuts_long_cells_and_escapes_the_header() {
        let long = format!("head{}tail", "n".repeat(1_000_000));
        let mut table = Table::new(&["in\nput", "line1\nline2", "reason"], &[]);
        table.row(vec![long.clone(), "f32".into(), long.clone()]);
        table.row(vec!["x".into(), "f32".into(), "r".repeat(FREE_CELL_BYTES)]);
        let text = table.render("");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3, "{text}");
        assert!(lines[0].starts_with("in\\nput"), "{text}");
        let cells: Vec<&str> = lines[1]
            .split("  ")
            .map(str::trim)
            .filter(|cell| !cell.is_empty())
            .collect();
        let (padded, free) = (cut(&long, PADDED_CELL_BYTES), cut(&long, FREE_CELL_BYTES));
        assert_eq!(cells, [padded.as_ref(), "f32", free.as_ref()]);
        // The last column, which pads nothing, shows a reason whole to its bound.
        assert!(lines[2].ends_with(&"r".repeat(FREE_CELL_BYTES)), "{text}");
        assert!(lines[2].len() < PADDED_CELL_BYTES + 64 + FREE_CELL_BYTES, "{text}");
    }
}
