//! Plain-text tables with aligned columns.

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

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    pub fn render(&self, indent: &str) -> String {
        let columns = self.rows.iter().map(Vec::len).max().unwrap_or(0);
        let widths: Vec<usize> = (0..columns)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .map(|s| s.chars().count())
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
                    if self.right.contains(&c) {
                        format!("{cell:>w$}", w = widths[c])
                    } else {
                        format!("{cell:<w$}", w = widths[c])
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
}
