//! The `session` target: a fuzz input is a short script of what a client
//! does on a netserver control connection, played over real loopback TCP
//! against `server::session::run` on its own thread, with limits tight
//! enough that any test it starts ends within about a second. Once the
//! client has closed, the session must end within [`SESSION_BOUND`]: a
//! session that does not is a hang, reported as a panic.
//!
//! The input's format is `script`'s.

use super::client::Client;
use super::script::{self, Script};
use super::templates;
use crate::server::limits::Limits;
use crate::server::options::ServerOptions;
use crate::server::session;
use std::net::{Ipv4Addr, TcpListener, TcpStream, UdpSocket};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::OnceLock;
use std::time::Duration;

/// How long the session may go on after its client has closed.
pub const SESSION_BOUND: Duration = Duration::from_secs(5);

/// The fuzzed server's fill directory (`-F`): fuzz/fill in the source tree,
/// a file and a link out of it, so that fill names reach the directory's
/// checks; none where the tree is not there.
fn fill_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/fill");
    dir.is_dir().then_some(dir)
}

/// What the server is run with: the defaults, but a test that starts ends
/// within about a second, and idle or stalled clients are not waited for.
/// Offload changes stay off: a fuzzed session must never change this
/// host's interfaces (the rule is checked by the decode target).
/// NETPERF_NG_FUZZ_LOG set in the environment turns the server's log on
/// (stderr), to see what an input does.
pub fn server_options(passphrase: bool) -> ServerOptions {
    let log = std::env::var_os("NETPERF_NG_FUZZ_LOG").is_some();
    let ms = Duration::from_millis;
    ServerOptions {
        limits: Limits {
            accept_timeout: ms(50),
            silent_timeout: ms(200),
            idle_timeout: ms(300),
            max_test_seconds: 1,
            ..Default::default()
        },
        passphrase: passphrase.then(|| templates::PASSPHRASE.to_string()),
        fill_dir: fill_dir(),
        verbosity: i32::from(log),
        verbosity_given: log,
        ..Default::default()
    }
}

/// The listener sessions are accepted on, made once per process.
fn listener() -> &'static TcpListener {
    static LISTENER: OnceLock<TcpListener> = OnceLock::new();
    LISTENER.get_or_init(|| {
        TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).expect("bind a loopback listener")
    })
}

/// Where netserver's UDP sends to "netperf" go: a socket of ours that is
/// never read (the kernel drops what does not fit).
pub(super) fn sink_port() -> u16 {
    static SINK: OnceLock<Option<UdpSocket>> = OnceLock::new();
    SINK.get_or_init(|| UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).ok())
        .as_ref()
        .and_then(|s| s.local_addr().ok())
        .map_or(9, |a| a.port())
}

/// Play `data` as a script against a fresh session; panics on a finding.
pub fn run_input(data: &[u8]) {
    run_script(&script::parse(data));
}

pub fn run_script(script: &Script) {
    let listener = listener();
    let addr = listener.local_addr().expect("listener address");
    let stream = TcpStream::connect(addr).expect("connect to the session listener");
    let (server_end, peer) = listener.accept().expect("accept the session");
    let opts = server_options(script.passphrase);
    let (done, ended) = mpsc::channel();
    let session = std::thread::Builder::new()
        .name("fuzz-session".into())
        .spawn(move || {
            session::run(server_end, peer, &opts);
            let _ = done.send(());
        })
        .expect("spawn the session thread");
    let mut client = Client::new(stream, sink_port());
    for step in &script.steps {
        if !client.step(step) {
            break;
        }
    }
    client.finish();
    match ended.recv_timeout(SESSION_BOUND) {
        Ok(()) | Err(RecvTimeoutError::Disconnected) => {}
        Err(RecvTimeoutError::Timeout) => panic!(
            "hang: the netserver session was still running {SESSION_BOUND:?} after its client \
             closed the control connection (script: {script:?})"
        ),
    }
    if let Err(panic) = session.join() {
        std::panic::resume_unwind(panic);
    }
}
