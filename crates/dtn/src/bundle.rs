//! Bundles on the wire: building, checking, editing for the next hop,
//! fragmenting, and the status-report administrative record, with
//! `hardy-bpv7` doing the encoding (RFC 9171 clause 4).

use std::borrow::Cow;
use std::ops::Range;
use std::time::Duration;

use hardy_bpv7::block::{self, Type};
use hardy_bpv7::bundle::{Bundle, FragmentInfo, Id, ParsedBundle};
use hardy_bpv7::crc::CrcType;
use hardy_bpv7::creation_timestamp::CreationTimestamp;
use hardy_bpv7::dtn_time::DtnTime;
use hardy_bpv7::editor::{Chunk, Editor};
use hardy_bpv7::eid::Eid;
use hardy_bpv7::hop_info::HopInfo;
use hardy_bpv7::status_report::{
    AdministrativeRecord, BundleStatusReport, ReasonCode, StatusAssertion,
};
use thiserror::Error;

use crate::crc::{self, CrcError};

/// Why received octets are not a bundle this agent accepts.
#[derive(Debug, Error)]
pub enum DecodeError {
    /// A block fails its CRC, or the octets are not a CBOR array of blocks
    /// (our own check, [`crc::verify_bundle`]).
    #[error(transparent)]
    Crc(#[from] CrcError),
    /// The bundle decoder refused it.
    #[error("not a valid BPv7 bundle: {0}")]
    Invalid(#[from] hardy_bpv7::Error),
}

/// Checks every block's CRC with our own code and then decodes the bundle.
pub fn decode(octets: &[u8]) -> Result<Bundle, DecodeError> {
    crc::verify_bundle(octets)?;
    let parsed = ParsedBundle::parse(octets, hardy_bpv7::bpsec::no_keys)?;
    Ok(parsed.bundle)
}

/// The octets of the payload block's data (block number 1, RFC 9171 4.3.2).
pub fn payload<'a>(bundle: &Bundle, octets: &'a [u8]) -> &'a [u8] {
    bundle
        .blocks
        .get(&1)
        .and_then(|block| block.payload(octets))
        .unwrap_or_default()
}

/// Where the payload data lies in the encoded bundle.
pub fn payload_range(bundle: &Bundle) -> Range<usize> {
    bundle
        .blocks
        .get(&1)
        .map(|block| block.payload_range())
        .unwrap_or(0..0)
}

/// The identity by which delivered bundles are remembered: source, creation
/// timestamp and, for a fragment, offset and ADU length (RFC 9171 4.3.1).
pub fn bundle_key(id: &Id) -> Vec<u8> {
    id.to_key().into_bytes()
}

/// The identity of the whole bundle a fragment belongs to.
pub fn whole(id: &Id) -> Id {
    Id {
        fragment_info: None,
        ..id.clone()
    }
}

/// DTN time (milliseconds since 2000-01-01 UTC) at which the bundle's
/// lifetime ends (RFC 9171 4.3.1 "Lifetime", 5.5): creation time plus
/// lifetime, or for a source without a clock, the time of reception plus
/// what the Bundle Age block says is left (4.4.2).
pub fn expires_at(bundle: &Bundle, received_at: u64) -> u64 {
    let lifetime = millis(bundle.lifetime);
    match bundle.id.timestamp.creation_time() {
        Some(created) if created.millisecs() != 0 => created.millisecs().saturating_add(lifetime),
        _ => {
            let age = bundle.age.map(millis).unwrap_or(0);
            received_at.saturating_add(lifetime.saturating_sub(age))
        }
    }
}

fn millis(span: Duration) -> u64 {
    u64::try_from(span.as_millis()).unwrap_or(u64::MAX)
}

