//! netperf's half of the data phase: connect when the test needs it, run
//! the engine loop, and end the data connection the way netserver expects.

use super::error::ClientError;
use super::request::{LocalSizes, RunOptions};
use netperf_data::engine::pacing::Pacer;
use netperf_data::engine::ring::BufferRing;
use netperf_data::engine::rr::RrClient;
use netperf_data::engine::sequence::Sequence;
use netperf_data::engine::sizing::{MAX_RING_BYTES, MAX_WIDTH};
use netperf_data::engine::stop_flag::StopFlag;
use netperf_data::engine::{self, Counters, DataError, Histogram};
use netperf_data::net::socket::{self, SocketOptions};
use netperf_data::spec::{Protocol, TestSpec};
use socket2::{SockAddr, Socket};
use std::net::SocketAddr;
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

/// How long connecting the data connection may take.
const CONNECT_WAIT: Duration = Duration::from_secs(30);

pub type DataRun = (Counters, i32, Option<Socket>);

/// Our end's send and receive buffers, made (and filled from the -F file)
/// before the test's clock starts, as netperf allocates its rings before
/// it starts its timer.
pub struct Rings {
    send: BufferRing,
    recv: BufferRing,
}

/// A ring of `width` buffers, fewer if that much memory is beyond
/// netperf-ng's limits: a command line (-W 100000000) must not abort us.
fn ring(width: u32, size: i32, align: u32, offset: u32) -> BufferRing {
    let per_buffer = size.max(1) as u64 + u64::from(align) + u64::from(offset);
    let fits = u32::try_from(MAX_RING_BYTES / per_buffer).unwrap_or(u32::MAX);
    let width = width.clamp(1, MAX_WIDTH).min(fits.max(1));
    BufferRing::new(width, size.max(0) as usize, align, offset)
}

impl Rings {
    pub fn prepare(
        spec: &TestSpec,
        sizes: &LocalSizes,
        run: &RunOptions,
    ) -> Result<Self, ClientError> {
        let mut send = ring(
            sizes.send_width,
            sizes.send_size,
            spec.local_send_align,
            spec.local_send_offset,
        );
        let recv = ring(
            sizes.recv_width,
            sizes.recv_size,
            spec.local_recv_align,
            spec.local_recv_offset,
        );
        if let Some(path) = &run.local_fill_file {
            send.fill_continuous(&fill_bytes(path, send.capacity())?);
        }
        Ok(Rings { send, recv })
    }
}

/// Connect (when the test needs it) and run our half of the data path.
#[allow(clippy::too_many_arguments)]
pub fn run_data(
    spec: &TestSpec,
    sock: Socket,
    remote: &SocketAddr,
    local_bind: Option<SocketAddr>,
    opts: &SocketOptions,
    rings: &mut Rings,
    run: &RunOptions,
    stop: &StopFlag,
    units: Option<u64>,
    io_wait: Option<Duration>,
    hist: Option<&mut Histogram>,
    seq: Option<&mut Sequence>,
) -> Result<DataRun, ClientError> {
    let udp = spec.protocol == Protocol::Udp;
    let Rings {
        send: send_ring,
        recv: recv_ring,
    } = rings;
    if spec.connection {
        drop(sock);
        let (c, mss) = engine::connect::client(
            remote,
            local_bind.filter(|l| l.port() != 0 || !l.ip().is_unspecified()),
            opts,
            send_ring,
            recv_ring,
            stop,
            units,
            io_wait,
            hist,
        )?;
        // Stopped early (a signal, or -l 0): the netserver waits for a sign.
        if netperf_data::engine::signals::stop_requested()
            || spec.limit == netperf_data::spec::Limit::Seconds(0)
        {
            engine::connect::mark_end(remote, opts);
        }
        return Ok((c, mss, None));
    }
    // Without a timer to interrupt them, blocking calls wake up this often
    // to look at the stop flag.
    if io_wait.is_some() {
        socket::set_timeouts(&sock, io_wait).map_err(|e| ClientError::Setup(e.to_string()))?;
    }
    let connected = !udp || spec.local_connected;
    if connected {
        if let Err(e) = socket::connect_timeout(&sock, remote, CONNECT_WAIT) {
            return Err(ClientError::Data(DataError::Connect(e)));
        }
    }
    let dest = (!connected).then(|| SockAddr::from(*remote));
    let stream = !spec.is_rr();
    let fast = engine::fast_paths::pick(
        spec.protocol == Protocol::Udp,
        &spec.extension,
        stream && spec.xmit(),
        stream && spec.recv(),
    );
    let counters = match fast {
        Some(fast) => fast.run(
            sock.as_raw_fd(),
            &mut rings.send,
            &rings.recv,
            stop,
            units,
            dest.as_ref(),
            seq,
        )?,
        None => run_loop(
            spec,
            &sock,
            dest.as_ref(),
            rings,
            run,
            stop,
            units,
            hist,
            seq,
        )?,
    };
    let mss = if udp { -1 } else { socket::mss(&sock) };
    Ok((counters, mss, Some(sock)))
}

