//! Cause and diagnostic codes: clearing causes (X.25 (10/96) Table 5-5),
//! resetting causes (Table 5-6), restarting causes (Table 5-7) and the
//! diagnostic codes of Annex E (Table E-1). A DTE sends cause 0 ("DTE
//! originated") or a value with bit 8 set (5.2.3.3.1); the other values
//! come from the network.

/// Cause 0, "DTE originated", in clear, reset and restart packets a DTE
/// sends.
pub const DTE_ORIGINATED: u8 = 0x00;

/// Clearing causes (Table 5-5).
pub mod clearing {
    /// Number busy.
    pub const NUMBER_BUSY: u8 = 0x01;
    /// Invalid facility request.
    pub const INVALID_FACILITY_REQUEST: u8 = 0x03;
    /// Network congestion.
    pub const NETWORK_CONGESTION: u8 = 0x05;
    /// Out of order.
    pub const OUT_OF_ORDER: u8 = 0x09;
    /// Access barred.
    pub const ACCESS_BARRED: u8 = 0x0B;
    /// Not obtainable.
    pub const NOT_OBTAINABLE: u8 = 0x0D;
    /// Remote procedure error.
    pub const REMOTE_PROCEDURE_ERROR: u8 = 0x11;
    /// Local procedure error.
    pub const LOCAL_PROCEDURE_ERROR: u8 = 0x13;
    /// Incompatible destination.
    pub const INCOMPATIBLE_DESTINATION: u8 = 0x21;
}

/// Resetting causes (Table 5-6).
pub mod resetting {
    /// Remote procedure error.
    pub const REMOTE_PROCEDURE_ERROR: u8 = 0x03;
    /// Local procedure error.
    pub const LOCAL_PROCEDURE_ERROR: u8 = 0x05;
    /// Network congestion.
    pub const NETWORK_CONGESTION: u8 = 0x07;
    /// Network operational.
    pub const NETWORK_OPERATIONAL: u8 = 0x0F;
}

/// Restarting causes (Table 5-7).
pub mod restarting {
    /// Local procedure error.
    pub const LOCAL_PROCEDURE_ERROR: u8 = 0x01;
    /// Network congestion.
    pub const NETWORK_CONGESTION: u8 = 0x03;
    /// Network operational.
    pub const NETWORK_OPERATIONAL: u8 = 0x07;
}

/// Diagnostic codes (Annex E, Table E-1).
pub mod diagnostic {
    /// 0: no additional information.
    pub const NO_ADDITIONAL_INFORMATION: u8 = 0;
    /// 1: invalid P(S).
    pub const INVALID_PS: u8 = 1;
    /// 2: invalid P(R).
    pub const INVALID_PR: u8 = 2;
    /// 16: packet type invalid; 17-29 add the state in which it arrived
    /// (r1-r3 are 17-19, p1-p7 are 20-26, d1-d3 are 27-29).
    pub const PACKET_TYPE_INVALID: u8 = 16;
    /// 33: unidentifiable packet.
    pub const UNIDENTIFIABLE_PACKET: u8 = 33;
    /// 36: packet on unassigned logical channel.
    pub const UNASSIGNED_LOGICAL_CHANNEL: u8 = 36;
    /// 38: packet too short.
    pub const PACKET_TOO_SHORT: u8 = 38;
    /// 39: packet too long.
    pub const PACKET_TOO_LONG: u8 = 39;
    /// 40: invalid general format identifier.
    pub const INVALID_GFI: u8 = 40;
    /// 41: restart or registration packet with non-zero LCI.
    pub const RESTART_WITH_NONZERO_LCI: u8 = 41;
    /// 43: unauthorized interrupt confirmation.
    pub const UNAUTHORIZED_INTERRUPT_CONFIRMATION: u8 = 43;
    /// 44: unauthorized interrupt.
    pub const UNAUTHORIZED_INTERRUPT: u8 = 44;
    /// 48: timer expired.
    pub const TIMER_EXPIRED: u8 = 48;
    /// 49: timer expired for incoming call (T21 on the calling DTE).
    pub const TIMER_EXPIRED_CALL: u8 = 49;
    /// 50: timer expired for clear indication (T23).
    pub const TIMER_EXPIRED_CLEAR: u8 = 50;
    /// 51: timer expired for reset indication (T22).
    pub const TIMER_EXPIRED_RESET: u8 = 51;
    /// 52: timer expired for restart indication (T20).
    pub const TIMER_EXPIRED_RESTART: u8 = 52;
    /// 64: call set-up, call clearing or registration problem.
    pub const CALL_SETUP_PROBLEM: u8 = 64;
    /// 65: facility/registration code not allowed.
    pub const FACILITY_CODE_NOT_ALLOWED: u8 = 65;
    /// 66: facility parameter not allowed.
    pub const FACILITY_PARAMETER_NOT_ALLOWED: u8 = 66;
    /// 67: invalid called DTE address.
    pub const INVALID_CALLED_ADDRESS: u8 = 67;
    /// 68: invalid calling DTE address.
    pub const INVALID_CALLING_ADDRESS: u8 = 68;
    /// 69: invalid facility/registration length.
    pub const INVALID_FACILITY_LENGTH: u8 = 69;
    /// 71: no logical channel available.
    pub const NO_LOGICAL_CHANNEL: u8 = 71;
    /// 72: call collision.
    pub const CALL_COLLISION: u8 = 72;
    /// 83: inconsistent Q-bit setting.
    pub const INCONSISTENT_Q_BIT: u8 = 83;
}
