//! Two `linklab station`s with NET/ROM nodes on `linklab channel`: they
//! learn each other from their NODES broadcasts, `linklab status` shows
//! the node table, and `linklab connect` on one station's NET/ROM port
//! reaches a service of the other through a circuit (its `[netrom]
//! service`). Every wait is on a log line or a process's output, bounded
//! in time.

mod cli;

use std::path::Path;

use cli::caller::Caller;
use cli::channel::Channel;
use cli::station::{status, Station};

fn config(dir: &Path, kiss: &str, call: &str, alias: &str, service: bool) -> String {
    let service_tables = if service {
        format!("\n[[service]]\ncallsign = \"{call}-5\"\nbuiltin = \"echo\"\n")
    } else {
        String::new()
    };
    let answer = if service {
        format!("service = \"{call}-5\"\n")
    } else {
        String::new()
    };
    format!(
        r#"
[station]
callsign = "{call}"
control = "{control}"

[agw]
listen = "127.0.0.1:0"

[status]
listen = "127.0.0.1:0"

[[port]]
name = "vhf"
kiss = "{kiss}"
callsigns = ["{call}"]
txdelay-ms = 20
txtail-ms = 10
slot-ms = 10
t1-ms = 2000
{service_tables}
[netrom]
callsign = "{call}-2"
alias = "{alias}"
{answer}
[[netrom.port]]
name = "vhf"
quality = 192
"#,
        control = dir.join("station.sock").display()
    )
}

#[test]
fn a_circuit_through_one_stations_netrom_port_reaches_the_others_service() {
    let ch = Channel::fast(2, 5);
    let (a_dir, b_dir) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = Station::start(
        a_dir.path(),
        &config(a_dir.path(), &ch.kiss(0), "N0AAA", "NODEA", true),
    );
    let b = Station::start(
        b_dir.path(),
        &config(b_dir.path(), &ch.kiss(1), "N0BBB", "NODEB", false),
    );
    // Each learns the other from its first broadcast, 2 s after its start.
    b.wait_for("NODEA in B's table", |l| {
        l.contains("NET/ROM: NODES from N0AAA-2") && l.contains("NODEA:N0AAA-2")
    });
    a.wait_for("NODEB in A's table", |l| l.contains("NODEB:N0BBB-2"));
    let report = status(&b.control);
    let destinations = &report["netrom"]["destinations"];
    assert_eq!(destinations[0]["callsign"], "N0AAA-2", "{report}");
    assert_eq!(destinations[0]["routes"][0]["quality"], 192);
    let text = cli::finish(
        cli::linklab(&["status", "--control", b.control.to_str().unwrap()]),
        "linklab status",
    );
    let shown = cli::text(&text.stdout);
    assert!(
        shown.contains("NET/ROM node NODEB:N0BBB-2") && shown.contains("NODEA:N0AAA-2"),
        "{shown}"
    );
    // The status page's report and /metrics show the node too (the
    // report is published every second: wait for one with the route).
    let page = b.status.expect("B serves its status page");
    let end = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let metrics = loop {
        let text = cli::web::get(page, "/metrics").body;
        if text.contains("linklab_netrom_destinations{} 1") {
            break text;
        }
        assert!(
            std::time::Instant::now() < end,
            "no NET/ROM route in /metrics:\n{text}"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    };
    assert!(
        metrics.contains("linklab_netrom_neighbours{} 1"),
        "{metrics}"
    );
    let json = cli::web::status_json(page);
    assert_eq!(json["netrom"]["alias"], "NODEB", "{json}");
    // B's NET/ROM port is AGWPE port 2, after its radio port.
    let agw = b.agw_address();
    let mut caller = Caller::start(&[
        "--station",
        &agw,
        "--port",
        "2",
        "--mycall",
        "N0USR",
        "NODEA",
    ]);
    caller.expect("onnected");
    for line in ["first line through the network", "second line"] {
        caller.say(line);
        caller.expect(line);
    }
    a.wait_for("the circuit at A", |l| {
        l.contains("NET/ROM: circuit from N0USR at node N0BBB-2")
    });
    let seen = caller.finish();
    assert!(seen.iter().any(|l| l.contains("second line")), "{seen:?}");
    a.wait_for("the session's end", |l| {
        l.contains("NET/ROM: N0AAA-5 <-> N0USR") && l.contains("ended")
    });
    let (a_status, a_log) = a.stop();
    assert!(a_status.success(), "{a_log}");
    let (b_status, b_log) = b.stop();
    assert!(b_status.success(), "{b_log}");
}
