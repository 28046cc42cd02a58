//! linklab against a real AX.25 peer over a real modem path: Dire Wolf 1.6
//! (Debian's `direwolf`), two instances joined by a software audio cable.
//! linklab is the KISS client of instance A; an AGW client registered on
//! instance B lets B's own connected-mode engine answer. 5 KB at 9600 bd
//! each way, modulo 128 and 8, then with audio chunks dropped by the relay
//! (seeded) to force REJ, SREJ (multi-SREJ, selected by XID) and T1
//! recovery; byte-exact, every frame heard on the channel decoded by
//! linklab and tshark. The script
//! `interop/linklab-direwolf.sh` does the work inside a network namespace
//! of its own (`unshare -n`, loopback only), bounded to 400 s (about 160 s
//! when all goes well).
//!
//! Needs root, direwolf, tshark (with mergecap) and python3. Without them
//! the test says so and passes, except under CI (`CI` set), where it fails.

mod interop;

#[test]
fn transfers_to_and_from_direwolf_are_byte_exact() {
    if !interop::peers_available(
        "Dire Wolf",
        &["direwolf", "tshark", "mergecap", "python3", "unshare"],
        "direwolf tshark",
    ) {
        return;
    }
    let report = interop::run_script(
        "linklab-direwolf.sh",
        &[
            "to-dw ",
            "to-dw-mod8",
            "from-dw ",
            "to-dw-loss ",
            "to-dw-loss-srej",
            "from-dw-loss",
        ],
    );
    // The lossy runs must have recovered with the frames they exist to test.
    let line = |name: &str| {
        report
            .lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_default()
            .to_owned()
    };
    assert!(line("to-dw-loss ").contains("REJ="), "{report}");
    assert!(line("to-dw-loss-srej").contains("SREJ="), "{report}");
    // With --srej, XID selects multi-SREJ (AX.25 v2.2 fig. 4.5, 3B) with
    // Dire Wolf, which may then ask for several frames in one SREJ.
    assert!(line("to-dw-loss-srej").contains("MultiSrej"), "{report}");
    assert!(line("from-dw-loss").contains("REJ="), "{report}");
}
