//! A linklab DTN node against dtn7-rs's dtnd over TCPCLv4: a file each
//! way, payload byte-exact, with the delivery status report of each
//! reaching the sender. The script `interop/linklab-dtnd-node.sh` does the
//! work inside a network namespace of its own (`unshare -n`, loopback
//! only), bounded to 120 s.
//!
//! Needs root and dtn7 (`cargo install dtn7 --locked`: dtnd, dtnsend,
//! dtnrecv). Without them the test says so and passes, except under CI
//! (`CI` set), where it fails.

mod interop;

#[test]
fn a_node_exchanges_bundles_and_reports_with_dtnd() {
    if !interop::peers_available(
        "dtnd node",
        &["dtnd", "dtnsend", "dtnrecv", "unshare", "ip"],
        "iproute2 (and cargo install dtn7 --locked)",
    ) {
        return;
    }
    interop::run_script("linklab-dtnd-node.sh", &["to-dtnd", "from-dtnd"]);
}
