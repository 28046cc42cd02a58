//! The part of a bundle that got through before a transfer broke off, made
//! whole again for reactive fragmentation (RFC 9171 5.8).

use crate::crc::{crc32c, Length, Reader, MAJOR_ARRAY, MAJOR_BYTES, MAJOR_UNSIGNED};

/// Completes `prefix`, the first octets of a bundle: every block before the
/// payload block must be whole, and the payload block (the last one, 4.1)
/// is cut to the data that arrived and given a new CRC of its own type.
/// Returns the bundle and the length of the payload the sender's bundle
/// had, or `None` if the prefix holds no payload data.
pub(crate) fn complete(prefix: &[u8]) -> Option<(Vec<u8>, u64)> {
    let mut reader = Reader {
        octets: prefix,
        at: 0,
    };
    let top = reader.head().ok()?;
    if top.major != MAJOR_ARRAY || !matches!(top.length, Length::Indefinite) {
        return None;
    }
    // The primary block, whole.
    reader.skip_item(0).ok()?;
    loop {
        let start = reader.at;
        let mut block = Reader {
            octets: prefix,
            at: start,
        };
        let items = definite(&mut block, MAJOR_ARRAY)?;
        let block_type = definite(&mut block, MAJOR_UNSIGNED)?;
        if block_type != 1 {
            reader.skip_item(0).ok()?;
            continue;
        }
        let number = definite(&mut block, MAJOR_UNSIGNED)?;
        let flags = definite(&mut block, MAJOR_UNSIGNED)?;
        let crc_type = definite(&mut block, MAJOR_UNSIGNED)?;
        let length = definite(&mut block, MAJOR_BYTES)?;
        let expected_items = match crc_type {
            0 => 5,
            1 | 2 => 6,
            _ => return None,
        };
        if number != 1 || items != expected_items {
            return None;
        }
        let arrived = (prefix.len() - block.at).min(usize::try_from(length).ok()?);
        if arrived == 0 {
            return None;
        }
        let data = &prefix[block.at..block.at + arrived];
        let mut payload = Vec::with_capacity(arrived + 24);
        put_head(&mut payload, MAJOR_ARRAY, items);
        for value in [1, 1, flags, crc_type] {
            put_head(&mut payload, MAJOR_UNSIGNED, value);
        }
        put_head(&mut payload, MAJOR_BYTES, arrived as u64);
        payload.extend_from_slice(data);
        match crc_type {
            1 => {
                payload.extend_from_slice(&[0x42, 0, 0]);
                let crc = linklab_wire::fcs::fcs16(&payload).to_be_bytes();
                let end = payload.len();
                payload[end - 2..].copy_from_slice(&crc);
            }
            2 => {
                payload.extend_from_slice(&[0x44, 0, 0, 0, 0]);
                let crc = crc32c(&payload).to_be_bytes();
                let end = payload.len();
                payload[end - 4..].copy_from_slice(&crc);
            }
            _ => {}
        }
        let mut bundle = prefix[..start].to_vec();
        bundle.extend_from_slice(&payload);
        bundle.push(0xFF);
        return Some((bundle, length));
    }
}

/// Reads a head of `major` type with a definite argument.
fn definite(reader: &mut Reader<'_>, major: u8) -> Option<u64> {
    let head = reader.head().ok()?;
    match head.length {
        Length::Definite(value) if head.major == major => Some(value),
        _ => None,
    }
}

/// Writes a CBOR head in its shortest form (RFC 8949 4.2.1).
fn put_head(out: &mut Vec<u8>, major: u8, value: u64) {
    let major = major << 5;
    match value {
        0..=23 => out.push(major | value as u8),
        24..=0xFF => out.extend_from_slice(&[major | 24, value as u8]),
        0x100..=0xFFFF => {
            out.push(major | 25);
            out.extend_from_slice(&(value as u16).to_be_bytes());
        }
        0x1_0000..=0xFFFF_FFFF => {
            out.push(major | 26);
            out.extend_from_slice(&(value as u32).to_be_bytes());
        }
        _ => {
            out.push(major | 27);
            out.extend_from_slice(&value.to_be_bytes());
        }
    }
}
