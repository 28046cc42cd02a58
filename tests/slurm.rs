//! A sharded experiment on a real Slurm cluster, run the way a researcher
//! runs it: `interop/slurm-cluster.sh` starts a private one-node cluster
//! (Debian's slurm-wlm 22.05 and munge: its own munge key and socket,
//! slurmctld and slurmd with a generated slurm.conf, everything in a
//! temporary directory, in a network namespace of its own) and submits
//! `crates/scenario/experiments/ronan-tables-2-3.toml --quick` in 4 shards
//! through `dist/slurm/submit.sh`: a job array of `linklab sim
//! --shard I/4`, then a `linklab merge` job that depends on it.
//!
//! - slurm-up: munge credentials pass through the private socket and the
//!   node comes up idle.
//! - array-and-merge: every task of the array and the merge job complete,
//!   and each task wrote its part.
//! - byte-for-byte: the merged output equals that of the unsharded
//!   `linklab sim` (`diff -r`).
//!
//! The cluster is torn down on any exit (jobs cancelled, daemons stopped,
//! nothing left in the namespace). About 15 s. Needs root, slurm-wlm and
//! munge. Without them the test says so and passes, except under CI (`CI`
//! set), where it fails.

mod interop;

#[test]
fn sharded_sim_through_a_slurm_job_array_merges_to_the_unsharded_output() {
    if !interop::peers_available(
        "slurm",
        &["slurmctld", "slurmd", "sbatch", "munged"],
        "slurm-wlm munge",
    ) {
        return;
    }
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/crates/scenario/experiments/ronan-tables-2-3.toml"
    );
    interop::run_script_with(
        "slurm-cluster.sh",
        &["-f", file, "-n", "4", "-x", "--quick"],
        &["slurm-up", "array-and-merge", "byte-for-byte"],
    );
}
