//! STAND-IN
//! for M1's coordinator side (the lead replaces it at merge): the key read
//! from its file, and a test "from" the source endpoint that this stand-in
//! runs HERE — `netperf -t TEST -H DST -p PORT -l D -P 0 -- -J ...` after
//! checking the source's control port answers — since asking the source's
//! netserver needs M1's wire. Same types and signatures as the real one.

use std::io::Read;
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Largest key file read.
const MAX_KEY_BYTES: usize = 4096;
/// Largest result record read.
const MAX_RECORD_BYTES: u64 = 1 << 20;
/// What the record holds: every figure a mesh metric reads.
const SELECTORS: &str = "THROUGHPUT,THROUGHPUT_UNITS,P50_LATENCY,P90_LATENCY,P99_LATENCY,MEAN_LATENCY,TRANSACTION_RATE,RR_TIMEOUTS";

/// The operator's shared key.
pub struct MeshKey(Vec<u8>);

impl MeshKey {
    pub fn from_file(path: &Path) -> Result<MeshKey, String> {
        let bytes = netperf_base::input::read_text(path, MAX_KEY_BYTES)
            .map_err(|e| format!("cannot read it: {e}"))?;
        match bytes.iter().any(|b| !b.is_ascii_whitespace()) {
            true => Ok(MeshKey(bytes)),
            false => Err("it is empty".to_string()),
        }
    }
}

/// One test the source endpoint is asked to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OriginRequest {
    pub test: String,
    pub destination: IpAddr,
    pub port: u16,
    pub duration_secs: u32,
    pub start_in_ms: u32,
}

/// Why a test from an endpoint did not give a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteError {
    /// A stock netserver, or ours without the opt-in: the how-to line.
    NotMesh(String),
    /// The netserver said why it refused.
    Refused(String),
    /// netperf failed there: its stderr or exit.
    Failed(String),
    Io(String),
}

impl std::fmt::Display for RemoteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RemoteError::NotMesh(s) | RemoteError::Failed(s) | RemoteError::Io(s) => f.write_str(s),
            RemoteError::Refused(s) => write!(f, "refused: {s}"),
        }
    }
}

fn netperf_program() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|d| d.join("netperf")))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("netperf"))
}

/// Connect to `control`, then run the test (here, in this stand-in) and
/// return netperf's `-J` record.
pub fn run_origin(
    control: SocketAddr,
    key: &MeshKey,
    request: &OriginRequest,
    timeout: Duration,
) -> Result<serde_json::Value, RemoteError> {
    if key.0.is_empty() {
        return Err(RemoteError::Refused("an empty key".into()));
    }
    let deadline = Instant::now() + timeout;
    TcpStream::connect_timeout(&control, Duration::from_secs(5))
        .map_err(|e| RemoteError::Io(format!("{control}: {e}")))?;
    std::thread::sleep(Duration::from_millis(u64::from(request.start_in_ms)));
    let mut child = Command::new(netperf_program())
        .args(["-t", &request.test, "-H", &request.destination.to_string()])
        .args(["-p", &request.port.to_string()])
        .args([
            "-l",
            &request.duration_secs.to_string(),
            "-P",
            "0",
            "--",
            "-J",
            SELECTORS,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| RemoteError::Failed(format!("cannot run netperf: {e}")))?;
    let reader = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = Vec::new();
            if let Some(pipe) = pipe {
                let _ = pipe.take(MAX_RECORD_BYTES).read_to_end(&mut text);
            }
            String::from_utf8_lossy(&text).into_owned()
        })
    };
    let out = reader(
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let err = reader(
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    );
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(50)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(RemoteError::Failed("netperf did not finish in time".into()));
            }
        }
    };
    let (stdout, stderr) = (
        out.join().unwrap_or_default(),
        err.join().unwrap_or_default(),
    );
    if !status.success() {
        let last = stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(RemoteError::Failed(format!(
            "netperf exited with {status}: {last}"
        )));
    }
    serde_json::from_str(&stdout)
        .map_err(|e| RemoteError::Failed(format!("netperf's record is not JSON: {e}")))
}
