//! `linklab probe` over `linklab channel` in real time, the peer a
//! `linklab listen`: the channel's TXDELAY and TNC time per frame, which
//! the probe is not told, come back within 10%, its bit-error rate
//! within the probe's 95% interval, and the advice `linklab advise`
//! gives on the probed link carries, on the true link, within 10% of the
//! advice on the true link. About a minute on loopback.

mod cli;

use cli::channel::Channel;
use cli::live::Live;
use std::sync::Mutex;
use std::time::Duration;

use cli::{finish, finish_within, linklab, tail, text};
use linklab_advise::{Ends, Link};

const TXDELAY_MS: f64 = 100.0;
const PER_FRAME_MS: f64 = 30.0;
const BER: f64 = 5e-5;

fn channel_file() -> String {
    let tnc = format!(
        "[station.tnc]\nserial_bps = 115200\nper_frame_ms = {PER_FRAME_MS}\nbuffer_octets = 8192\n\
         carrier_hold_ms = 0\n"
    );
    format!(
        "seed = 5\nbind = \"127.0.0.1\"\n\n[defaults]\ntxdelay_ms = {TXDELAY_MS}\n\n\
         [[channel]]\nname = \"uhf\"\nbitrate = 38400\nber = {BER}\n\n\
         [[station]]\nname = \"a\"\nport = 0\n{tnc}\n[[station]]\nname = \"b\"\nport = 0\n{tnc}"
    )
}

