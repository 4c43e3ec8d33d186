//! The coordinator's half of a mesh test: connect to the source endpoint's
//! netserver, prove the operator's key over its challenge, ask it to run
//! one test toward the destination, and take back its result record once
//! it is signed with the same key. The messages and the MACs are
//! `netperf_wire::mesh`'s, the ones netserver reads.

use netperf_data::net::channel::{Channel, ChannelError};
use netperf_wire::mesh::{self as wire, Challenge, Outcome, ResultReader, NONCE_LEN};
use netperf_wire::{kind, Message};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

/// The operator's shared key (the file netserver's `--mesh-key` names).
#[derive(Clone)]
pub struct MeshKey(Vec<u8>);

impl std::fmt::Debug for MeshKey {
    // Never the key, in any log or debug output.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MeshKey(<{} bytes>)", self.0.len())
    }
}

impl MeshKey {
    /// The key in `path`, read as netserver reads it (trailing whitespace
    /// off, 16 to 4096 bytes); the error names the file.
    pub fn from_file(path: &Path) -> Result<MeshKey, String> {
        let bytes = netperf_base::input::read_text(path, wire::KEY_MAX + 256)
            .map_err(|e| format!("--mesh-key {}: {e}", path.display()))?;
        MeshKey::from_bytes(&bytes).map_err(|e| format!("--mesh-key {}: {e}", path.display()))
    }

    /// The key from a file's bytes, by the same rule.
    pub fn from_bytes(bytes: &[u8]) -> Result<MeshKey, String> {
        wire::key_from_file_bytes(bytes).map(MeshKey)
    }
}

/// One test for the source endpoint's netserver to run toward
/// `destination`:`port` (the destination's netserver), `start_in_ms` after
/// the request reaches it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginRequest {
    /// One of `netperf_wire::mesh::TESTS`.
    pub test: String,
    pub destination: IpAddr,
    pub port: u16,
    pub duration_secs: u32,
    pub start_in_ms: u32,
}

impl OriginRequest {
    /// The longest a whole exchange can take with a netserver that works:
    /// the start delay, the test, the time past its length after which
    /// netserver kills its netperf (`GRACE_SECS`), and as long again for
    /// connecting and answering. A `timeout` for `run_origin` that never
    /// cuts a test short.
    pub fn longest_wait(&self) -> Duration {
        let secs = u64::from(self.duration_secs) + 2 * u64::from(wire::GRACE_SECS);
        Duration::from_millis(u64::from(self.start_in_ms)) + Duration::from_secs(secs)
    }
}

