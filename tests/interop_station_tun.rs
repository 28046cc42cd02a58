//! The kernel's own IP stack over `linklab station`'s `[[tun]]` tables,
//! beside everything else the station serves on the same port at the
//! same time: two stations, each with its TUN device ax0 in a network
//! namespace of its own, joined through `linklab channel` (through its
//! pseudo-terminals). After ping (IPv4, and IPv6 in VC mode), while nc
//! carries 100 KB from A to B byte-exact, station A's port also carries
//! another ping, a 50 KB `linklab send --station` transfer through its AGWPE server, a
//! 20 KB DTN bundle from its `[dtn]` node to a `linklab dtn node` on the
//! channel with the delivery report, calls to its echo service, a
//! shell-script service and a TCP service, a UI frame it digipeats for
//! its alias, and its beacon every 10 s (a `linklab listen --monitor` on
//! the channel sees the beacons and the repeated frame); every transfer
//! is checked byte-exact and the overlap in time is checked. Then nc
//! with 100 KB from B to A, `linklab status --json` counting the
//! datagrams, services, beacons and the digipeated frame, and after
//! SIGTERM no ax0 left. `interop/station-tun.sh` does the work, in VC
//! mode (modulo 128, N1 256 under an MTU of 1280: the segmenter) and in
//! datagram mode (UI frames, MTU 256). About 45 s each.
//!
//! Needs root and the programs (iproute2, iputils-ping, netcat-openbsd,
//! python3). Without them a test says so and passes, except under CI
//! (`CI` set), where it fails.

mod interop;

const TOOLS: [&str; 7] = ["ip", "ss", "ping", "nc", "sha256sum", "python3", "unshare"];
const INSTALL: &str = "iproute2 iputils-ping netcat-openbsd coreutils python3";

/// The script's checks in both modes; VC mode has ping6 besides (its
/// device has an IPv6 address, which needs the MTU of 1280 that only the
/// modulo-128 segmenter carries).
const CHECKS: [&str; 14] = [
    "ping4",
    "nc-ab",
    "ping-busy",
    "agw",
    "dtn",
    "echo",
    "script",
    "tcp-svc",
    "digi",
    "beacon",
    "overlap",
    "nc-ba",
    "status",
    "released",
];

#[test]
fn the_stations_tun_carries_ip_in_vc_mode_beside_its_other_services() {
    if !interop::peers_available("station tun (VC mode)", &TOOLS, INSTALL) {
        return;
    }
    let mut checks = vec!["ping6"];
    checks.extend(CHECKS);
    interop::run_script_with("station-tun.sh", &["-m", "vc"], &checks);
}

#[test]
fn the_stations_tun_carries_ip_in_datagram_mode_beside_its_other_services() {
    if !interop::peers_available("station tun (datagram mode)", &TOOLS, INSTALL) {
        return;
    }
    interop::run_script_with("station-tun.sh", &["-m", "datagram"], &CHECKS);
}
