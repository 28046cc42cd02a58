//! Korb and Wills, "Some experiments with TCP/IP protocols over an X.25
//! network" (Purdue CSD-TR-664, 1987).

pub mod bench;