/// `linklab advise --link FILE --json MORE`, parsed.
fn advise(file: &std::path::Path, more: &[&str]) -> serde_json::Value {
    let mut args = vec!["advise", "--link", file.to_str().unwrap(), "--json"];
    args.extend_from_slice(more);
    let out = finish(linklab(&args), "advise");
    assert!(out.status.success(), "advise: {}", tail(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The two tests run one after the other: the first measures time on a
/// real-time channel, and the second's channel, probe and peer beside it
/// would take the processor from what it measures (in one CI run they
/// did: the TNC's time per frame read 34 ms for 30).
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

#[test]
fn the_probe_recovers_the_hidden_values_and_the_advice_matches() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("linklab-probe-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("channel.toml");
    std::fs::write(&file, channel_file()).unwrap();
    let stats = dir.join("stats.json");
    let channel = Channel::start(&[
        file.to_str().unwrap(),
        "--stats-json",
        stats.to_str().unwrap(),
    ]);
    let kiss = |i: usize| format!("tcp:127.0.0.1:{}", channel.ports[i]);
    // The peer sets its own channel access, which the probe is told.
    let mut peer = linklab(&[
        "listen",
        "--kiss",
        &kiss(1),
        "--mycall",
        "N0CALL-2",
        "--persist",
        "255",
        "--slot-ms",
        "10",
        "--txtail-ms",
        "10",
        "--out",
        dir.to_str().unwrap(),
    ]);
    let probe = finish_within(
        linklab(&[
            "probe",
            "--kiss",
            &kiss(0),
            "--mycall",
            "N0CALL-1",
            "--to",
            "N0CALL-2",
            "--bitrate",
            "38400",
            "--serial-bps",
            "115200",
            "--peer-persist",
            "255",
            "--peer-slot-ms",
            "10",
            "--peer-txtail-ms",
            "10",
            "--repeat",
            "2",
            "--loss-windows",
            "30",
            "--pause-ms",
            "300",
            "--response-ms",
            "3000",
            "--json",
        ]),
        "probe",
        Duration::from_secs(150),
    );
    peer.child.kill().ok();
    peer.child.wait().ok();
    channel.interrupt();
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    assert!(probe.status.success(), "probe: {}", tail(&probe.stderr));
    let probed: Link = serde_json::from_slice(&probe.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", text(&probe.stdout)));
    let fit = probed.probe.clone().expect("the fit is in the link");
    let within = |what: &str, got: f64, hidden: f64| {
        assert!(
            (got - hidden).abs() <= 0.1 * hidden,
            "{what}: probed {got}, hidden {hidden}; the channel's delivery lateness {}\n{}",
            stats["lateness"],
            text(&probe.stderr)
        );
    };
    within("TXDELAY", probed.channel.txdelay_ms, TXDELAY_MS);
    let Ends::Kiss(ends) = &probed.ends else {
        panic!("KISS ends expected: {probed:?}");
    };
    within("TNC per frame", ends.tnc_per_frame_ms, PER_FRAME_MS);
    assert!(fit.per_frame_resolved);
    assert!(
        fit.ber_low <= BER && BER <= fit.ber_high,
        "BER {BER} outside the probe's interval {fit:?}"
    );
    // linklab listen's T2 (1 s) is what a frame without P waits for.
    within(
        "peer's acknowledgement delay",
        fit.peer_ack_delay_ms.unwrap(),
        1000.0,
    );

    // The advice on the probed link is as good as the advice on the true
    // one: followed on the true link, it carries within 10% of the best,
    // the accuracy the probe's own measurements are held to above. The
    // advisor picks among near ties (windows, N1 or T1 within its own
    // interval, about 5% at 30 replications here), and which of them wins
    // on the probed link moves with a TXDELAY or TNC time measured a few
    // per cent off, as it is on a loaded machine: in one CI run under two
    // busy cores the probe read TXDELAY 108 ms and 27 ms a frame (100 and
    // 30 hidden), the advice came out T1 1200 ms where the true link's
    // best has 600 ms, and that carried 5.7% less on the true link (with
    // 5% as the bound, that run failed).
    let true_link = Link {
        channel: linklab_advise::Channel {
            txdelay_ms: TXDELAY_MS,
            ber: BER,
            ..probed.channel.clone()
        },
        ends: Ends::Kiss(linklab_advise::KissEnds {
            tnc_per_frame_ms: PER_FRAME_MS,
            ..ends.clone()
        }),
        probe: None,
        ..probed.clone()
    };
    let probed_file = dir.join("probed.json");
    let true_file = dir.join("true.json");
    std::fs::write(&probed_file, &probe.stdout).unwrap();
    std::fs::write(&true_file, serde_json::to_string(&true_link).unwrap()).unwrap();
    // 30 replications a candidate, not the default 10: neighbouring
    // windows differ by about 7% here (k 6 against 7 at this BER), which
    // 10 replications (half-width about 10%) do not resolve.
    let advice = advise(&probed_file, &["--replications", "30"]);
    let s = &advice["best"]["settings"];
    let ack = match s["ack"]["t2_ms"].as_u64() {
        Some(t2) => t2.to_string(),
        None => "at-once".into(),
    };
    let current = format!(
        "{},{},{},{ack},{},{}",
        s["window"], s["n1"], s["t1_ms"], s["persistence"], s["slot_ms"]
    );
    let on_true = advise(&true_file, &["--replications", "30", "--current", &current]);
    let followed = on_true["compared"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "current")
        .unwrap();
    let gain = followed["gain"]
        .as_f64()
        .expect("the probed advice never fails");
    assert!(
        gain <= 0.10,
        "the probed advice {current} carries {} bit/s on the true link, the true advice {} ({})",
        followed["simulated"]["throughput_bps"],
        on_true["best"]["simulated"]["throughput_bps"],
        on_true["best"]["settings"]
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn max_time_cuts_the_plan_without_an_interruption_and_a_second_ctrl_c_leaves_at_once() {
    let _alone = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("linklab-probe-stop-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("channel.toml");
    std::fs::write(&file, channel_file()).unwrap();
    let channel = Channel::start(&[file.to_str().unwrap()]);
    let kiss = |i: usize| format!("tcp:127.0.0.1:{}", channel.ports[i]);
    let listen = || {
        linklab(&[
            "listen",
            "--kiss",
            &kiss(1),
            "--mycall",
            "N0CALL-2",
            "--out",
            dir.to_str().unwrap(),
        ])
    };
    let probe_args = |max_time: &str| -> Vec<String> {
        [
            "probe",
            "--kiss",
            &kiss(0),
            "--mycall",
            "N0CALL-1",
            "--to",
            "N0CALL-2",
            "--bitrate",
            "38400",
            "--serial-bps",
            "115200",
            "--pause-ms",
            "100",
            "--response-ms",
            "3000",
            "--max-time",
            max_time,
        ]
        .map(String::from)
        .to_vec()
    };
    let probe = |max_time: &str| {
        let args = probe_args(max_time);
        linklab(&args.iter().map(String::as_str).collect::<Vec<_>>())
    };

    // --max-time: the plan is cut, the fit printed, and the exit is not
    // Ctrl-C's.
    let mut peer = listen();
    let out = finish_within(probe("8"), "probe --max-time 8", Duration::from_secs(60));
    let stderr = text(&out.stderr);
    assert!(out.status.success(), "probe: {}", tail(&out.stderr));
    assert!(stderr.contains("--max-time reached after"), "{stderr}");
    assert!(!stderr.contains("Ctrl-C"), "{stderr}");
    assert!(
        text(&out.stdout).contains("TXDELAY"),
        "{}",
        text(&out.stdout)
    );

    // Ctrl-C with the peer gone: the release would wait N2 x 3 s (15 s)
    // for a UA that never comes; a second Ctrl-C leaves at once with
    // status 130. Each step waits for the probe's line saying the one
    // before has happened (a signal before the handler is installed, or
    // two that arrive together, would test nothing).
    let args = probe_args("600");
    let mut running = Live::start(&args.iter().map(String::as_str).collect::<Vec<_>>());
    running.wait_for("connected to N0CALL-2");
    peer.child.kill().ok();
    peer.child.wait().ok();
    running.signal("INT");
    running.wait_for("Ctrl-C: releasing the link");
    running.signal("INT");
    // "At once": well inside the 15 s the release would take.
    let (status, stderr) = running.exit_within(Duration::from_secs(10));
    assert_eq!(status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("second Ctrl-C"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}