/// Why there is no record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteError {
    /// A stock netserver, or ours without the opt-in: the whole line,
    /// "HOST: this netserver does not run mesh tests ...: start ... with
    /// --mesh-key FILE --mesh-peers NET".
    NotMesh(String),
    /// The netserver refused the request: its reason (the key, a peer
    /// outside its --mesh-peers, a limit, a field).
    Refused(String),
    /// The test ran there and failed: netperf's exit and stderr.
    Failed(String),
    /// The connection, or what came over it: the reason.
    Io(String),
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoteError::NotMesh(line) => f.write_str(line),
            RemoteError::Refused(why) => write!(f, "refused by the netserver: {why}"),
            RemoteError::Failed(why) => write!(f, "the test failed there: {why}"),
            RemoteError::Io(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for RemoteError {}

/// Connect to `control` (the source endpoint's netserver), authenticate,
/// ask, wait for the record: netperf's `-J` JSON object, as the netserver's
/// netperf printed it. `timeout` bounds the whole exchange (the test's
/// start and length included).
pub fn run_origin(
    control: SocketAddr,
    key: &MeshKey,
    request: &OriginRequest,
    timeout: Duration,
) -> Result<serde_json::Value, RemoteError> {
    let origin = wire::Origin {
        test: request.test.clone(),
        destination: request.destination,
        port: request.port,
        duration_secs: request.duration_secs,
        start_in_ms: request.start_in_ms,
    };
    // Refused here, before a connection: the netserver would refuse it too.
    origin.check().map_err(RemoteError::Refused)?;
    let deadline = Instant::now() + timeout;
    let not_mesh = || RemoteError::NotMesh(format!("{control}: {}", wire::HOW_TO_ENABLE));
    let stream = TcpStream::connect_timeout(&control, left(deadline, control)?)
        .map_err(|e| RemoteError::Io(format!("{control}: cannot connect: {e}")))?;
    let mut chan = Channel::new(stream);
    chan.send(&wire::encode_hello())
        .map_err(|e| io(control, e))?;
    let nonce = match receive(&mut chan, deadline, control)? {
        // A stock netserver answers an unknown request with a message of
        // type 0 (serv_errno 998); one with a passphrase closes.
        None => return Err(not_mesh()),
        Some(m) if m.kind() != kind::NG_MESH_CHALLENGE => return Err(not_mesh()),
        Some(m) => match Challenge::decode(&m).map_err(|e| bad(control, e))? {
            Challenge::Nonce(nonce) => nonce,
            Challenge::NotEnabled(_) => return Err(not_mesh()),
            Challenge::Refused(why) => return Err(RemoteError::Refused(why)),
        },
    };
    chan.send(&origin.sign(&key.0, &nonce))
        .map_err(|e| io(control, e))?;
    let outcome = read_result(&mut chan, deadline, control, key, &nonce)?;
    chan.shutdown();
    match outcome {
        Outcome::Record(text) => serde_json::from_str(&text)
            .map_err(|e| bad(control, format!("its record is not JSON: {e}"))),
        Outcome::Refused(why) => Err(RemoteError::Refused(why)),
        Outcome::Failed(why) => Err(RemoteError::Failed(why)),
        Outcome::NotEnabled(_) => Err(not_mesh()),
    }
}

/// The RESULT messages, whole; a record only when signed with the key.
fn read_result(
    chan: &mut Channel,
    deadline: Instant,
    control: SocketAddr,
    key: &MeshKey,
    nonce: &[u8; NONCE_LEN],
) -> Result<Outcome, RemoteError> {
    let mut reader = ResultReader::default();
    loop {
        let Some(m) = receive(chan, deadline, control)? else {
            return Err(RemoteError::Io(format!(
                "{control}: the netserver closed the connection before its result"
            )));
        };
        if let Some(read) = reader.push(&m).map_err(|e| bad(control, e))? {
            if matches!(read.outcome, Outcome::Record(_)) && !read.verify(&key.0, nonce) {
                return Err(bad(control, "its record is not signed with the mesh key"));
            }
            return Ok(read.outcome);
        }
    }
}

/// The next message, or None when the netserver closed the connection.
fn receive(
    chan: &mut Channel,
    deadline: Instant,
    control: SocketAddr,
) -> Result<Option<Message>, RemoteError> {
    match chan.recv(left(deadline, control)?) {
        Ok(m) => Ok(Some(m)),
        Err(ChannelError::Closed) => Ok(None),
        Err(e) => Err(io(control, e)),
    }
}

fn left(deadline: Instant, control: SocketAddr) -> Result<Duration, RemoteError> {
    match deadline.saturating_duration_since(Instant::now()) {
        d if d.is_zero() => Err(RemoteError::Io(format!(
            "{control}: no result within the time allowed"
        ))),
        d => Ok(d),
    }
}

fn io(control: SocketAddr, e: ChannelError) -> RemoteError {
    RemoteError::Io(format!("{control}: {e}"))
}

fn bad(control: SocketAddr, why: impl std::fmt::Display) -> RemoteError {
    RemoteError::Io(format!("{control}: not a mesh answer: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_read_as_netserver_reads_them_and_never_shown() {
        let key = MeshKey::from_bytes(b"a key that is long enough\n").unwrap();
        assert_eq!(key.0, b"a key that is long enough");
        assert_eq!(format!("{key:?}"), "MeshKey(<25 bytes>)");
        assert!(MeshKey::from_bytes(b"short").is_err());
        let e = MeshKey::from_file(Path::new("/nonexistent/key")).unwrap_err();
        assert!(e.starts_with("--mesh-key /nonexistent/key: "), "{e}");
    }

    #[test]
    fn a_request_netserver_would_refuse_is_refused_before_connecting() {
        let key = MeshKey::from_bytes(b"a key that is long enough").unwrap();
        let request = OriginRequest {
            test: "TCP_SENDFILE".into(),
            destination: "127.0.0.1".parse().unwrap(),
            port: 12865,
            duration_secs: 1,
            start_in_ms: 0,
        };
        // Port 9 of 192.0.2.1 (TEST-NET) is never reached: refused first.
        let control = "192.0.2.1:9".parse().unwrap();
        let e = run_origin(control, &key, &request, Duration::from_secs(1)).unwrap_err();
        assert!(
            matches!(&e, RemoteError::Refused(why) if why.contains("TCP_SENDFILE")),
            "{e}"
        );
    }

    #[test]
    fn the_longest_wait_covers_the_test_and_netservers_grace() {
        let request = OriginRequest {
            test: "TCP_RR".into(),
            destination: "127.0.0.1".parse().unwrap(),
            port: 12865,
            duration_secs: 3,
            start_in_ms: 1500,
        };
        assert_eq!(request.longest_wait(), Duration::from_millis(64_500));
    }

    #[test]
    fn errors_read_as_one_line() {
        let line = RemoteError::NotMesh(format!("10.0.0.1:12865: {}", wire::HOW_TO_ENABLE));
        assert!(line
            .to_string()
            .starts_with("10.0.0.1:12865: this netserver does not run mesh tests"));
        assert!(line
            .to_string()
            .ends_with("--mesh-key FILE --mesh-peers NET"));
        assert_eq!(
            RemoteError::Refused("x".into()).to_string(),
            "refused by the netserver: x"
        );
    }
}
