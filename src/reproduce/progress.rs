//! The progress bar on stderr while reproductions and experiments run.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use linklab_scenario::report::Progress;

/// An indicatif bar that the runners' threads move through [`Progress`];
/// hidden when stderr is not a terminal.
pub struct Bar(ProgressBar);

impl Bar {
    /// A bar with no work announced yet, labelled `prefix`.
    pub fn new(prefix: &str) -> Self {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(0), target);
        if let Ok(style) = ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} {wide_msg}",
        ) {
            bar.set_style(style);
        }
        bar.set_prefix(prefix.to_string());
        Bar(bar)
    }

    /// Removes the bar from the terminal.
    pub fn finish(&self) {
        self.0.finish_and_clear();
    }
}

impl Progress for Bar {
    fn add_work(&self, units: u64) {
        self.0.inc_length(units);
    }

    fn advance(&self, units: u64, what: &str) {
        self.0.set_message(what.to_string());
        self.0.inc(units);
    }
}
