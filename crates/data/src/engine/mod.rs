//! The data path, shared by both ends: stream send and receive, request/response
//! with first burst (closed loop) or on a schedule (`open_loop`, its clock
//! `schedule`), and connect tests. Blocking sockets, one thread per stream;
//! the loops read a relaxed atomic to stop and allocate nothing per call.

pub mod affinity;
pub mod catch_up;
pub mod connect;
pub mod discard;
pub mod fast_paths;
pub mod fd_table;
pub mod flows;
pub mod gso;
pub mod io;
pub mod message;
pub mod mmsg;
pub mod open_loop;
pub mod pacing;
pub mod ring;
pub mod rr;
pub mod schedule;
pub mod sequence;
pub mod signal_timer;
pub mod signals;
pub mod sizing;
pub mod stop_flag;
pub mod stream;
pub mod timer;
pub mod timer_thread;
pub mod watchdog;
pub mod zerocopy;

/// What one end's loop counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    pub bytes_sent: u64,
    pub bytes_received: u64,
    pub send_calls: u64,
    pub recv_calls: u64,
    pub failed_sends: u64,
    pub transactions: u64,
    /// Receive timeouts of a UDP request/response test with -e.
    pub timeouts: u64,
    /// Time spent waiting for pacing ticks (-w/-b).
    pub paced_wait: std::time::Duration,
    /// TCP retransmissions of the connections a connection-per-transaction
    /// test (TCP_CRR) opened and closed, each read before its close.
    pub connection_retransmissions: u64,
}

impl Counters {
    /// Adds what another run of a loop counted.
    pub fn add(&mut self, other: &Counters) {
        self.bytes_sent += other.bytes_sent;
        self.bytes_received += other.bytes_received;
        self.send_calls += other.send_calls;
        self.recv_calls += other.recv_calls;
        self.failed_sends += other.failed_sends;
        self.transactions += other.transactions;
        self.timeouts += other.timeouts;
        self.paced_wait += other.paced_wait;
        self.connection_retransmissions += other.connection_retransmissions;
    }
}

/// Why a data loop stopped early with an error.
#[derive(Debug, thiserror::Error)]
pub enum DataError {
    #[error("data send error: {0}")]
    Send(std::io::Error),
    #[error("data recv error: {0}")]
    Recv(std::io::Error),
    #[error("data connection error: {0}")]
    Connect(std::io::Error),
}

impl DataError {
    /// The system's error behind it.
    pub fn into_io(self) -> std::io::Error {
        match self {
            DataError::Send(e) | DataError::Recv(e) | DataError::Connect(e) => e,
        }
    }
}

/// Optional per-operation timing: only touched when the user asked for it
/// (-v 2 or -j), so the default path reads no clock.
pub type Histogram = crate::measure::histogram::Histogram;
