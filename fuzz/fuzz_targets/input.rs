//! The operands left in a fuzz input that is read as steps: an op octet,
//! then what the op takes (shared by the targets that read this way).

/// The octets not read yet.
pub struct Input<'a>(pub &'a [u8]);

impl<'a> Input<'a> {
    /// The next octet, if any is left.
    pub fn byte(&mut self) -> Option<u8> {
        let (&first, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(first)
    }

    /// The next `len` octets, or as many as are left.
    pub fn take(&mut self, len: usize) -> &'a [u8] {
        let (taken, rest) = self.0.split_at(len.min(self.0.len()));
        self.0 = rest;
        taken
    }
}
