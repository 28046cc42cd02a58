//! The key path (`port[2].window`) of a place in a TOML text, for the
//! errors the toml reader finds itself (a wrong type, an unknown or a
//! missing key): those carry the place but not the `[[table]]` number
//! the station's own checks name.

use std::ops::Range;

use toml_edit::{ImDocument, Item, Table, Value};

/// The innermost key, table header or `[[table]]` entry of `text` whose
/// place holds octet `offset`, as a path; `None` if `text` does not
/// parse (a syntax error has no key) or nothing is there.
pub(crate) fn key_at(text: &str, offset: usize) -> Option<String> {
    let doc = ImDocument::parse(text).ok()?;
    let mut found = Found { offset, best: None };
    found.table(doc.as_table(), "");
    found.best.map(|(_, path)| path)
}

struct Found {
    offset: usize,
    /// The length of the place and its path.
    best: Option<(usize, String)>,
}

impl Found {
    fn consider(&mut self, span: Option<Range<usize>>, path: &str) {
        let Some(span) = span else { return };
        // An empty place (the end of the text) holds the offset at its start.
        let holds = span.contains(&self.offset) || span.start == self.offset;
        let len = span.len();
        if holds && self.best.as_ref().is_none_or(|(best, _)| len <= *best) {
            self.best = Some((len, path.to_string()));
        }
    }

    fn table(&mut self, table: &Table, path: &str) {
        for (name, item) in table.iter() {
            let here = if path.is_empty() {
                name.to_string()
            } else {
                format!("{path}.{name}")
            };
            let key = table.key(name).and_then(|k| k.span());
            self.item(item, key, &here);
        }
    }

    fn item(&mut self, item: &Item, key: Option<Range<usize>>, path: &str) {
        match item {
            Item::None => {}
            Item::Table(t) => {
                self.consider(key, path);
                self.consider(t.span(), path);
                self.table(t, path);
            }
            Item::ArrayOfTables(list) => {
                for (i, t) in list.iter().enumerate() {
                    let entry = format!("{path}[{}]", i + 1);
                    self.consider(t.span(), &entry);
                    self.table(t, &entry);
                }
            }
            Item::Value(v) => {
                // `key = value`, from the key's first octet to the
                // value's last: either end names the key.
                let whole = match (key, v.span()) {
                    (Some(k), Some(v)) => Some(k.start..v.end),
                    (k, v) => k.or(v),
                };
                self.consider(whole, path);
                self.value(v, path);
            }
        }
    }

    fn value(&mut self, value: &Value, path: &str) {
        match value {
            // An element of a list is named by the list's key, as the
            // station's checks name it (`port[1].callsigns`).
            Value::Array(list) => {
                for v in list.iter() {
                    self.consider(v.span(), path);
                    self.value(v, path);
                }
            }
            Value::InlineTable(t) => {
                for (name, v) in t.iter() {
                    let here = format!("{path}.{name}");
                    let key = t.key(name).and_then(|k| k.span());
                    let whole = match (key, v.span()) {
                        (Some(k), Some(v)) => Some(k.start..v.end),
                        (k, v) => k.or(v),
                    };
                    self.consider(whole, &here);
                    self.value(v, &here);
                }
            }
            _ => {}
        }
    }
}
