//! `netagg watch --listen ADDR`: the watch over HTTP from the same process
//! — `/metrics` for Prometheus, `/` a live page, `/api/{status,series,
//! changes}` the JSON behind it. Read-only: it reads the status the loop
//! shares and the database (opened read-only) and writes neither.
//!
//! std threads and sockets only: a few fixed GET paths need no framework.
//! Hostile input is bounded everywhere (`http`): at most
//! [`MAX_CONNECTIONS`] connections at once (beyond, 503 and close), one
//! request per connection, the head bounded in size and time, any body
//! refused, GET and HEAD only, and only the paths in [`ROUTES`] — nothing
//! is ever looked up on the file system. A handler that panics answers 500
//! and the server goes on.
//!
//! Rooms: `http` reads a request and writes a response; `data` reads the
//! watch's series from the database (bounded, shared between requests);
//! `metrics`, `page` and `api` draw them.

pub mod api;
pub mod data;
pub mod http;
pub mod metrics;
pub mod page;

#[cfg(test)]
mod tests;

use crate::watch::state::Shared;
use data::{Source, View};
use http::{Request, Response};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Connections served at once; one more is answered 503 and closed.
pub const MAX_CONNECTIONS: usize = 32;

/// What a path answers.
type Handler = fn(&View, &Request) -> Response;

/// Every path served; anything else is 404.
pub const ROUTES: [(&str, Handler); 5] = [
    ("/", |v, _| Response::new(200, HTML, page::render(v))),
    ("/metrics", |v, r| {
        let format = metrics::Format::of_accept(&r.accept);
        Response::new(200, format.content_type(), metrics::render(v, format))
    }),
    ("/api/status", |v, _| json(&api::status(v))),
    ("/api/series", |v, _| json(&api::series(v))),
    ("/api/changes", |v, _| json(&api::changes(v))),
];

const HTML: &str = "text/html; charset=utf-8";
/// The page's own policy: its inline style and SVG, nothing else.
const PAGE_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

fn json(doc: &serde_json::Value) -> Response {
    let text = serde_json::to_string_pretty(doc).unwrap_or_else(|_| "{}".into());
    Response::new(200, "application/json", text + "\n")
}

/// A running server; it serves until the process ends.
pub struct Server {
    addr: SocketAddr,
}

impl Server {
    /// Where it listens (the port chosen when ADDR asked for port 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }
}

/// Binds `addr` (`127.0.0.1:9464`, `[::1]:9464`, `0.0.0.0:9464`, a name
/// that resolves) at once — a taken port is an error before anything runs
/// — and serves `shared` on its own threads.
pub fn start(addr: &str, shared: Shared) -> Result<Server, String> {
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| format!("--listen {addr}: not an address to listen on ({e})"))?
        .collect();
    let listener =
        TcpListener::bind(addrs.as_slice()).map_err(|e| format!("--listen {addr}: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("--listen {addr}: {e}"))?;
    let source = Arc::new(Source::new(shared));
    std::thread::Builder::new()
        .name("watch-http".into())
        .spawn(move || accept(listener, source))
        .map_err(|e| format!("--listen {addr}: cannot start its thread: {e}"))?;
    Ok(Server { addr: local })
}

/// Counts a connection while it lives.
struct Slot(Arc<AtomicUsize>);

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

fn accept(listener: TcpListener, source: Arc<Source>) {
    let active = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        let Ok(mut stream) = stream else {
            // Out of descriptors or a connection reset before accept: wait
            // a little rather than spin.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        if active.fetch_add(1, Ordering::SeqCst) >= MAX_CONNECTIONS {
            let _slot = Slot(active.clone());
            busy(&mut stream);
            continue;
        }
        let slot = Slot(active.clone());
        let source = source.clone();
        let spawned = std::thread::Builder::new()
            .name("watch-http-conn".into())
            .spawn(move || {
                let _slot = slot;
                serve(&mut stream, &source);
            });
        // The closure (and its slot and stream) is dropped if the thread
        // could not start: the client sees the connection close.
        drop(spawned);
    }
}

/// The refusal of a connection beyond [`MAX_CONNECTIONS`]: written on the
/// accepting thread, so it waits on the client no more than a moment.
fn busy(stream: &mut TcpStream) {
    let refusal = Response::error(503, "too many connections; try again").with("Retry-After", "1");
    http::write(stream, &refusal, false, Duration::from_millis(200));
}

/// One connection: one request read, answered and closed.
fn serve(stream: &mut TcpStream, source: &Source) {
    let request = match http::read_request(stream) {
        Ok(r) => r,
        Err(Some(refusal)) => return http::respond(stream, &refusal, false),
        Err(None) => return,
    };
    let response = answer(source, &request);
    http::respond(stream, &response, request.head_only);
}

/// The response to a well-formed request (500 if drawing it panicked).
pub fn answer(source: &Source, request: &Request) -> Response {
    let Some((_, handler)) = ROUTES.iter().find(|(p, _)| *p == request.path) else {
        return Response::error(404, "not served here: try /, /metrics or /api/status");
    };
    let drawn = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        handler(&source.view(), request)
    }));
    match drawn {
        Ok(r) if r.content_type == HTML => r.with("Content-Security-Policy", PAGE_POLICY),
        Ok(r) => r,
        Err(_) => Response::error(500, "drawing this failed; the server goes on"),
    }
}
