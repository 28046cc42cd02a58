//! Session and transfer extension items, RFC 9174 sections 4.8 and 5.2.5.

use super::{length_field, DecodeError, EncodeError, Reader};

/// Transfer extension item type 0x0001, Transfer Length (RFC 9174
/// section 5.2.5.1): an 8-octet total length of the transfer's data.
pub const TRANSFER_LENGTH: u16 = 0x0001;

/// Item flag CRITICAL (RFC 9174 sections 4.8 and 5.2.5, Tables 4 and 9).
const CRITICAL: u8 = 0x01;

/// One extension item: the same layout serves session extensions (in
/// SESS_INIT, RFC 9174 section 4.8) and transfer extensions (in the first
/// XFER_SEGMENT of a transfer, section 5.2.5).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionItem {
    /// The Item Flags octet, reserved bits included.
    pub flags: u8,
    /// The Item Type.
    pub item_type: u16,
    /// The Item Value (at most 65535 octets).
    pub value: Vec<u8>,
}

impl ExtensionItem {
    /// Whether the receiver must understand this item: an unknown critical
    /// session item ends the session with "Contact Failure" (section
    /// 4.8), an unknown critical transfer item refuses the transfer with
    /// "Extension Failure" (section 5.2.5).
    pub fn is_critical(&self) -> bool {
        self.flags & CRITICAL != 0
    }

    /// The non-critical Transfer Length extension for `length` octets.
    pub fn transfer_length(length: u64) -> Self {
        ExtensionItem {
            flags: 0,
            item_type: TRANSFER_LENGTH,
            value: length.to_be_bytes().to_vec(),
        }
    }

    /// The total length this item declares, if it is a well-formed
    /// Transfer Length item.
    pub fn as_transfer_length(&self) -> Option<u64> {
        if self.item_type != TRANSFER_LENGTH {
            return None;
        }
        self.value
            .as_slice()
            .try_into()
            .ok()
            .map(u64::from_be_bytes)
    }
}

/// Decodes a whole item list of exactly `list.len()` octets.
pub(super) fn decode_list(
    message: &'static str,
    list: &[u8],
) -> Result<Vec<ExtensionItem>, DecodeError> {
    let misframed = || DecodeError::ExtensionsMisframed {
        message,
        length: list.len() as u32,
    };
    let mut reader = Reader::new(list);
    let mut items = Vec::new();
    while reader.pos < list.len() {
        let flags = reader.u8().ok_or_else(misframed)?;
        let item_type = reader.u16().ok_or_else(misframed)?;
        let length = reader.u16().ok_or_else(misframed)?;
        let value = reader.bytes(length.into()).ok_or_else(misframed)?;
        items.push(ExtensionItem {
            flags,
            item_type,
            value: value.to_vec(),
        });
    }
    Ok(items)
}

/// Appends the Extension Items Length (32 bits) and the items.
pub(super) fn encode_list(
    message: &'static str,
    items: &[ExtensionItem],
    out: &mut Vec<u8>,
) -> Result<(), EncodeError> {
    let mut list = Vec::new();
    for item in items {
        list.push(item.flags);
        list.extend(item.item_type.to_be_bytes());
        let length: u16 = length_field("extension item value", item.value.len())?;
        list.extend(length.to_be_bytes());
        list.extend(&item.value);
    }
    let length: u32 = length_field(message, list.len())?;
    out.extend(length.to_be_bytes());
    out.extend(list);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transfer_length_item() {
        let item = ExtensionItem::transfer_length(0x0102);
        assert!(!item.is_critical());
        assert_eq!(item.as_transfer_length(), Some(0x0102));
        let mut out = Vec::new();
        encode_list("XFER_SEGMENT", std::slice::from_ref(&item), &mut out).unwrap();
        assert_eq!(out, [0, 0, 0, 13, 0, 0, 1, 0, 8, 0, 0, 0, 0, 0, 0, 1, 2]);
        assert_eq!(decode_list("XFER_SEGMENT", &out[4..]), Ok(vec![item]));
        let short = ExtensionItem {
            value: vec![1, 2],
            ..ExtensionItem::transfer_length(0)
        };
        assert_eq!(short.as_transfer_length(), None);
    }

    #[test]
    fn items_must_fill_the_list() {
        assert_eq!(
            decode_list("SESS_INIT", &[1, 0, 5, 0, 2, 9]),
            Err(DecodeError::ExtensionsMisframed {
                message: "SESS_INIT",
                length: 6
            })
        );
    }
}
