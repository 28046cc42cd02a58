//! `linklab agw` with an AGWPE client no one here wrote: pyham-pe 1.1.2
//! from PyPI (the library of the Paracon terminal), driven by
//! `interop/agw_pyham.py` through `interop/agw-pyham.sh`, each run in a
//! network namespace of its own.
//!
//! - 50 KB each way byte-exact through `linklab agw` over `linklab
//!   channel`, to `linklab listen` and from `linklab send`, with 'Y'
//!   falling to zero, UI frames both ways (direct and through
//!   digipeaters), registration, port information, monitor and raw
//!   records, the heard list (about 70 s at 38400 bit/s).
//! - The same client script against Dire Wolf's own AGWPE server (two
//!   Dire Wolf instances joined by a software audio cable), then
//!   `linklab agw` on Dire Wolf's modem talking to Dire Wolf's engine,
//!   10 KB each way, and the observable differences listed (about 3
//!   minutes).
//!
//! Needs root, python3 (venv; pip reaching PyPI on first use) and, for
//! the second, direwolf. Without them the test says so and passes, except
//! under CI (`CI` set), where it fails.

mod interop;

use std::sync::Mutex;

/// One run at a time: Dire Wolf's modems and the channel share two cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn pyham_pe_through_linklab_agw_50k_each_way() {
    if !interop::peers_available(
        "pyham-pe",
        &["python3", "unshare", "ip"],
        "python3-venv iproute2",
    ) {
        return;
    }
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let report = interop::run_script_with(
        "agw-pyham.sh",
        &["-t", "linklab", "-b", "38400"],
        &[
            "info ",
            "register-twice",
            "ui-to-linklab ",
            "ui-from-linklab ",
            "ui-to-linklab-via",
            "ui-from-linklab-via",
            "call-to-listen",
            "send-to-accept",
            "info-end",
            "monitor",
        ],
    );
    assert!(
        report.contains("call-to-listen") && report.contains("byte-exact"),
        "{report}"
    );
}

#[test]
fn the_same_client_against_direwolf_s_server_and_through_direwolf_s_modem() {
    if !interop::peers_available(
        "pyham-pe with Dire Wolf",
        &["python3", "unshare", "ip", "direwolf"],
        "python3-venv iproute2 direwolf",
    ) {
        return;
    }
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let report = interop::run_script_with(
        "agw-pyham.sh",
        &["-t", "all", "-s", "10240", "-b", "38400"],
        &["connected", "call-to-listen", "send-to-accept"],
    );
    assert!(report.contains("agw-pyham: all targets passed"), "{report}");
}
