//! netserver's log lines: one line per event with a timestamp and the
//! client's address, on stderr, when -v was given (or -d); as JSON lines
//! with --log-json.

use super::options::ServerOptions;
use crate::timefmt::utc_timestamp;
use std::io::Write;
use std::net::SocketAddr;
use std::time::{SystemTime, UNIX_EPOCH};

pub fn enabled(o: &ServerOptions) -> bool {
    (o.verbosity_given && o.verbosity > 0) || o.debug > 0
}

pub fn line(o: &ServerOptions, peer: Option<SocketAddr>, text: &str) {
    if !enabled(o) {
        return;
    }
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    // A v4 client of the dual-stack listener is shown as the v4 address.
    let peer = peer.map(|p| SocketAddr::new(p.ip().to_canonical(), p.port()));
    let who = peer.map_or_else(|| "-".to_string(), |p| p.to_string());
    let time = utc_timestamp(now);
    let mut err = std::io::stderr().lock();
    if o.log_json {
        let record = serde_json::json!({
            "time": time,
            "ts": now.as_secs_f64(),
            "program": "netserver",
            "client": peer.map(|p| p.to_string()),
            "message": text,
        });
        let _ = writeln!(err, "{record}");
        return;
    }
    let _ = writeln!(err, "{time} netserver {who} {text}");
}
