//! One test being served by netserver, whatever its wire or socket family:
//! its log lines, the wait for its data connection, and its data phase run
//! the one way every test runs — on a descriptor table of its own, watched
//! for a closed control connection and a silent client, under the test's
//! clock, with the CPU measured around it.

use super::limits::Limits;
use super::log;
use super::options::ServerOptions;
use netperf_data::engine::stop_flag::StopFlag;
use netperf_data::engine::watchdog;
use netperf_data::measure::cpu::CpuSampler;
use netperf_data::measure::outcome::CpuUsage;
use netperf_data::net::channel::{Channel, ChannelError};
use netperf_wire::Message;
use socket2::{SockAddr, Socket};
use std::net::SocketAddr;
use std::os::fd::RawFd;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Wait for a data connection whose peer `admit` accepts (others are closed
/// at once), until `stop` or the accept timeout: `Ok(None)`. `listener`
/// must have a receive timeout: it is how often the wait looks at both. A
/// failing `accept` other than a timeout, an interruption or an aborted
/// connection is the error.
pub fn accept_within(
    listener: &Socket,
    stop: &StopFlag,
    limits: &Limits,
    admit: impl Fn(&SockAddr) -> bool,
) -> std::io::Result<Option<Socket>> {
    let give_up = Instant::now() + limits.accept_timeout;
    while !stop.is_set() && Instant::now() < give_up {
        match listener.accept() {
            Ok((s, from)) if admit(&from) => return Ok(Some(s)),
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::EAGAIN | libc::EINTR | libc::ECONNABORTED)
                ) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(None)
}

/// What a test's data phase gave back, with its time and CPU.
#[derive(Default)]
pub struct Served<T> {
    /// What the data loop returned.
    pub value: T,
    /// Seconds, less the pad when netserver's own timer ended the test.
    pub elapsed: f64,
    pub usage: Option<CpuUsage>,
}

/// Who asked for a test: the control connection (watched while the test
/// runs), the client's address, and this netserver's options.
#[derive(Clone, Copy)]
pub struct Caller<'a> {
    pub control_fd: RawFd,
    pub peer: SocketAddr,
    pub opts: &'a ServerOptions,
}

impl<'a> Caller<'a> {
    pub fn log(&self, text: &str) {
        log::line(self.opts, Some(self.peer), text);
    }

    /// The test `name` this caller asked for, answered with `response_kind`
    /// (also when refused), measuring the CPU if `measure`.
    pub fn phase(self, name: &'static str, response_kind: u32, measure: bool) -> Phase<'a> {
        Phase {
            name,
            response_kind,
            caller: self,
            stop: StopFlag::new(),
            measure,
            answered: OnceLock::new(),
        }
    }
}

/// A test being served: its name, its caller, how it is watched.
pub struct Phase<'a> {
    /// The test's name in netserver's log.
    pub name: &'static str,
    /// The response's type, for a refusal.
    pub response_kind: u32,
    pub caller: Caller<'a>,
    pub stop: StopFlag,
    pub measure: bool,
    /// When the response accepting the test went out (`answer`): the
    /// test's clock runs from there, as stock netserver starts its timer
    /// right after its response.
    answered: OnceLock<Instant>,
}

impl Phase<'_> {
    pub fn log(&self, text: &str) {
        self.caller.log(text);
    }

    /// Send the response accepting the test and start the test's clock:
    /// `measured` times the test, and ends it, from this instant. Stock
    /// netserver starts its timer here, before its accept, and its netperf
    /// only after connecting: so a sending netserver stops first and its
    /// netperf reads every byte to the end of file (flent compares
    /// LOCAL_BYTES_RECVD with REMOTE_BYTES_SENT). A clock started on the
    /// data thread, after two thread starts, could start after netperf's on
    /// a busy machine: netperf then stopped first, megabytes short.
    pub fn answer(&self, chan: &mut Channel, response: &Message) -> Result<(), ChannelError> {
        chan.send(response)?;
        let _ = self.answered.set(Instant::now());
        Ok(())
    }

    /// The data connection from an allowed client (a Unix-domain peer has
    /// no address to check: its socket file is the door), watching the
    /// control connection meanwhile.
    pub fn accept(&self, listener: &Socket) -> std::io::Result<Option<Socket>> {
        let (stop, limits) = (&self.stop, &self.caller.opts.limits);
        let allowed = |from: &SockAddr| {
            from.as_socket()
                .is_none_or(|a| self.caller.opts.allow.permits(a.ip()))
        };
        let (data, gone) =
            watchdog::watched(self.caller.control_fd, stop, limits.accept_timeout, || {
                accept_within(listener, stop, limits, allowed)
            });
        if let Some(why) = gone {
            self.log(&format!("ending the test: {why}"));
        }
        data
    }

    /// Run `work` on a descriptor table holding only `fd`, watched, with the
    /// clock `limit` (which includes `pad` seconds), counted from `answer`
    /// when the test was answered that way, else from now. A netserver told to stop (SIGTERM) cuts the test;
    /// results still go. When the clock ended it, the pad is taken off the
    /// time and the CPU figures are scaled to the test's own time, as
    /// netperf corrects them (the pad was idle).
    pub fn measured<T: Send>(
        &self,
        fd: RawFd,
        limit: Option<Duration>,
        pad: u32,
        work: impl FnOnce() -> T + Send,
    ) -> Served<T> {
        let mut cpu = self.measure.then(|| CpuSampler::start(None).ok()).flatten();
        let started = self.answered.get().copied().unwrap_or_else(Instant::now);
        let limit = limit.map(|l| l.saturating_sub(started.elapsed()));
        let (control_fd, silent) = (
            self.caller.control_fd,
            self.caller.opts.limits.silent_timeout,
        );
        let ran = watchdog::watched_alone(control_fd, &self.stop, silent, &[fd], limit, work);
        let mut elapsed = started.elapsed().as_secs_f64();
        if ran.timer_fired {
            elapsed = (elapsed - f64::from(pad)).max(0.0);
        }
        let usage = cpu.as_mut().and_then(|c| match ran.timer_fired {
            true => c.stop_scaled_to(elapsed).ok(),
            false => c.stop().ok(),
        });
        if let Some(why) = ran.gone {
            self.log(&format!("ending the test: {why}"));
        }
        Served {
            value: ran.value,
            elapsed,
            usage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use netperf_data::net::socket;
    use std::net::TcpStream;

    fn listener() -> Socket {
        let addr: SocketAddr = "127.0.0.1:0".parse().unwrap();
        let s = Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
        s.bind(&addr.into()).unwrap();
        s.listen(8).unwrap();
        socket::set_timeouts(&s, Some(Duration::from_millis(50))).unwrap();
        s
    }

    #[test]
    fn accept_within_admits_filters_and_stops() {
        let limits = Limits {
            accept_timeout: Duration::from_millis(300),
            ..Limits::default()
        };
        let (l, stop) = (listener(), StopFlag::new());
        let at = socket::local_addr(&l).unwrap();
        let _refused = TcpStream::connect(at).unwrap();
        assert!(accept_within(&l, &stop, &limits, |_| false)
            .unwrap()
            .is_none());
        let _admitted = TcpStream::connect(at).unwrap();
        let from_loopback = |a: &SockAddr| a.as_socket().is_some_and(|a| a.ip().is_loopback());
        assert!(accept_within(&l, &stop, &limits, from_loopback)
            .unwrap()
            .is_some());
        let _waiting = TcpStream::connect(at).unwrap();
        stop.set();
        assert!(accept_within(&l, &stop, &limits, |_| true)
            .unwrap()
            .is_none());
    }
}
