//! netserver: listen for control connections, serve each on its own thread
//! (`session`), run the netserver half of omni tests (`omni`, its checks
//! in `omni_checks`, its sizes in `omni_sizes` and its results message in
//! `omni_results`; many flows
//! in one test in `flows`) and of the
//! legacy tests stock netperf still sends (`legacy`) and of the Unix-domain
//! tests (`unix`); read and, where the
//! operator allows it (`offload_scope`), change offloads for a client
//! (`offload`); run tests toward peers for a mesh coordinator, where the
//! operator opted in (`mesh`); the test mode that stalls answers once
//! (`test_pause`).

pub mod allow;
pub mod fill;
pub mod flows;
pub mod legacy;
pub mod limits;
pub mod log;
pub mod mesh;
pub mod offload;
pub mod offload_scope;
pub mod omni;
pub mod omni_checks;
pub mod omni_results;
pub mod omni_sizes;
pub mod omni_socket;
pub mod options;
pub mod phase;
pub mod session;
pub mod test_pause;
pub mod unix;
pub mod usage;

use netperf_data::net::resolve;
use netperf_data::net::resolve::Family;
use options::ServerOptions;
use socket2::{Domain, SockAddr, Socket, Type};
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpListener};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The "Starting netserver ..." banner text pieces, as stock netserver prints them.
pub fn describe_listen(o: &ServerOptions) -> (String, &'static str) {
    let host = o
        .listen_host
        .clone()
        .unwrap_or_else(|| "IN(6)ADDR_ANY".to_string());
    (host, resolve::family_name(o.family))
}

/// Open the listening socket(s) the options ask for.
pub fn listen(o: &ServerOptions) -> io::Result<TcpListener> {
    let addr: SocketAddr = match &o.listen_host {
        Some(h) => {
            let mut a = resolve::resolve(h, None, o.family, false)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?[0];
            a.set_port(o.port);
            a
        }
        None => match o.family {
            Family::Inet => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), o.port),
            _ => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), o.port),
        },
    };
    let bind = |addr: SocketAddr, dual: bool| -> io::Result<TcpListener> {
        let s = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
        s.set_reuse_address(true)?;
        if addr.is_ipv6() {
            s.set_only_v6(!dual)?;
        }
        s.bind(&SockAddr::from(addr))?;
        s.listen(1024)?;
        Ok(s.into())
    };
    let dual = o.listen_host.is_none() && o.family == Family::Unspec;
    match bind(addr, dual) {
        // No IPv6 on this host: fall back to IPv4 for the unspecified family.
        Err(e) if dual => bind(
            SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), o.port),
            false,
        )
        .map_err(|_| e),
        other => other,
    }
}

/// How long a shutdown waits for the sessions still running.
const SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(30);
/// How often the accept loop looks for a stop signal.
const ACCEPT_POLL_MS: i32 = 200;

/// Whether a connection is waiting on `listener`, looking at most `ms`.
fn wait_readable(listener: &TcpListener, ms: i32) -> bool {
    use std::os::fd::AsRawFd;
    let mut fds = libc::pollfd {
        fd: listener.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd for the duration of the call.
    unsafe { libc::poll(&mut fds, 1, ms) > 0 }
}

/// Accept control connections, one thread each, up to the limit, until
/// SIGTERM (or SIGINT, SIGALRM): then stop accepting, let the running tests
/// end (their timers cut them and their results are sent), and return once
/// the sessions are gone or after SHUTDOWN_WAIT.
pub fn serve(listener: TcpListener, opts: ServerOptions) -> io::Result<()> {
    let opts = Arc::new(opts);
    let active = Arc::new(AtomicUsize::new(0));
    loop {
        if netperf_data::engine::signals::stop_requested() {
            break;
        }
        if !wait_readable(&listener, ACCEPT_POLL_MS) {
            continue;
        }
        let (stream, peer) = match listener.accept() {
            Ok(pair) => pair,
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EINTR)
                        | Some(libc::ECONNABORTED)
                        | Some(libc::EMFILE)
                        | Some(libc::ENFILE)
                        | Some(libc::ENOBUFS)
                        | Some(libc::ENOMEM)
                ) =>
            {
                log::line(&opts, None, &format!("accept: {e}"));
                std::thread::sleep(std::time::Duration::from_millis(10));
                continue;
            }
            Err(e) => return Err(e),
        };
        if !opts.allow.permits(peer.ip()) {
            log::line(&opts, Some(peer), "refused: not in the --allow networks");
            drop(stream);
            continue;
        }
        if active.load(Ordering::Relaxed) >= opts.limits.max_connections {
            log::line(
                &opts,
                Some(peer),
                "refused: too many control connections (--max-connections)",
            );
            drop(stream);
            continue;
        }
        active.fetch_add(1, Ordering::Relaxed);
        let (opts, active) = (opts.clone(), active.clone());
        let spawned = std::thread::Builder::new()
            .name("control".into())
            .spawn(move || {
                session::run(stream, peer, &opts);
                active.fetch_sub(1, Ordering::Relaxed);
            });
        if spawned.is_err() {
            log::line(
                &opts_for_log(),
                Some(peer),
                "cannot start a thread for this connection",
            );
        }
    }
    drop(listener);
    // Offloads the open sessions changed do not outlive netserver, nor wait
    // for their (possibly idle) clients: put them back now.
    offload::restore_all(&opts);
    log::line(
        &opts,
        None,
        &format!(
            "shutting down: waiting for {} session(s)",
            active.load(Ordering::Relaxed)
        ),
    );
    let deadline = std::time::Instant::now() + SHUTDOWN_WAIT;
    while active.load(Ordering::Relaxed) > 0 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Ok(())
}

fn opts_for_log() -> ServerOptions {
    ServerOptions {
        verbosity_given: true,
        ..Default::default()
    }
}

/// Detach from the terminal like stock netserver: fork, let the parent exit,
/// start a new session. Must run before any thread is started.
pub fn daemonize() -> io::Result<()> {
    // SAFETY: called single-threaded at startup; the child continues normally.
    match unsafe { libc::fork() } {
        -1 => Err(io::Error::last_os_error()),
        0 => {
            // SAFETY: plain syscalls in the child.
            unsafe {
                libc::setsid();
                let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
                if null >= 0 {
                    libc::dup2(null, 0);
                    libc::dup2(null, 1);
                    libc::dup2(null, 2);
                    if null > 2 {
                        libc::close(null);
                    }
                }
            }
            Ok(())
        }
        _ => std::process::exit(0),
    }
}
