//! linklab against a real AX.25 peer: gensio's stack (`gensiot` and the
//! `greflector` KISS hub from Debian's gensio-bin), 20 KB each way, modulo 8
//! and 128, byte-exact, every captured frame decoded by linklab and tshark.
//! The script `interop/linklab-gensio.sh` does the work inside a network
//! namespace of its own (`unshare -n`, loopback only), bounded to 300 s.
//!
//! Needs root, gensio-bin, tshark and python3. Without them the test says
//! so and passes, except under CI (`CI` set), where it fails.

mod interop;

#[test]
fn transfers_to_and_from_gensio_are_byte_exact() {
    if !interop::peers_available(
        "gensio",
        &["gensiot", "greflector", "tshark", "python3", "unshare"],
        "gensio-bin tshark",
    ) {
        return;
    }
    interop::run_script(
        "linklab-gensio.sh",
        &[
            "mod8-to-gensio",
            "mod8-from-gensio",
            "mod128-to-gensio",
            "mod128-from-gensio",
        ],
    );
}
