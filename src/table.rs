//! Aligned plain-text tables for terminal output.

/// A table of strings printed with each column padded to its widest cell:
/// text columns left-aligned, numeric ones right-aligned.
pub struct Table {
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

impl Table {
    pub fn new<S: Into<String>>(headers: impl IntoIterator<Item = S>) -> Self {
        Table {
            headers: headers.into_iter().map(Into::into).collect(),
            rows: Vec::new(),
        }
    }

    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// A reproduction's table, for the terminal.
    pub fn from_report(table: &linklab_scenario::report::Table) -> Self {
        Table {
            headers: table.columns.clone(),
            rows: table.rows.clone(),
        }
    }

    fn is_numeric(&self, col: usize) -> bool {
        self.rows.iter().all(|r| {
            r.get(col).is_none_or(|c| {
                c.is_empty() || c.trim_start_matches(['+', '-']).parse::<f64>().is_ok()
            })
        })
    }
}

impl std::fmt::Display for Table {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let cols = self.headers.len();
        let width: Vec<usize> = (0..cols)
            .map(|c| {
                self.rows
                    .iter()
                    .filter_map(|r| r.get(c))
                    .chain(std::iter::once(&self.headers[c]))
                    .map(|s| s.chars().count())
                    .max()
                    .unwrap_or(0)
            })
            .collect();
        let numeric: Vec<bool> = (0..cols).map(|c| self.is_numeric(c)).collect();
        for line in std::iter::once(&self.headers).chain(&self.rows) {
            let cells: Vec<String> = (0..cols)
                .map(|c| {
                    let cell = line.get(c).map_or("", String::as_str);
                    if numeric[c] {
                        format!("{cell:>w$}", w = width[c])
                    } else {
                        format!("{cell:<w$}", w = width[c])
                    }
                })
                .collect();
            writeln!(f, "{}", cells.join("  ").trim_end())?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_right_text_left() {
        let mut t = Table::new(["k", "name"]);
        t.row(vec!["1".into(), "imm".into()]);
        t.row(vec!["10".into(), "T2".into()]);
        assert_eq!(t.to_string(), " k  name\n 1  imm\n10  T2\n");
    }
}
