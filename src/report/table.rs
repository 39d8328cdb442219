//! Plain-text tables with aligned columns.

use unicode_width::UnicodeWidthStr;

use crate::text::printable;

/// Rows of cells printed with each column padded to its widest cell.
/// Columns listed in `right` are right-aligned (numbers).
pub struct Table {
    rows: Vec<Vec<String>>,
    right: Vec<usize>,
}

impl Table {
    pub fn new(header: &[&str], right: &[usize]) -> Table {
        Table {
            rows: vec![header.iter().map(|h| h.to_string()).collect()],
            right: right.to_vec(),
        }
    }

    /// A row; a cell shows its hidden characters escaped (see `text::printable`),
    /// so that a name cannot break the row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows
            .push(cells.into_iter().map(|cell| printable(&cell).into_owned()).collect());
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
}
