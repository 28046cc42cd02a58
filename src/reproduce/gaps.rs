//! Declared gaps: checks known not to reproduce, listed with a reason in
//! `crates/scenario/experiments/gaps.toml`. They still run and still fail;
//! the run's exit status tolerates exactly these failures, and refuses a
//! listed check that passes, so the list stays true.

use anyhow::Context;
use serde::Deserialize;

/// One declared gap.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Gap {
    /// The check's id.
    pub check: String,
    /// Why it does not reproduce, in a line.
    pub why: String,
}

/// Every declared gap.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Gaps {
    #[serde(default)]
    gap: Vec<Gap>,
}

impl Gaps {
    /// The list in `crates/scenario/experiments/gaps.toml`.
    pub fn built_in() -> anyhow::Result<Gaps> {
        Gaps::parse(linklab_scenario::builtin::GAPS)
            .context("crates/scenario/experiments/gaps.toml")
    }

    fn parse(text: &str) -> anyhow::Result<Gaps> {
        Ok(toml::from_str(text)?)
    }

    /// Why check `id` is a declared gap, if it is one.
    pub fn why(&self, id: &str) -> Option<&str> {
        self.gap
            .iter()
            .find(|g| g.check == id)
            .map(|g| g.why.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_list_parses_and_names_each_check_once() {
        let gaps = Gaps::built_in().unwrap();
        let mut ids: Vec<&str> = gaps.gap.iter().map(|g| g.check.as_str()).collect();
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n);
        assert!(gaps.gap.iter().all(|g| !g.why.is_empty()));
    }

    #[test]
    fn an_unknown_field_is_refused() {
        assert!(Gaps::parse("[[gap]]\ncheck = \"a\"\nwhy = \"b\"\nwhen = 1\n").is_err());
        assert_eq!(
            Gaps::parse("[[gap]]\ncheck = \"a\"\nwhy = \"b\"\n")
                .unwrap()
                .why("a"),
            Some("b")
        );
    }
}
