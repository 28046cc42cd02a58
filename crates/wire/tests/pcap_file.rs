//! pcap files: golden headers, hand-made files, round trips, errors.

use std::time::Duration;

use linklab_wire::kiss::{Command, Frame, Port};
use linklab_wire::pcap::{
    Endian, Header, LinkType, PcapError, PcapReader, PcapWriter, Record, Resolution, MAX_SNAPLEN,
};
use proptest::prelude::*;

/// Writes `packets` with `header` into a byte vector.
fn write(header: Header, packets: &[(Duration, Vec<u8>)]) -> Vec<u8> {
    let mut writer = PcapWriter::with_header(Vec::new(), header).expect("header written");
    for (timestamp, packet) in packets {
        writer
            .write_packet(*timestamp, packet)
            .expect("packet written");
    }
    writer.into_inner()
}

#[test]
fn golden_header_bytes() {
    let header = Header::new(LinkType::Ax25Kiss).to_bytes();
    assert_eq!(
        header,
        [
            0xD4, 0xC3, 0xB2, 0xA1, // magic, microseconds, little-endian
            0x02, 0x00, 0x04, 0x00, // version 2.4
            0, 0, 0, 0, 0, 0, 0, 0, // reserved
            0x00, 0x00, 0x04, 0x00, // snaplen 262144
            0xCA, 0x00, 0x00, 0x00, // link type 202
        ]
    );
    let big_nanos = Header {
        endian: Endian::Big,
        resolution: Resolution::Nanos,
        snaplen: 0xFFFF,
        linktype: LinkType::Ax25,
    };
    assert_eq!(
        big_nanos.to_bytes(),
        [
            0xA1, 0xB2, 0x3C, 0x4D, 0x00, 0x02, 0x00, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x00,
            0xFF, 0xFF, 0x00, 0x00, 0x00, 0x03,
        ]
    );
}

#[test]
fn golden_record_bytes() {
    let mut writer = PcapWriter::new(Vec::new(), LinkType::Ax25).expect("header written");
    writer
        .write_packet(Duration::new(1_700_000_000, 123_456_789), &[0xAA, 0xBB])
        .expect("packet written");
    writer.flush().expect("flushed");
    let bytes = writer.into_inner();
    assert_eq!(
        bytes.get(24..),
        Some(
            &[
                0x00, 0xF1, 0x53, 0x65, // 1700000000 s
                0x40, 0xE2, 0x01, 0x00, // 123456 us (nanoseconds truncated)
                0x02, 0x00, 0x00, 0x00, // captured length
                0x02, 0x00, 0x00, 0x00, // original length
                0xAA, 0xBB,
            ][..]
        )
    );
}

#[test]
fn reads_hand_made_big_endian_nanosecond_file() {
    let file = [
        0xA1, 0xB2, 0x3C, 0x4D, // magic, nanoseconds, big-endian
        0x00, 0x02, 0x00, 0x04, // version 2.4
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, // reserved
        0x00, 0x00, 0xFF, 0xFF, // snaplen 65535
        0x04, 0x00, 0x00, 0xCA, // FCS bits set in the upper half, link type 202
        // record 1
        0x5F, 0x5E, 0x10, 0x00, // 1600000000 s
        0x07, 0x5B, 0xCD, 0x15, // 123456789 ns
        0x00, 0x00, 0x00, 0x03, // captured 3
        0x00, 0x00, 0x00, 0x05, // original 5
        0x00, 0x41, 0x42, //
        // record 2, empty
        0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
        0x00,
    ];
    let mut reader = PcapReader::new(&file).expect("header parses");
    assert_eq!(
        reader.header(),
        Header {
            endian: Endian::Big,
            resolution: Resolution::Nanos,
            snaplen: 65535,
            linktype: LinkType::Ax25Kiss,
        }
    );
    assert_eq!(
        reader.next(),
        Some(Ok(Record {
            timestamp: Duration::new(1_600_000_000, 123_456_789),
            orig_len: 5,
            data: &[0x00, 0x41, 0x42],
        }))
    );
    assert_eq!(
        reader.next(),
        Some(Ok(Record {
            timestamp: Duration::new(1, 2),
            orig_len: 0,
            data: &[]
        }))
    );
    assert_eq!(reader.next(), None);
}

