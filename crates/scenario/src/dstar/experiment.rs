//! The D-STAR kinds of scenario file: `dstar-table-1` ([`Table1Config`])
//! and `dstar-table-2` ([`Table2Config`]), each running its report section
//! with the file's parameters.

use super::bench::BenchError;
use super::sections::{table_1_with, table_2_with, Table1Config, Table2Config};
use crate::experiment::{ExperimentKind, InvalidField};
use crate::report::{Output, Progress, RunOptions, Section};

fn output(section: Section) -> Output {
    Output {
        tables: section.tables,
        figures: section.figures,
    }
}

impl ExperimentKind for Table1Config {
    type Point = ();
    type Result = Output;
    type Error = BenchError;

    fn validate(&self) -> Result<(), InvalidField> {
        Table1Config::validate(self)
    }

    /// One point: this kind's run is not cut into parts.
    fn points(&self, _: &RunOptions) -> Result<Vec<()>, BenchError> {
        Ok(vec![()])
    }

    fn run_point(
        &self,
        opts: &RunOptions,
        (): &(),
        progress: &dyn Progress,
    ) -> Result<Output, BenchError> {
        Ok(output(table_1_with(self, opts, progress)?))
    }

    fn assemble(
        &self,
        _: &RunOptions,
        _: &[()],
        results: Vec<Output>,
    ) -> Result<Output, BenchError> {
        Ok(results.into_iter().next().unwrap_or_default())
    }
}

impl ExperimentKind for Table2Config {
    type Point = ();
    type Result = Output;
    type Error = BenchError;

    fn validate(&self) -> Result<(), InvalidField> {
        Table2Config::validate(self)
    }

    /// One point: this kind's run is not cut into parts.
    fn points(&self, _: &RunOptions) -> Result<Vec<()>, BenchError> {
        Ok(vec![()])
    }

    fn run_point(
        &self,
        opts: &RunOptions,
        (): &(),
        progress: &dyn Progress,
    ) -> Result<Output, BenchError> {
        Ok(output(table_2_with(self, opts, progress)?))
    }

    fn assemble(
        &self,
        _: &RunOptions,
        _: &[()],
        results: Vec<Output>,
    ) -> Result<Output, BenchError> {
        Ok(results.into_iter().next().unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use crate::experiment::Experiment;

    #[test]
    fn the_experiment_files_are_the_papers_runs() {
        let one = crate::builtin::DSTAR_TABLE_1;
        let Experiment::DstarTable1(c) = Experiment::from_toml(one).unwrap() else {
            panic!("not dstar-table-1");
        };
        assert_eq!(c, super::Table1Config::paper());
        let two = crate::builtin::DSTAR_TABLE_2;
        let Experiment::DstarTable2(c) = Experiment::from_toml(two).unwrap() else {
            panic!("not dstar-table-2");
        };
        assert_eq!(c, super::Table2Config::paper());
    }

    #[test]
    fn out_of_range_fields_are_named() {
        let mut c = super::Table2Config::paper();
        c.ber_fade = 0.9;
        assert_eq!(c.validate().unwrap_err().field, "ber_fade");
        let mut c = super::Table1Config::paper();
        c.buffer_frames = 0;
        assert_eq!(c.validate().unwrap_err().field, "buffer_frames");
    }
}
