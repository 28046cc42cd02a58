//! `linklab ip` over a real modem path: two Dire Wolf 1.6 instances
//! (Debian's `direwolf`) joined by a software audio cable at 9600 bd, each
//! with a `linklab ip` as its KISS client; a ping and a 5 KB TCP transfer
//! in VC mode (ARP) and datagram mode (static neighbours), byte-exact. The
//! script `interop/linklab-ip-direwolf.sh` does the work inside a network
//! namespace of its own (`unshare -n`, loopback only), bounded to 240 s
//! (about 60 s when all goes well).
//!
//! Needs root, direwolf and python3. Without them the test says so and
//! passes, except under CI (`CI` set), where it fails.

mod interop;

#[test]
fn ping_and_tcp_transfer_through_two_direwolf_modems_are_byte_exact() {
    if !interop::peers_available(
        "Dire Wolf IP",
        &["direwolf", "python3", "unshare"],
        "direwolf",
    ) {
        return;
    }
    interop::run_script("linklab-ip-direwolf.sh", &["vc ", "datagram "]);
}
