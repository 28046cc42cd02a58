//! Bundle IDs and status reports as the application interface carries
//! them (see [`crate::app`]).

use std::fmt;

use linklab_dtn::{BundleId, Eid, StatusKind, StatusReport};

use crate::app::{Message, ProtocolError};

/// A bundle's identity (RFC 9171 4.2.7, 5.9): its source and creation
/// timestamp.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct BundleRef {
    /// Source endpoint.
    pub source: String,
    /// Creation time, DTN milliseconds (0: the source has no clock).
    pub created: u64,
    /// Sequence number.
    pub seq: u64,
}

impl BundleRef {
    /// The identity of bundle `id` (a fragment's offset is left out: the
    /// application sees whole bundles).
    pub fn of(id: &BundleId) -> BundleRef {
        BundleRef {
            source: id.source.to_string(),
            created: id
                .timestamp
                .creation_time()
                .map_or(0, |time| time.millisecs()),
            seq: id.timestamp.sequence_number(),
        }
    }

    /// `message` with the fields `source`, `created` and `seq`.
    pub fn fields(&self, message: Message) -> Message {
        message
            .with("source", &self.source)
            .with("created", self.created)
            .with("seq", self.seq)
    }

    /// The identity in the fields of `message`.
    pub fn from_message(message: &Message) -> Result<BundleRef, ProtocolError> {
        Ok(BundleRef {
            source: message.field("source")?.to_string(),
            created: message.parsed("created")?,
            seq: message.parsed("seq")?,
        })
    }
}

impl fmt::Display for BundleRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}.{}", self.source, self.created, self.seq)
    }
}

/// The name of a status in a `REPORT` or a `SEND`'s `reports`.
pub fn kind_name(kind: StatusKind) -> &'static str {
    match kind {
        StatusKind::Received => "received",
        StatusKind::Forwarded => "forwarded",
        StatusKind::Delivered => "delivered",
        StatusKind::Deleted => "deleted",
    }
}

/// The status named `name`.
pub fn parse_kind(name: &str) -> Option<StatusKind> {
    [
        StatusKind::Received,
        StatusKind::Forwarded,
        StatusKind::Delivered,
        StatusKind::Deleted,
    ]
    .into_iter()
    .find(|kind| kind_name(*kind) == name)
}

/// The `REPORT` message for a status report from node `from` to local
/// endpoint `to`.
pub fn encode(to: &Eid, from: &Eid, report: &StatusReport) -> Message {
    let statuses: Vec<String> = report
        .statuses
        .iter()
        .map(|(kind, time)| match time {
            Some(ms) => format!("{}@{ms}", kind_name(*kind)),
            None => kind_name(*kind).to_string(),
        })
        .collect();
    BundleRef::of(&report.subject)
        .fields(Message::new("REPORT").with("to", to).with("from", from))
        .with("status", statuses.join(","))
        .with("reason", format!("{:?}", report.reason))
        // The report's length as an administrative record (RFC 9171 6.1),
        // encoded here again from what was decoded.
        .with("octets", report.encode().len())
}

/// A `REPORT` read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReportNotice {
    /// The node that reported.
    pub from: String,
    /// The bundle reported on.
    pub subject: BundleRef,
    /// The statuses, each with its DTN time if given.
    pub statuses: Vec<(StatusKind, Option<u64>)>,
    /// The reason code's name.
    pub reason: String,
    /// The length of the administrative record.
    pub octets: usize,
}

impl ReportNotice {
    /// Reads a `REPORT` message.
    pub fn parse(message: &Message) -> Result<ReportNotice, ProtocolError> {
        let mut statuses = Vec::new();
        for status in message
            .field("status")?
            .split(',')
            .filter(|s| !s.is_empty())
        {
            let (name, time) = match status.split_once('@') {
                Some((name, time)) => (
                    name,
                    Some(time.parse().map_err(|_| {
                        ProtocolError(format!("REPORT status {status:?}: bad time"))
                    })?),
                ),
                None => (status, None),
            };
            let kind = parse_kind(name)
                .ok_or_else(|| ProtocolError(format!("REPORT: unknown status {name:?}")))?;
            statuses.push((kind, time));
        }
        Ok(ReportNotice {
            from: message.field("from")?.to_string(),
            subject: BundleRef::from_message(message)?,
            statuses,
            reason: message.field("reason")?.to_string(),
            octets: message.parsed("octets")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linklab_dtn::hardy_bpv7::creation_timestamp::CreationTimestamp;
    use linklab_dtn::hardy_bpv7::dtn_time::DtnTime;
    use linklab_dtn::ReasonCode;

    #[test]
    fn reports_round_trip() {
        let subject = BundleId {
            source: "ipn:1.7".parse().unwrap(),
            timestamp: CreationTimestamp::from_parts(Some(DtnTime::new(812_000_000_123)), 4),
            fragment_info: None,
        };
        let report = StatusReport {
            subject,
            statuses: vec![
                (StatusKind::Received, Some(812_000_000_200)),
                (StatusKind::Delivered, None),
            ],
            reason: ReasonCode::NoAdditionalInformation,
        };
        let to: Eid = "ipn:1.7".parse().unwrap();
        let from: Eid = "ipn:2.0".parse().unwrap();
        let message = encode(&to, &from, &report);
        let line = String::from_utf8(message.encode()).unwrap();
        let (read, _) = Message::parse_line(&line).unwrap();
        let notice = ReportNotice::parse(&read).unwrap();
        assert_eq!(notice.from, "ipn:2.0");
        assert_eq!(
            notice.subject,
            BundleRef {
                source: "ipn:1.7".into(),
                created: 812_000_000_123,
                seq: 4
            }
        );
        assert_eq!(notice.statuses, report.statuses);
        assert_eq!(notice.octets, report.encode().len());
    }
}
