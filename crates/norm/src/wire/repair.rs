//! Repair requests, the content of NORM_NACK and NORM_CMD(REPAIR_ADV)
//! (RFC 5740 section 4.3.1), for FEC Encoding ID 5.

use super::{DecodeError, EncodeError, PayloadId, FEC_ID_RS8};

/// The `form` of a repair request (RFC 5740 section 4.3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RepairForm {
    /// Each item names one symbol, block, object or NORM_INFO.
    Items = 1,
    /// Items come in pairs: the first and last of an inclusive range.
    Ranges = 2,
    /// Each item carries an erasure count in place of the symbol ID.
    Erasures = 3,
}

/// The `flags` of a repair request (RFC 5740 section 4.3.1).
pub mod repair_flags {
    /// The items name encoding symbols (segments).
    pub const SEGMENT: u8 = 0x01;
    /// The items name whole source blocks.
    pub const BLOCK: u8 = 0x02;
    /// NORM_INFO is requested for the objects named.
    pub const INFO: u8 = 0x04;
    /// The items name whole objects.
    pub const OBJECT: u8 = 0x08;
}

/// One repair item: object, source block and symbol (or, in the
/// [`RepairForm::Erasures`] form, an erasure count in `payload_id.esi`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct RepairItem {
    /// The object's NormTransportId.
    pub object_id: u16,
    /// Source block number and encoding symbol ID.
    pub payload_id: PayloadId,
}

/// Octets per repair item for FEC Encoding ID 5: fec_id, reserved,
/// object ID and the 4-octet FEC Payload ID.
pub const ITEM_LEN: usize = 8;

/// One repair request: a form, flags and its items.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepairRequest {
    /// How the items are to be read.
    pub form: RepairForm,
    /// [`repair_flags`] bits.
    pub flags: u8,
    /// The items (an even number in the [`RepairForm::Ranges`] form).
    pub items: Vec<RepairItem>,
}

impl RepairRequest {
    /// Encoded length in octets.
    pub fn len(&self) -> usize {
        4 + ITEM_LEN * self.items.len()
    }

    /// Whether the request has no items.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub(crate) fn encode(&self, out: &mut Vec<u8>) -> Result<(), EncodeError> {
        let item_bytes = ITEM_LEN * self.items.len();
        if self.items.is_empty()
            || item_bytes > usize::from(u16::MAX)
            || (self.form == RepairForm::Ranges && !self.items.len().is_multiple_of(2))
        {
            return Err(EncodeError::BadRepairRequest);
        }
        out.extend_from_slice(&[self.form as u8, self.flags]);
        out.extend_from_slice(&(item_bytes as u16).to_be_bytes());
        for item in &self.items {
            out.extend_from_slice(&[FEC_ID_RS8, 0]);
            out.extend_from_slice(&item.object_id.to_be_bytes());
            out.extend_from_slice(&item.payload_id.encode()?);
        }
        Ok(())
    }

    /// Decodes the list of repair requests that fills `bytes`.
    pub(crate) fn decode_all(mut bytes: &[u8]) -> Result<Vec<RepairRequest>, DecodeError> {
        let mut requests = Vec::new();
        while !bytes.is_empty() {
            if bytes.len() < 4 {
                return Err(DecodeError::BadRepairRequest);
            }
            let form = match bytes[0] {
                1 => RepairForm::Items,
                2 => RepairForm::Ranges,
                3 => RepairForm::Erasures,
                _ => return Err(DecodeError::BadRepairRequest),
            };
            let flags = bytes[1];
            let len = usize::from(u16::from_be_bytes([bytes[2], bytes[3]]));
            let rest = &bytes[4..];
            if len == 0 || len % ITEM_LEN != 0 || len > rest.len() {
                return Err(DecodeError::BadRepairRequest);
            }
            let mut items = Vec::with_capacity(len / ITEM_LEN);
            for item in rest[..len].chunks_exact(ITEM_LEN) {
                if item[0] != FEC_ID_RS8 {
                    return Err(DecodeError::UnsupportedFecId(item[0]));
                }
                items.push(RepairItem {
                    object_id: u16::from_be_bytes([item[2], item[3]]),
                    payload_id: PayloadId::decode([item[4], item[5], item[6], item[7]]),
                });
            }
            if form == RepairForm::Ranges && !items.len().is_multiple_of(2) {
                return Err(DecodeError::BadRepairRequest);
            }
            requests.push(RepairRequest { form, flags, items });
            bytes = &rest[len..];
        }
        Ok(requests)
    }
}