/// What an application (or the agent itself) asks to send.
pub struct Draft<'a> {
    /// Source endpoint.
    pub source: Eid,
    /// Destination endpoint.
    pub destination: Eid,
    /// Where status reports go.
    pub report_to: Eid,
    /// Bundle processing control flags (4.2.3).
    pub flags: hardy_bpv7::bundle::Flags,
    /// Lifetime (4.3.1).
    pub lifetime: Duration,
    /// CRC type of every block.
    pub crc_type: CrcType,
    /// Hop limit for a Hop Count block (4.4.3), if any.
    pub hop_limit: Option<u64>,
    /// Creation time (DTN milliseconds) and sequence number (4.2.7).
    pub created: (u64, u64),
    /// The application data unit.
    pub payload: &'a [u8],
}

/// Encodes a new bundle.
pub fn build(draft: Draft<'_>) -> Result<(Bundle, Box<[u8]>), hardy_bpv7::builder::Error> {
    let mut builder = hardy_bpv7::builder::Builder::new(draft.source, draft.destination)
        .with_flags(draft.flags)
        .with_crc_type(draft.crc_type)
        .with_report_to(draft.report_to)
        .with_lifetime(draft.lifetime);
    if let Some(limit) = draft.hop_limit {
        builder = builder.with_hop_count(&HopInfo { limit, count: 0 });
    }
    let (created, sequence) = draft.created;
    // A node without a clock (DTN time 0) says so with creation time 0 and
    // gives the bundle's age instead (4.2.7, 4.4.2), in every fragment.
    let created = if created == 0 {
        builder = builder
            .add_extension_block(Type::BundleAge)?
            .with_flags(block::Flags {
                must_replicate: true,
                ..block::Flags::default()
            })
            .build(Cow::Owned(hardy_cbor::encode::emit(&0u64).0));
        None
    } else {
        Some(DtnTime::new(created))
    };
    builder
        .with_payload(Cow::Borrowed(draft.payload))
        .build(CreationTimestamp::from_parts(created, sequence))
}

/// An edit the bundle library refused.
#[derive(Debug, Error)]
#[error("cannot edit bundle: {0}")]
pub struct EditError(String);

fn edit_error(e: impl std::fmt::Display) -> EditError {
    EditError(e.to_string())
}

/// The bundle as it goes to the next hop (RFC 9171 4.4): a Previous Node
/// block naming this node, the Hop Count block's count raised by one and
/// the Bundle Age block's age raised by the time spent here. Also returns
/// whether the hop count now exceeds its limit (the bundle must then be
/// deleted instead, 4.4.3).
pub fn for_next_hop(
    bundle: &Bundle,
    octets: &[u8],
    node: &Eid,
    dwell: u64,
) -> Result<(Vec<u8>, bool), EditError> {
    let previous_node = hardy_cbor::encode::emit(node).0;
    let mut editor = Editor::new(bundle, octets)
        .insert_block(Type::PreviousNode)
        .map_err(|(_, e)| edit_error(e))?
        .with_data(Cow::Owned(previous_node))
        .rebuild();
    let mut exceeded = false;
    if let Some(hops) = &bundle.hop_count {
        let count = hops.count.saturating_add(1);
        exceeded = count > hops.limit;
        let data = hardy_cbor::encode::emit(&HopInfo {
            limit: hops.limit,
            count,
        })
        .0;
        editor = editor
            .insert_block(Type::HopCount)
            .map_err(|(_, e)| edit_error(e))?
            .with_data(Cow::Owned(data))
            .rebuild();
    }
    if let Some(age) = bundle.age {
        let data = hardy_cbor::encode::emit(&millis(age).saturating_add(dwell)).0;
        editor = editor
            .insert_block(Type::BundleAge)
            .map_err(|(_, e)| edit_error(e))?
            .with_data(Cow::Owned(data))
            .rebuild();
    }
    let chunks = editor.rebuild().map_err(edit_error)?;
    Ok((Chunk::flatten(chunks, octets).into_vec(), exceeded))
}

