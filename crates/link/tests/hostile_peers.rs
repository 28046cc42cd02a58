//! The link engines against hostile peers: every behaviour of
//! [`hostile::Behaviour`] against every link mode of
//! [`hostile::LinkMode`], each run checked by [`hostile::check`] (exactly
//! once and in order, nothing lost silently, at most 2k + 2 frames per T1
//! beyond one per frame received while nothing progresses, a give-up
//! within (N2 + 1) x T1, every poll answered). A behaviour a mode cannot
//! express is skipped with the reason.

mod hdlc_pair;
mod hostile;
mod support;

use hostile::{check, Behaviour, LinkMode};

/// Runs `behaviour` against every mode that can express it.
fn against_every_mode(behaviour: Behaviour) {
    for (i, mode) in LinkMode::ALL.into_iter().enumerate() {
        if let Some(why) = mode.excludes(behaviour) {
            eprintln!("{mode:?}: {behaviour:?} skipped: {why}");
            continue;
        }
        let outcome = check(mode, behaviour, 1000 + i as u64);
        eprintln!(
            "{mode:?}: {behaviour:?}: delivered {}, gave up at {:?}, {} frames sent, ended at {:?}",
            outcome.delivered(),
            outcome.gave_up(),
            outcome.a_sent.len(),
            outcome.end
        );
    }
}

#[test]
fn a_peer_that_rejects_for_ever_is_given_up_on() {
    against_every_mode(Behaviour::RejectForever);
}

#[test]
fn a_peer_that_answers_every_poll_with_a_stale_nr_is_given_up_on() {
    against_every_mode(Behaviour::StalePollAnswers);
}

#[test]
fn a_peer_busy_for_ever_is_given_up_on() {
    against_every_mode(Behaviour::BusyForever);
}

#[test]
fn late_answers_still_deliver() {
    against_every_mode(Behaviour::LateAnswers);
}

#[test]
fn a_path_that_duplicates_delivers_exactly_once() {
    against_every_mode(Behaviour::Duplicate);
}

#[test]
fn a_path_that_reorders_delivers_exactly_once_or_resets_and_says_so() {
    against_every_mode(Behaviour::ReorderAndDuplicate);
}

#[test]
fn repeated_rej_and_srej_cost_one_retransmission() {
    against_every_mode(Behaviour::RepeatedSupervisory);
}

#[test]
fn frmr_resets_the_link_and_loses_nothing_silently() {
    against_every_mode(Behaviour::Frmr);
}

#[test]
fn a_peer_restarting_mid_transfer_loses_nothing_silently() {
    against_every_mode(Behaviour::ResetMidTransfer);
}

#[test]
fn wrong_command_response_bits_do_not_stop_the_transfer() {
    against_every_mode(Behaviour::WrongCommandResponse);
}

#[test]
fn dm_while_connected_ends_the_link_and_says_so() {
    against_every_mode(Behaviour::DmWhileConnected);
}

#[test]
fn an_absurd_xid_leaves_the_link_sane() {
    against_every_mode(Behaviour::AbsurdXid);
}

#[test]
fn a_peer_overrunning_the_window_is_received_exactly_once() {
    against_every_mode(Behaviour::WindowOverrun);
}

#[test]
fn a_flood_of_polls_is_answered_and_the_transfer_completes() {
    against_every_mode(Behaviour::PollFlood);
}
