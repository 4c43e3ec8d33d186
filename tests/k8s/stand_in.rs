//! The stand-in Kubernetes API server of k8s_discovery_tests.rs: an HTTP
//! server on 127.0.0.1 that answers each request from a table of routes,
//! one connection at a time, and records what it was asked.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// An answer: HTTP status and JSON body; None holds the connection
/// without answering (an API server that hangs).
pub type Answer = Option<(u16, String)>;
pub type Routes = dyn Fn(&str) -> Answer + Send + Sync;

/// The stand-in API server: answers each request from `routes` (given the
/// path and query), one connection at a time, and records what it was asked.
/// Stops when dropped, or by itself after 60 s whatever happens.
pub struct StandIn {
    port: u16,
    seen: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl StandIn {
    pub fn start(routes: impl Fn(&str) -> Answer + Send + Sync + 'static) -> StandIn {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let routes: Arc<Routes> = Arc::new(routes);
        let (seen2, stop2) = (seen.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let deadline = Instant::now() + Duration::from_secs(60);
            let mut held = Vec::new();
            while !stop2.load(Ordering::Relaxed) && Instant::now() < deadline {
                match listener.accept() {
                    Ok((conn, _)) => {
                        if let Some(hold) = serve(conn, &*routes, &seen2) {
                            held.push(hold);
                        }
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        StandIn {
            port,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    pub fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }

    /// Where it answers.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// One request on `conn`: its request line recorded, then the answer and
/// close; the connection itself back when the route says to hang.
fn serve(mut conn: TcpStream, routes: &Routes, seen: &Mutex<Vec<String>>) -> Option<TcpStream> {
    conn.set_nonblocking(false).ok()?;
    conn.set_read_timeout(Some(Duration::from_secs(2))).ok()?;
    let mut request = Vec::new();
    let mut buf = [0u8; 4096];
    while !request.windows(4).any(|w| w == b"\r\n\r\n") && request.len() < 65536 {
        match conn.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => request.extend_from_slice(&buf[..n]),
        }
    }
    let head = String::from_utf8_lossy(&request);
    let target = head.split_whitespace().nth(1).unwrap_or("").to_string();
    seen.lock().unwrap().push(target.clone());
    let Some((status, body)) = routes(&target) else {
        return Some(conn);
    };
    let reply = format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = conn.write_all(reply.as_bytes());
    None
}
