//! The kernel's own IP stack over linklab's AX.25 (`linklab ip ... tun`):
//! two hosts, each with its TUN device in a network namespace of its own,
//! joined through `linklab channel` (through its pseudo-terminals), and
//! programs no one here wrote over them: ping (IPv4 and IPv6), nc with
//! 100 KB byte-exact, iperf3 for a fixed time, curl to Python's
//! http.server; then the devices must be gone. `interop/tun-channel.sh`
//! does the work, in VC mode (modulo 128, the segmenter under an MTU of
//! 1280) and in datagram mode (UI frames, MTU 256). About 40 s each. And
//! over two Dire Wolf modems (`interop/tun-direwolf.sh`).
//!
//! Needs root and the programs (iproute2, iputils-ping, netcat-openbsd,
//! iperf3, curl, python3). Without them a test says so and passes, except
//! under CI (`CI` set), where it fails.

mod interop;

const TOOLS: [&str; 7] = ["ip", "ping", "nc", "iperf3", "curl", "python3", "unshare"];
const INSTALL: &str = "iproute2 iputils-ping netcat-openbsd iperf3 curl python3";

#[test]
fn unmodified_programs_run_over_vc_mode() {
    if !interop::peers_available("tun (VC mode)", &TOOLS, INSTALL) {
        return;
    }
    interop::run_script_with(
        "tun-channel.sh",
        &["-m", "vc"],
        &[
            "ping4", "ping6", "unreach", "nc", "iperf3", "http", "released",
        ],
    );
}

#[test]
fn unmodified_programs_run_over_datagram_mode() {
    if !interop::peers_available("tun (datagram mode)", &TOOLS, INSTALL) {
        return;
    }
    interop::run_script_with(
        "tun-channel.sh",
        &["-m", "datagram"],
        &["ping4", "unreach", "nc", "iperf3", "http", "released"],
    );
}

/// The same over two Dire Wolf modems joined by the audio-loop harness
/// (`interop/tun-direwolf.sh`, 9600 bd, about 35 s): ping and a file.
#[test]
fn ping_and_a_file_cross_two_direwolf_modems() {
    if !interop::peers_available(
        "tun over Dire Wolf",
        &[
            "direwolf", "socat", "ip", "ping", "nc", "python3", "unshare",
        ],
        "direwolf socat iproute2 iputils-ping netcat-openbsd python3",
    ) {
        return;
    }
    interop::run_script("tun-direwolf.sh", &["ping", "nc"]);
}