/// Run the engine's loop for `spec` on the connected (or, for datagrams
/// with `dest`, unconnected) socket: the one place netperf picks its data
/// loop, whatever the socket family.
#[allow(clippy::too_many_arguments)]
// A frame of its own with a single call of each loop: the request/response
// loop inlined here keeps its state in registers (bench/callgrind counts 166
// instructions per TCP_RR transaction here, 201 as a function of its own).
#[inline(never)]
pub fn run_loop(
    spec: &TestSpec,
    sock: &Socket,
    dest: Option<&SockAddr>,
    rings: &mut Rings,
    run: &RunOptions,
    stop: &StopFlag,
    units: Option<u64>,
    hist: Option<&mut Histogram>,
    seq: Option<&mut Sequence>,
) -> Result<Counters, ClientError> {
    let udp = spec.protocol == Protocol::Udp;
    let Rings {
        send: send_ring,
        recv: recv_ring,
    } = rings;
    let fd = sock.as_raw_fd();
    // Batching moves UDP messages N per call; per-operation timing (-v 2,
    // -j) needs one call per message, so it keeps the plain loops.
    let batch = match spec.extension.mmsg_batch {
        n if udp && n > 1 && hist.is_none() && seq.is_none() && run.interval_burst == 0 => {
            Some(n as usize)
        }
        _ => None,
    };
    let mut pacer = Pacer::new(run.interval_usecs, run.interval_burst);
    let counters = if spec.is_rr() {
        let loss_timeout = spec.receive_timeout.is_some();
        if let Some(secs) = spec.receive_timeout {
            let _ = sock.set_read_timeout(Some(Duration::from_secs(secs.max(1) as u64)));
        }
        match batch {
            Some(n) => {
                engine::mmsg::rr_client_batched(
                    fd,
                    send_ring,
                    recv_ring,
                    spec.first_burst,
                    n,
                    stop,
                    units,
                    dest,
                )?
                .0
            }
            None => engine::rr::client(RrClient {
                fd,
                send_ring,
                recv_ring,
                datagram: udp,
                burst: spec.first_burst,
                stop,
                trans_limit: units,
                dest,
                loss_timeout,
                hist,
                seq,
                pacer: pacer.as_mut(),
            })?,
        }
    } else if spec.xmit() {
        if spec.sendfile {
            let file = sendfile_source(run, send_ring)?;
            let len = file.metadata().map(|m| m.len() as usize).unwrap_or(0);
            engine::stream::send_file(
                fd,
                file.as_raw_fd(),
                len,
                send_ring.size().max(1),
                stop,
                units,
                hist,
            )?
        } else if let Some(n) = batch {
            engine::mmsg::stream_send_batched(fd, send_ring, n, stop, units, dest)?.0
        } else if spec.extension.zerocopy && !udp {
            engine::zerocopy::send(fd, send_ring, stop, units)?
        } else {
            engine::stream::send(fd, send_ring, stop, units, dest, hist, seq, pacer.as_mut())?
        }
    } else if let Some(n) = batch {
        engine::mmsg::stream_recv_batched(fd, recv_ring, n, stop, units)?.0
    } else {
        engine::stream::recv(fd, recv_ring, stop, units, hist, seq)?
    };
    Ok(counters)
}

/// The first `need` bytes of the -F fill file, read as far as a ring needs
/// whatever kind of file it is (`/dev/urandom`, a FIFO).
fn fill_bytes(path: &str, need: usize) -> Result<Vec<u8>, ClientError> {
    netperf_base::input::read_fill(std::path::Path::new(path), need)
        .map_err(|e| ClientError::Setup(format!("cannot read fill file '{path}': {e}")))
}

/// The file TCP_SENDFILE sends from: the -F fill file itself when it is a
/// regular file holding a whole ring (`width` x `size` bytes), as netperf
/// uses it; otherwise a temporary file (unlinked at once) holding the send
/// ring's bytes, which are the fill file's (a device, a FIFO, a short
/// file) or the default pattern.
fn sendfile_source(run: &RunOptions, ring: &BufferRing) -> Result<std::fs::File, ClientError> {
    use std::io::{Seek, Write};
    let need = ring.capacity().max(1);
    if let Some(path) = &run.local_fill_file {
        // stat, never open, before knowing it is a regular file: opening a
        // FIFO waits for its writer.
        let whole_ring =
            std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() >= need as u64);
        if whole_ring {
            return std::fs::File::open(path)
                .map_err(|e| ClientError::Setup(format!("cannot open fill file '{path}': {e}")));
        }
    }
    let content = ring.contents();
    let dir = std::env::temp_dir();
    let path = dir.join(format!("netperf-ng-sendfile-{}-{need}", std::process::id()));
    let mut f = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(&path)
        .map_err(|e| ClientError::Setup(format!("cannot create sendfile source: {e}")))?;
    let _ = std::fs::remove_file(&path);
    f.write_all(&content)
        .and_then(|()| f.rewind())
        .map_err(|e| ClientError::Setup(format!("cannot write sendfile source: {e}")))?;
    Ok(f)
}

/// End the data connection the way netserver expects: a TCP half-close and a
/// wait for its close, or three zero-length datagrams for UDP. A test whose
/// far end still sends was `cut_short` (a signal, -l 0: netserver has a
/// clock of its own, or none, that runs on) just resets the connection: a
/// reset is that end for every netserver, and a wait for its close would
/// only wait out the 10 s bound.
pub fn finish_data(s: &Socket, spec: &TestSpec, remote: &SocketAddr, cut_short: bool) {
    if spec.protocol == Protocol::Udp {
        let dest = SockAddr::from(*remote);
        for _ in 0..3 {
            let _ = s.send_to(&[], &dest);
        }
        return;
    }
    if cut_short && !spec.xmit() {
        // Unread bytes make the close a reset anyway; a zero linger makes
        // it one when the receive queue happens to be empty.
        let _ = s.set_linger(Some(Duration::ZERO));
        return;
    }
    let _ = s.shutdown(std::net::Shutdown::Write);
    let _ = socket::set_timeouts(s, Some(Duration::from_millis(200)));
    let mut buf = [std::mem::MaybeUninit::<u8>::uninit(); 4096];
    // Drain what the peer still sends (MAERTS) until it closes; bounded.
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        match s.recv(&mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(_) => break,
        }
    }
}
