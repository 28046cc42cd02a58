//! Fuzzes the pcap reader: arbitrary octets never panic, records stay
//! within the input and the caplen bound, iteration ends after an error,
//! and records that the writer can write read back the same.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linklab_wire::pcap::{Header, PcapReader, PcapWriter, MAX_SNAPLEN};

fuzz_target!(|input: &[u8]| {
    let Ok(mut reader) = PcapReader::new(input) else {
        return;
    };
    let header = Header {
        snaplen: MAX_SNAPLEN,
        ..reader.header()
    };
    let mut writer = PcapWriter::with_header(Vec::new(), header).expect("Vec never fails");
    let mut written = Vec::new();
    let mut total = 0usize;
    for record in reader.by_ref() {
        match record {
            Ok(record) => {
                assert!(record.data.len() <= MAX_SNAPLEN as usize);
                total += record.data.len();
                assert!(total <= input.len());
                if writer.write_packet(record.timestamp, record.data).is_ok() {
                    written.push(record);
                }
            }
            Err(_) => break,
        }
    }
    assert!(reader.next().is_none());

    let file = writer.into_inner();
    let reread = PcapReader::new(&file).expect("own header parses");
    assert_eq!(reread.header(), header);
    let mut count = 0;
    for (again, record) in reread.zip(&written) {
        let again = again.expect("own record reads");
        assert_eq!(again.timestamp, record.timestamp);
        assert_eq!(again.data, record.data);
        count += 1;
    }
    assert_eq!(count, written.len());
});
