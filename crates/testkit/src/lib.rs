//! What the linklab workspace's tests share (a dev-dependency, never
//! published): tshark, Wireshark's command-line dissector, as an
//! independent oracle for the encoders of the protocol crates.

pub mod tshark;
