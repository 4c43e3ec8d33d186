//! How a many-flow thread's flows end once the stop flag is set: each as
//! netserver expects it (a half-close and netserver's close for senders, a
//! reset for receivers, the transaction in flight finished), bounded by
//! CLOSE_WAIT.

use super::{Thread, CLOSE_WAIT, EVENTS, WAIT_MS};
use crate::engine::flows::epoll;
use crate::engine::flows::flow::{State, Work};
use std::os::fd::AsRawFd;
use std::time::{Duration, Instant};

impl Thread<'_> {
    /// Ends every flow as netserver expects: senders half-close and wait
    /// for netserver's close, request/response flows finish their
    /// transaction and close, receivers reset (netserver still sends),
    /// UDP flows send three empty datagrams.
    pub(super) fn finish(&mut self) {
        let work = self.plan.work;
        if std::mem::take(&mut self.blocking) {
            // The end is driven by epoll again: no call may block.
            if let Some(s) = &self.slots[0].socket {
                let _ = s.set_nonblocking(true);
            }
        }
        for slot in 0..self.slots.len() {
            let Some(s) = &self.slots[slot].socket else {
                continue;
            };
            match (self.plan.datagram, work) {
                (true, _) => {
                    for _ in 0..3 {
                        let _ = match &self.dest {
                            Some(to) => s.send_to(&[], to),
                            None => s.send(&[]),
                        };
                    }
                    self.close(slot);
                }
                (false, Work::Send { .. }) => {
                    let _ = s.shutdown(std::net::Shutdown::Write);
                }
                (false, Work::Receive { .. }) => {
                    let _ = s.set_linger(Some(Duration::ZERO));
                    self.close(slot);
                }
                // A request in flight is answered (or the far end's close
                // ends it) before the close.
                (false, _) => {}
            }
        }
        // A flow topping its burst up between whole requests still owes
        // netserver nothing but the responses it is waiting for.
        for slot in &mut self.slots {
            let f = &mut slot.flow;
            if f.state == State::Sending(0) && f.in_flight > 0 && !self.plan.datagram {
                f.state = State::Receiving(0);
            }
        }
        let deadline = Instant::now() + CLOSE_WAIT;
        let mut events = epoll::events(EVENTS);
        let sending = matches!(work, Work::Send { .. });
        while self.slots.iter().any(|s| s.socket.is_some()) && Instant::now() < deadline {
            if !sending {
                for slot in 0..self.slots.len() {
                    if !matches!(self.slots[slot].flow.state, State::Receiving(_)) {
                        self.end(slot);
                    }
                }
            }
            let ready = self.wait(&mut events, WAIT_MS);
            for event in &events[..ready] {
                match sending {
                    true => self.drain(event.u64 as usize),
                    false => self.drive(event.u64 as usize, true),
                }
            }
        }
        for slot in 0..self.slots.len() {
            self.end(slot);
        }
    }

    /// Closes `slot` at the test's end: cleanly between transactions, else
    /// with a reset, so netserver never takes a cut-off connection for a
    /// finished one.
    fn end(&mut self, slot: usize) {
        match self.slots[slot].flow.state {
            State::Done => self.close(slot),
            _ => self.reset(slot),
        }
    }

    /// A half-closed sender reads until netserver's close.
    fn drain(&mut self, slot: usize) {
        let Some(s) = &self.slots[slot].socket else {
            return;
        };
        let mut buf = [0u8; 512];
        loop {
            // SAFETY: buf is valid for its length.
            let n = unsafe { libc::recv(s.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), 0) };
            match n {
                n if n > 0 => continue,
                0 => return self.close(slot),
                _ => match std::io::Error::last_os_error().raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EINTR) => return,
                    _ => return self.close(slot),
                },
            }
        }
    }
}
