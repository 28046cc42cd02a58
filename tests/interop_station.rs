//! Programs no one here wrote as clients of `linklab station`, in a
//! network namespace of its own, bounded in time:
//!
//! * `interop/station-kiss.sh` (about 50 s): gensio's AX.25 stack
//!   (`gensiot`) as a KISS client of the station's KISS server sends 10 KB
//!   through the station's port to `linklab listen` on another station of
//!   `linklab channel`, byte-exact; Dire Wolf's `kissutil` on the same KISS
//!   server receives the station's beacon and puts typed frames on the air;
//!   meanwhile the station's echo service answers a call.
//!
//! The AGWPE side is `tests/interop_agw.rs` (pyham-pe): `linklab agw` is a
//! station with no services, run by the same driver. Needs root and the
//! peers (gensio-bin, direwolf, iproute2). Without them the test says so
//! and passes, except under CI (`CI` set), where it fails.

mod interop;

#[test]
fn kiss_programs_share_the_station_s_port_with_its_services() {
    if !interop::peers_available(
        "station kiss",
        &["gensiot", "kissutil", "ss", "unshare"],
        "gensio-bin direwolf iproute2",
    ) {
        return;
    }
    interop::run_script_with(
        "station-kiss.sh",
        &[],
        &["gensiot", "kissutil-rx", "kissutil-tx", "echo"],
    );
}
