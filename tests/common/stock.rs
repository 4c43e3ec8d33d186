//! A stock netperf 2.7.1 netserver for the tests that compare with stock
//! (NETPERF_STOCK_DIR, `super::stock_dir`): started on a free port of a
//! loopback address and killed with its whole process group when dropped.

use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A stock netserver in a process group of its own. It forks a child per
/// control connection; a child whose client went away before the data
/// connection (a refused extension) waits in accept for ever, so the whole
/// group is killed.
pub struct StockServer {
    child: Child,
    pub port: u16,
}

impl Drop for StockServer {
    fn drop(&mut self) {
        // SAFETY: kill takes a pid and a signal; a negative pid names the
        // group the server leads.
        unsafe { libc::kill(-(self.child.id() as i32), libc::SIGKILL) };
        let _ = self.child.wait();
    }
}

/// Start `DIR/netserver -D -4 -L host -p <free port>`, waiting up to 5 s
/// for it to accept; another port if it does not (a lost port race).
pub fn start_stock_on(dir: &str, host: &str) -> StockServer {
    for _ in 0..20 {
        let port = TcpListener::bind((host, 0))
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let mut child = Command::new(format!("{dir}/netserver"))
            .args(["-D", "-4", "-L", host, "-p", &port.to_string()])
            .process_group(0)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn stock netserver");
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                break;
            }
            // Not a connect probe: that can reach another process that
            // took the port meanwhile, while this one failed to bind it.
            if super::listens_on(child.id(), port) {
                return StockServer { child, port };
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
    panic!("could not start the stock netserver on {host}");
}

/// A stock netserver on 127.0.0.1.
pub fn start_stock(dir: &str) -> StockServer {
    start_stock_on(dir, "127.0.0.1")
}
