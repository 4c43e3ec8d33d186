//! The netperf side of a test run over the control connection (framed by
//! `net::channel`): what netperf asks netserver for (`request`), its half of
//! the data phase (`data`; with many flows, `flows`), and one iteration end to end (`client`, our end
//! of its data connection in `local_end`), with interim results sampled
//! beside it (`interim`) and our netserver's TCP_INFO series after it
//! (`remote_tcp`); the remote netserver's offloads, netperf-ng only
//! (`offload`); the Unix-domain tests' own exchange over it (`unix`); what
//! can go wrong on the way (`error`, below `client` and `data`).

pub mod client;
pub mod data;
pub mod error;
pub mod flows;
pub mod interim;
mod local_end;
pub use local_end::must_bind;
pub mod offload;
pub mod remote_tcp;
pub mod request;
pub mod unix;
