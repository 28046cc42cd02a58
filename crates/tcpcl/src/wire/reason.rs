//! Reason codes of MSG_REJECT, XFER_REFUSE and SESS_TERM, from the IANA
//! registries of RFC 9174 sections 9.6 to 9.8. Codes that are not (yet)
//! assigned are kept as `Unassigned(code)`: a receiver does not fail on
//! them, and they encode back unchanged.

use core::fmt;

macro_rules! reason_code {
    (
        $(#[$doc:meta])*
        $name:ident { $( $(#[$vdoc:meta])* $variant:ident = $code:literal => $text:literal, )* }
    ) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[$vdoc])* $variant, )*
            /// A code with no assigned meaning.
            Unassigned(u8),
        }

        impl $name {
            /// The reason for `code`.
            pub fn from_code(code: u8) -> Self {
                match code {
                    $( $code => $name::$variant, )*
                    other => $name::Unassigned(other),
                }
            }

            /// The code on the wire.
            pub fn code(self) -> u8 {
                match self {
                    $( $name::$variant => $code, )*
                    $name::Unassigned(code) => code,
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $( $name::$variant => f.write_str($text), )*
                    $name::Unassigned(code) => write!(f, "unassigned reason 0x{code:02x}"),
                }
            }
        }
    };
}

reason_code! {
    /// MSG_REJECT Reason Codes, RFC 9174 section 5.1.2, Table 6.
    RejectReason {
        /// The message type is not known to the receiver.
        MessageTypeUnknown = 0x01 => "message type unknown",
        /// The message is known but not allowed with the negotiated
        /// session parameters.
        MessageUnsupported = 0x02 => "message unsupported",
        /// The message is known but not expected in the session's state.
        MessageUnexpected = 0x03 => "message unexpected",
    }
}

reason_code! {
    /// XFER_REFUSE Reason Codes, RFC 9174 section 5.2.4, Table 8.
    RefuseReason {
        /// Reason unknown or not specified.
        Unknown = 0x00 => "unknown",
        /// The receiver already has the complete bundle: the sender may
        /// consider it delivered.
        Completed = 0x01 => "completed",
        /// The receiver's resources are exhausted.
        NoResources = 0x02 => "no resources",
        /// The receiver wants the whole transfer sent again.
        Retransmit = 0x03 => "retransmit",
        /// Something in the bundle or extension data is not acceptable.
        NotAcceptable = 0x04 => "not acceptable",
        /// A transfer extension item failed (an unknown critical item).
        ExtensionFailure = 0x05 => "extension failure",
        /// The session is being terminated: no new transfers.
        SessionTerminating = 0x06 => "session terminating",
    }
}

reason_code! {
    /// SESS_TERM Reason Codes, RFC 9174 section 6.1, Table 11.
    SessTermReason {
        /// Reason unknown or not specified.
        Unknown = 0x00 => "unknown",
        /// The session has been idle too long (sections 5.1.1 and 6.2).
        IdleTimeout = 0x01 => "idle timeout",
        /// The contact header versions cannot be reconciled (section 4.3).
        VersionMismatch = 0x02 => "version mismatch",
        /// The entity is too busy for the session.
        Busy = 0x03 => "busy",
        /// A contact header or SESS_INIT parameter could not be
        /// negotiated (sections 4.3, 4.7 and 4.8).
        ContactFailure = 0x04 => "contact failure",
        /// The entity ran out of resources (e.g. Transfer IDs, 5.2.1).
        ResourceExhaustion = 0x05 => "resource exhaustion",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_code_round_trips() {
        for code in 0..=255u8 {
            assert_eq!(RejectReason::from_code(code).code(), code);
            assert_eq!(RefuseReason::from_code(code).code(), code);
            assert_eq!(SessTermReason::from_code(code).code(), code);
        }
        assert_eq!(
            SessTermReason::from_code(5),
            SessTermReason::ResourceExhaustion
        );
        assert_eq!(RefuseReason::from_code(7), RefuseReason::Unassigned(7));
        assert_eq!(
            RejectReason::from_code(0).to_string(),
            "unassigned reason 0x00"
        );
    }
}
