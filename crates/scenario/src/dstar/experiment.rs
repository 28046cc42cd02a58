//! The D-STAR kinds of scenario file: `dstar-table-1` ([`Table1Config`])
//! and `dstar-table-2` ([`Table2Config`]), each running its report section
//! with the file's parameters, one seeded run of one protocol per point.

use super::sections::{
    table_1_section, table_2_section, Table1Config, Table1Point, Table2Config, Table2Point,
};
use super::testbed::TestbedError;
use crate::experiment::{ExperimentKind, InvalidField};
use crate::report::{Output, Progress, RunOptions, Section};

fn output(section: Section) -> Output {
    Output {
        tables: section.tables,
        figures: section.figures,
    }
}

impl ExperimentKind for Table1Config {
    type Point = Table1Point;
    type Result = (f64, u64);
    type Error = TestbedError;

    fn validate(&self) -> Result<(), InvalidField> {
        Table1Config::validate(self)
    }

    fn points(&self, opts: &RunOptions) -> Result<Vec<Table1Point>, TestbedError> {
        Ok(Table1Config::points(self, opts))
    }

    fn run_point(
        &self,
        opts: &RunOptions,
        point: &Table1Point,
        progress: &dyn Progress,
    ) -> Result<(f64, u64), TestbedError> {
        Table1Config::run_point(self, opts, point, progress)
    }

    fn assemble(
        &self,
        opts: &RunOptions,
        points: &[Table1Point],
        results: Vec<(f64, u64)>,
    ) -> Result<Output, TestbedError> {
        Ok(output(table_1_section(self, opts, points, results)?))
    }
}

impl ExperimentKind for Table2Config {
    type Point = Table2Point;
    type Result = (bool, f64);
    type Error = TestbedError;

    fn validate(&self) -> Result<(), InvalidField> {
        Table2Config::validate(self)
    }

    fn points(&self, opts: &RunOptions) -> Result<Vec<Table2Point>, TestbedError> {
        Ok(Table2Config::points(self, opts))
    }

    fn run_point(
        &self,
        opts: &RunOptions,
        point: &Table2Point,
        progress: &dyn Progress,
    ) -> Result<(bool, f64), TestbedError> {
        Table2Config::run_point(self, opts, point, progress)
    }

    fn assemble(
        &self,
        opts: &RunOptions,
        points: &[Table2Point],
        results: Vec<(bool, f64)>,
    ) -> Result<Output, TestbedError> {
        Ok(output(table_2_section(self, opts, points, results)?))
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