#[test]
fn kiss_frames_round_trip_through_linktype_202() {
    let frames = [
        Frame::data(vec![0x96, 0x70, 0xC0, 0xDB]),
        Frame {
            port: Port::new(3).expect("port"),
            command: Command::TxDelay(30),
        },
    ];
    let packets: Vec<_> = frames
        .iter()
        .map(|frame| {
            let mut contents = Vec::new();
            frame.emit(&mut contents);
            (Duration::ZERO, contents)
        })
        .collect();
    let file = write(Header::new(LinkType::Ax25Kiss), &packets);
    let decoded: Vec<_> = PcapReader::new(&file)
        .expect("header parses")
        .map(|record| Frame::parse(record.expect("record reads").data))
        .collect();
    assert_eq!(decoded, frames.map(Ok));
}

#[test]
fn snaplen_cuts_packets() {
    let header = Header {
        snaplen: 4,
        ..Header::new(LinkType::Ax25)
    };
    let file = write(header, &[(Duration::ZERO, vec![1, 2, 3, 4, 5, 6])]);
    let records: Vec<_> = PcapReader::new(&file).expect("header parses").collect();
    assert_eq!(
        records,
        vec![Ok(Record {
            timestamp: Duration::ZERO,
            orig_len: 6,
            data: &[1, 2, 3, 4]
        })]
    );
}

#[test]
fn header_errors() {
    let good = Header::new(LinkType::Ax25).to_bytes();
    assert_eq!(
        PcapReader::new(&good[..23]).err(),
        Some(PcapError::TooShort { len: 23 })
    );
    let mut bad = good;
    bad[0] = 0;
    assert_eq!(
        PcapReader::new(&bad).err(),
        Some(PcapError::BadMagic { magic: 0x00C3_B2A1 })
    );
    let mut pcapng = good;
    pcapng[..4].copy_from_slice(&[0x0A, 0x0D, 0x0D, 0x0A]);
    assert_eq!(PcapReader::new(&pcapng).err(), Some(PcapError::Pcapng));
    let mut version = good;
    version[4] = 3;
    assert_eq!(
        PcapReader::new(&version).err(),
        Some(PcapError::UnsupportedVersion { major: 3, minor: 4 })
    );
    assert_eq!(
        PcapError::BadMagic { magic: 0x00C3_B2A1 }.to_string(),
        "not a pcap file: magic number 0x00C3B2A1 (read big-endian); expected 0xA1B2C3D4 or 0xA1B23C4D in either byte order"
    );
}

#[test]
fn truncated_record_data_is_precise() {
    let file = write(
        Header::new(LinkType::Ax25),
        &[(Duration::ZERO, vec![0; 5]), (Duration::ZERO, vec![0; 10])],
    );
    // Cut 3 octets of the second record's 10.
    let cut = file.get(..file.len() - 3).expect("long enough");
    let records: Vec<_> = PcapReader::new(cut).expect("header parses").collect();
    let error = PcapError::TruncatedRecordData {
        number: 2,
        offset: 45,
        need: 10,
        have: 7,
    };
    assert_eq!(records.get(1), Some(&Err(error.clone())));
    assert_eq!(records.len(), 2, "iteration stops after the error");
    assert_eq!(
        error.to_string(),
        "pcap record 2 at offset 45: need 10 octets of packet data, have 7"
    );
}

#[test]
fn truncated_record_header_is_precise() {
    let file = write(Header::new(LinkType::Ax25), &[(Duration::ZERO, vec![0; 5])]);
    let mut cut = file.clone();
    cut.extend_from_slice(&[1, 2, 3, 4, 5]);
    let records: Vec<_> = PcapReader::new(&cut).expect("header parses").collect();
    assert_eq!(
        records,
        vec![
            Ok(Record {
                timestamp: Duration::ZERO,
                orig_len: 5,
                data: &[0; 5]
            }),
            Err(PcapError::TruncatedRecordHeader {
                number: 2,
                offset: 45,
                need: 16,
                have: 5
            }),
        ]
    );
}

