//! The kernel's own IP stack over `linklab station`'s `[[tun]]` tables:
//! two stations, each with its TUN device ax0 in a network namespace of
//! its own, joined through `linklab channel` (through its
//! pseudo-terminals), and on station A's port at the same time an AGWPE
//! server carrying a `linklab send --station` transfer and an echo
//! service answering a call: ping (IPv4, and IPv6 in VC mode), nc with
//! 100 KB byte-exact both ways, `linklab status --json` counting the
//! datagrams, and after SIGTERM no ax0 left. `interop/station-tun.sh`
//! does the work, in VC mode (modulo 128, N1 256 under an MTU of 1280:
//! the segmenter) and in datagram mode (UI frames, MTU 256). About 35 s
//! each.
//!
//! Needs root and the programs (iproute2, iputils-ping, netcat-openbsd,
//! python3). Without them a test says so and passes, except under CI
//! (`CI` set), where it fails.

mod interop;

const TOOLS: [&str; 7] = ["ip", "ss", "ping", "nc", "sha256sum", "python3", "unshare"];
const INSTALL: &str = "iproute2 iputils-ping netcat-openbsd coreutils python3";

#[test]
fn the_stations_tun_carries_ip_in_vc_mode_beside_its_other_services() {
    if !interop::peers_available("station tun (VC mode)", &TOOLS, INSTALL) {
        return;
    }
    interop::run_script_with(
        "station-tun.sh",
        &["-m", "vc"],
        &[
            "ping4", "ping6", "nc-ab", "agw", "echo", "overlap", "nc-ba", "status", "released",
        ],
    );
}

#[test]
fn the_stations_tun_carries_ip_in_datagram_mode_beside_its_other_services() {
    if !interop::peers_available("station tun (datagram mode)", &TOOLS, INSTALL) {
        return;
    }
    interop::run_script_with(
        "station-tun.sh",
        &["-m", "datagram"],
        &[
            "ping4", "nc-ab", "agw", "echo", "overlap", "nc-ba", "status", "released",
        ],
    );
}