/// A fragment of the bundle carrying `range` of its payload (RFC 9171
/// 5.8): the primary block with the fragment flag, the offset into the
/// original ADU and its total length (that of a fragment being split
/// again, or else `adu_length`); every extension block marked "must
/// replicate" and, in the fragment at offset 0 only, the others.
pub fn fragment(
    bundle: &Bundle,
    octets: &[u8],
    range: Range<usize>,
    adu_length: u64,
) -> Result<Vec<u8>, EditError> {
    let data = payload(bundle, octets);
    if range.start > range.end || range.end > data.len() {
        return Err(EditError(format!(
            "fragment {range:?} of a {}-octet payload",
            data.len()
        )));
    }
    let (base, total) = match &bundle.id.fragment_info {
        Some(info) => (info.offset, info.total_adu_length),
        None => (0, adu_length),
    };
    let offset = base + range.start as u64;
    let mut editor = Editor::new(bundle, octets)
        .with_fragment_info(Some(FragmentInfo {
            offset,
            total_adu_length: total,
        }))
        .map_err(|(_, e)| edit_error(e))?
        .update_block(1)
        .map_err(|(_, e)| edit_error(e))?
        .with_data(Cow::Borrowed(&data[range]))
        .rebuild();
    if offset != 0 {
        for (number, block) in &bundle.blocks {
            if *number > 1 && !block.flags.must_replicate {
                editor = editor
                    .remove_block(*number)
                    .map_err(|(_, e)| edit_error(e))?;
            }
        }
    }
    let chunks = editor.rebuild().map_err(edit_error)?;
    Ok(Chunk::flatten(chunks, octets).into_vec())
}

/// One status of a bundle status report (RFC 9171 6.1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatusKind {
    /// "Reporting node received bundle".
    Received,
    /// "Reporting node forwarded the bundle".
    Forwarded,
    /// "Reporting node delivered the bundle".
    Delivered,
    /// "Reporting node deleted the bundle".
    Deleted,
}

impl StatusKind {
    /// Whether the bundle's flags ask for this report (4.2.3).
    pub fn requested(self, flags: &hardy_bpv7::bundle::Flags) -> bool {
        match self {
            StatusKind::Received => flags.receipt_report_requested,
            StatusKind::Forwarded => flags.forward_report_requested,
            StatusKind::Delivered => flags.delivery_report_requested,
            StatusKind::Deleted => flags.delete_report_requested,
        }
    }
}

/// A bundle status report, as sent or received (RFC 9171 6.1.1).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusReport {
    /// The bundle (or fragment) the report is about.
    pub subject: Id,
    /// The statuses asserted, each with its DTN time if the subject asked
    /// for times ("report status time" flag).
    pub statuses: Vec<(StatusKind, Option<u64>)>,
    /// Why (6.1.1 reason codes).
    pub reason: ReasonCode,
}

impl StatusReport {
    /// The administrative record (6.1) carrying this report, as a bundle
    /// payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut report = BundleStatusReport {
            bundle_id: self.subject.clone(),
            reason: self.reason,
            ..BundleStatusReport::default()
        };
        for (kind, time) in &self.statuses {
            let assertion = Some(StatusAssertion(time.map(|ms| DtnTime::new(ms).into())));
            match kind {
                StatusKind::Received => report.received = assertion,
                StatusKind::Forwarded => report.forwarded = assertion,
                StatusKind::Delivered => report.delivered = assertion,
                StatusKind::Deleted => report.deleted = assertion,
            }
        }
        hardy_cbor::encode::emit(&AdministrativeRecord::BundleStatusReport(report)).0
    }

    /// Reads an administrative record; `None` unless it is a well-formed
    /// bundle status report.
    pub fn decode(payload: &[u8]) -> Option<StatusReport> {
        let AdministrativeRecord::BundleStatusReport(report) =
            hardy_cbor::decode::parse::<AdministrativeRecord>(payload).ok()?;
        let mut statuses = Vec::new();
        for (kind, assertion) in [
            (StatusKind::Received, report.received),
            (StatusKind::Forwarded, report.forwarded),
            (StatusKind::Delivered, report.delivered),
            (StatusKind::Deleted, report.deleted),
        ] {
            if let Some(StatusAssertion(time)) = assertion {
                statuses.push((kind, time.map(|t| DtnTime::saturating_from(t).millisecs())));
            }
        }
        Some(StatusReport {
            subject: report.bundle_id,
            statuses,
            reason: report.reason,
        })
    }
}
