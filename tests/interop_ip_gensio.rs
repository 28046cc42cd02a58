//! `linklab ip` through a real KISS hub: gensio's `greflector` (Debian's
//! gensio-bin) joins two `linklab ip` processes; a ping and a 20 KB TCP
//! transfer in VC mode (ARP) and datagram mode (static neighbours),
//! byte-exact, every captured frame decoded by linklab and by tshark down
//! to TCP and ICMP. The script `interop/linklab-ip-gensio.sh` does the work
//! inside a network namespace of its own (`unshare -n`, loopback only),
//! bounded to 120 s (under 10 s when all goes well).
//!
//! Needs root, gensio-bin, tshark and python3. Without them the test says
//! so and passes, except under CI (`CI` set), where it fails.

mod interop;

#[test]
fn ping_and_tcp_transfer_through_greflector_are_byte_exact() {
    if !interop::peers_available(
        "gensio IP",
        &["greflector", "tshark", "python3", "unshare"],
        "gensio-bin tshark",
    ) {
        return;
    }
    interop::run_script("linklab-ip-gensio.sh", &["vc ", "datagram "]);
}
