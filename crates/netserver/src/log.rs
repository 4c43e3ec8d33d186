//! netserver's log lines: one line per event with a timestamp and the
//! client's address, on stderr, when -v was given (or -d); as JSON lines
//! with --log-json. Audit lines (what a client changed on this host, or
//! was refused) are written whatever -v says.

use super::options::ServerOptions;
use netperf_base::timefmt::utc_timestamp;
use netperf_wire::offload::one_line;
use std::io::Write;
use std::net::SocketAddr;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub fn enabled(o: &ServerOptions) -> bool {
    (o.verbosity_given && o.verbosity > 0) || o.debug > 0
}

/// An event, when the log is on (-v, -d).
pub fn line(o: &ServerOptions, peer: Option<SocketAddr>, text: &str) {
    if enabled(o) {
        write(o, peer, text);
    }
}

/// A change a client made to this host, or tried to: the operator's record
/// of who touched what, so it is written even without -v.
pub fn audit(o: &ServerOptions, peer: Option<SocketAddr>, text: &str) {
    write(o, peer, text);
}

fn write(o: &ServerOptions, peer: Option<SocketAddr>, text: &str) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let record = render(o.log_json, now, peer, text);
    let _ = writeln!(std::io::stderr().lock(), "{record}");
}

/// One log line. Texts carry what clients sent (file names, interface
/// names, socket paths): a control character in them must not start a
/// line of its own that reads as netserver's, nor drive a terminal.
fn render(json: bool, now: Duration, peer: Option<SocketAddr>, text: &str) -> String {
    let text = one_line(text);
    // A v4 client of the dual-stack listener is shown as the v4 address.
    let peer = peer.map(|p| SocketAddr::new(p.ip().to_canonical(), p.port()));
    let time = utc_timestamp(now);
    if json {
        let record = serde_json::json!({
            "time": time,
            "ts": now.as_secs_f64(),
            "program": "netserver",
            "client": peer.map(|p| p.to_string()),
            "message": text,
        });
        return record.to_string();
    }
    let who = peer.map_or_else(|| "-".to_string(), |p| p.to_string());
    format!("{time} netserver {who} {text}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clients_text_stays_on_its_line() {
        let peer = "[::ffff:198.18.0.9]:4000".parse().ok();
        let forged = "no fill file 'x\n2024-01-01T00:00:00Z netserver - shutting down\x1b[2J'";
        let line = render(false, Duration::from_secs(0), peer, forged);
        assert!(!line.contains('\n') && !line.contains('\x1b'), "{line:?}");
        assert!(line.contains(" netserver 198.18.0.9:4000 no fill file 'x 2024"));
        let json = render(true, Duration::from_secs(0), peer, forged);
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert!(!value["message"].as_str().unwrap().contains('\n'));
        assert_eq!(value["client"], "198.18.0.9:4000");
    }
}