#[test]
fn absurd_caplen_is_rejected_without_allocating() {
    let mut file = Header::new(LinkType::Ax25).to_bytes().to_vec();
    file.extend_from_slice(&[0, 0, 0, 0, 0, 0, 0, 0]);
    file.extend_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    file.extend_from_slice(&0xFFFF_FFF0u32.to_le_bytes());
    let records: Vec<_> = PcapReader::new(&file).expect("header parses").collect();
    assert_eq!(
        records,
        vec![Err(PcapError::CaplenTooLarge {
            number: 1,
            offset: 24,
            caplen: 0xFFFF_FFF0,
            max: MAX_SNAPLEN,
        })]
    );
}

#[test]
fn linktype_numbers() {
    assert_eq!(LinkType::from(3), LinkType::Ax25);
    assert_eq!(LinkType::from(202), LinkType::Ax25Kiss);
    assert_eq!(LinkType::from(1), LinkType::Other(1));
    assert_eq!(LinkType::Ax25Kiss.code(), 202);
}

#[test]
fn writer_rejects_timestamps_past_2106() {
    let mut writer = PcapWriter::new(Vec::new(), LinkType::Ax25).expect("header written");
    let error = writer
        .write_packet(Duration::from_secs(1 << 32), &[])
        .expect_err("out of range");
    assert_eq!(
        error.to_string(),
        "timestamp of 4294967296 s since 1970 does not fit the 32-bit seconds field of pcap"
    );
}

fn any_header() -> impl Strategy<Value = Header> {
    (
        prop::sample::select(vec![Endian::Little, Endian::Big]),
        prop::sample::select(vec![Resolution::Micros, Resolution::Nanos]),
        prop::sample::select(vec![LinkType::Ax25, LinkType::Ax25Kiss]),
    )
        .prop_map(|(endian, resolution, linktype)| Header {
            endian,
            resolution,
            snaplen: MAX_SNAPLEN,
            linktype,
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1000,
        rng_seed: proptest::test_runner::RngSeed::Fixed(0x4c494e4b),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn write_read_round_trip(
        header in any_header(),
        packets in prop::collection::vec(
            (any::<u32>(), 0..1_000_000_000u32, prop::collection::vec(any::<u8>(), 0..300)),
            0..6,
        ),
    ) {
        let packets: Vec<(Duration, Vec<u8>)> = packets
            .into_iter()
            .map(|(secs, nanos, data)| (Duration::new(u64::from(secs), nanos), data))
            .collect();
        let file = write(header, &packets);
        let reader = PcapReader::new(&file).expect("header parses");
        prop_assert_eq!(reader.header(), header);
        let records: Vec<_> = reader.collect();
        prop_assert_eq!(records.len(), packets.len());
        for (record, (timestamp, data)) in records.into_iter().zip(&packets) {
            let record = record.expect("record reads");
            let expected_time = match header.resolution {
                Resolution::Micros => Duration::new(timestamp.as_secs(), timestamp.subsec_micros() * 1000),
                Resolution::Nanos => *timestamp,
            };
            prop_assert_eq!(record.timestamp, expected_time);
            prop_assert_eq!(record.data, data.as_slice());
            prop_assert_eq!(record.orig_len as usize, data.len());
        }
    }

    #[test]
    fn any_truncation_is_an_error_not_a_panic(
        packets in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..50), 1..4),
        cut in any::<prop::sample::Index>(),
    ) {
        let packets: Vec<_> = packets.into_iter().map(|p| (Duration::ZERO, p)).collect();
        let file = write(Header::new(LinkType::Ax25), &packets);
        let len = 24 + cut.index(file.len() - 24);
        let prefix = file.get(..len).expect("cut inside the file");
        let records: Vec<_> = PcapReader::new(prefix).expect("header parses").collect();
        let complete = records.iter().filter(|record| record.is_ok()).count();
        // Every complete record reads, and a cut inside a record is one error at the end.
        prop_assert!(complete < packets.len());
        prop_assert!(records.iter().take(complete).all(Result::is_ok));
        let boundary = records.len() == complete;
        let truncated = matches!(
            records.last(),
            Some(Err(PcapError::TruncatedRecordHeader { .. } | PcapError::TruncatedRecordData { .. }))
        );
        prop_assert!(boundary || truncated);
    }
}
