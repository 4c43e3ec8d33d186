//! What can go wrong on netperf's side of a test, from resolving the host to
//! the data phase. Below `client` and `data`, which both return it, so
//! neither has to import the other for it.

use netperf_data::engine::DataError;
use netperf_data::net::channel::ChannelError;
use netperf_data::net::resolve::ResolveError;

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error(transparent)]
    Resolve(Box<ResolveError>),
    /// A data endpoint that does not resolve (in the family the test
    /// uses): netperf's complete_addrinfo message, with the data port.
    #[error(
        "complete_addrinfo: could not resolve '{}' port '{port}' af {}\n\tgetaddrinfo returned {} {}",
        .error.host, af_number(.error.family), .error.code, .error.text
    )]
    DataResolve { error: Box<ResolveError>, port: u16 },
    /// netperf's two-line "are you sure there is a netserver" message, and
    /// the errno of the last attempt.
    #[error("{0}")]
    NoServer(String, i32),
    #[error("netperf: {0}")]
    Control(#[from] ChannelError),
    #[error("netperf: remote error {errno}: {text}")]
    Remote { errno: i32, text: String },
    #[error("netperf: unexpected message type {0} from netserver")]
    Unexpected(u32),
    /// A TCP_INFO series from the netserver that is not one: out of
    /// bounds, out of order, or another message in its place.
    #[error("netperf: netserver sent a bad TCP_INFO series: {0}")]
    Series(String),
    #[error("netperf: data connection: {0}")]
    Data(#[from] DataError),
    #[error("netperf: {0}")]
    Setup(String),
    /// An extension (many flows) that only our netserver serves, asked of
    /// another: refused before any traffic.
    #[error("netperf: {0}")]
    NeedsOurNetserver(String),
    /// An extension our netserver cannot serve on its host (MPTCP off in
    /// its kernel): refused before any traffic.
    #[error("netperf: {0}")]
    NotServedThere(String),
}

/// The number netperf prints for a family (its `af %d`).
fn af_number(name: &str) -> i32 {
    match name {
        "AF_INET" => libc::AF_INET,
        "AF_INET6" => libc::AF_INET6,
        _ => libc::AF_UNSPEC,
    }
}

impl ClientError {
    /// netperf's exit status for it: 2 for what the command line asked of
    /// a netserver that cannot do it (as for a usage error), else
    /// `failure`, netperf's own.
    pub fn exit_status(&self, failure: i32) -> i32 {
        match self {
            ClientError::NeedsOurNetserver(_) | ClientError::NotServedThere(_) => 2,
            _ => failure,
        }
    }
}

impl From<ResolveError> for ClientError {
    fn from(e: ResolveError) -> Self {
        ClientError::Resolve(Box::new(e))
    }
}
