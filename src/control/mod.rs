//! The control connection: framed 656-byte messages with bounded waits
//! (`channel`), and the netperf side of a test run over it (`client`).

pub mod channel;
pub mod client;
