//! A `[[tun]]` table's link settings: N1 follows the port's `n1` when the
//! port gives one (longer datagrams are then segmented, or refused where
//! they cannot be), and the MTU otherwise (one datagram per frame, as the
//! kernel's ax0 with paclen = MTU), as `linklab ip` without and with
//! `--n1`.

use std::path::Path;

use linklab_station::config;

fn file(port: &str, tun: &str) -> String {
    format!(
        "[[port]]\nname = \"radio\"\nkiss = \"tcp:127.0.0.1:8001\"\n{port}\n\
         [[tun]]\nport = \"radio\"\nname = \"ax0\"\ncallsign = \"N0TA\"\n\
         addresses = [\"44.128.0.1/24\"]\n{tun}\n"
    )
}

fn tun_n1(port: &str, tun: &str) -> usize {
    let config = config::parse(Path::new("t.toml"), &file(port, tun)).expect("the file is good");
    config.tuns[0].ax25.link.n1
}

fn refused(port: &str, tun: &str) -> String {
    config::parse(Path::new("t.toml"), &file(port, tun))
        .expect_err("the file is refused")
        .to_string()
}

#[test]
fn the_ports_n1_is_kept_and_longer_datagrams_are_segmented() {
    // Before the fix the MTU replaced an N1 the port gave, so nothing was
    // ever segmented on a station's TUN device.
    assert_eq!(tun_n1("mod128 = true\nn1 = 256", "mtu = 1280"), 256);
    assert_eq!(tun_n1("n1 = 512", "mtu = 256"), 512);
}

#[test]
fn without_the_ports_n1_a_frame_carries_one_datagram() {
    assert_eq!(tun_n1("", ""), 256);
    assert_eq!(tun_n1("mod128 = true", "mtu = 1280"), 1280);
    assert_eq!(tun_n1("", "mtu = 576\nmode = \"datagram\""), 576);
    assert_eq!(tun_n1("", "mtu = 128"), 128);
}

#[test]
fn a_datagram_above_n1_that_cannot_be_segmented_is_refused_at_the_mtu() {
    let vc = refused("n1 = 256", "mtu = 1280");
    assert!(vc.contains("tun[1].mtu") && vc.contains("mod128"), "{vc}");
    let ui = refused("mod128 = true\nn1 = 256", "mtu = 1280\nmode = \"datagram\"");
    assert!(ui.contains("tun[1].mtu") && ui.contains("UI frame"), "{ui}");
    let one = refused(
        "mod128 = true\nn1 = 256",
        "mtu = 1280\nipmode = { \"N0OLD\" = \"datagram\" }",
    );
    assert!(
        one.contains("tun[1].ipmode") && one.contains("N0OLD"),
        "{one}"
    );
}
