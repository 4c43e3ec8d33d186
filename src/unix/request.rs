//! netperf's side of the control exchange of the Unix-domain tests: the
//! options of one run with netperf's defaults applied, the request they
//! make, and netserver's response and results of any of the four tests
//! read into one shape.

use super::UnixTest;
use crate::cli::config::{Config, GlobalOptions};
use crate::net::unix_path as path;
use crate::report::units;
use crate::server::limits::defaults as limits;
use crate::wire::unix::{
    DgRrRequest, DgRrResponse, DgRrResults, DgStreamRequest, DgStreamResponse, DgStreamResults,
    StreamRrRequest, StreamRrResponse, StreamRrResults, StreamStreamRequest, StreamStreamResponse,
    StreamStreamResults, UnixPath,
};
use crate::wire::Message;
use std::path::PathBuf;

/// How long the test runs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    Seconds(u32),
    /// Bytes for the stream tests, transactions for request/response.
    Count(u64),
}

/// The options of one run, with netperf's defaults applied.
#[derive(Debug, Clone)]
pub struct Params {
    pub test: UnixTest,
    /// `-p dir`, checked and absolute; sent to netserver when given.
    pub dir: Option<PathBuf>,
    /// Local socket buffer requests (-s), remote ones (-S); -1: default.
    pub local_send_buf: i32,
    pub local_recv_buf: i32,
    pub remote_send_buf: i32,
    pub remote_recv_buf: i32,
    /// -m (0: from the socket buffer), -M for netserver (0: its default).
    pub send_size: i32,
    pub remote_recv_size: i32,
    pub request_size: i32,
    pub response_size: i32,
    pub length: Length,
    pub unit: char,
}

fn size(value: Option<u32>, default: i32) -> Result<i32, String> {
    match value {
        None => Ok(default),
        Some(v) if v <= limits::MAX_MESSAGE as u32 => Ok(v as i32),
        Some(v) => Err(format!(
            "netperf: a message size of {v} bytes is beyond netperf-ng's limit of {} bytes",
            limits::MAX_MESSAGE
        )),
    }
}

impl Params {
    pub fn new(test: UnixTest, config: &Config) -> Result<Params, String> {
        let (g, t) = (&config.global, &config.test);
        let dir = match &t.unix_dir {
            Some(text) => Some(path::resolve_user_dir(text)?),
            None => None,
        };
        let length = if g.test_length > 0 {
            Length::Seconds(u32::try_from(g.test_length).unwrap_or(u32::MAX))
        } else {
            Length::Count(g.test_length.unsigned_abs())
        };
        let requested = if g.format_units_explicit {
            Some(g.format_units)
        } else {
            None
        };
        Ok(Params {
            test,
            dir,
            local_send_buf: t.local_send_buf.unwrap_or(-1),
            local_recv_buf: t.local_recv_buf.unwrap_or(-1),
            // Stock netperf sends 0 here, which stock netserver turns into
            // the smallest buffer the kernel allows; -1 asks both netservers
            // for their default, as netperf's own comments intend.
            remote_send_buf: t.remote_send_buf.unwrap_or(-1),
            remote_recv_buf: t.remote_recv_buf.unwrap_or(-1),
            send_size: size(t.local_send_size, 0)?,
            remote_recv_size: size(t.remote_recv_size, 0)?,
            request_size: size(t.request_size, 1)?,
            response_size: size(t.response_size, 1)?,
            length,
            unit: units::resolve_unit(requested, test.is_request_response()),
        })
    }

    /// The `test_length` word netperf sends for this test.
    pub fn wire_length(&self) -> i32 {
        let clamp = |v: u64| i32::try_from(v).unwrap_or(i32::MAX);
        match (self.length, self.test) {
            (Length::Seconds(s), _) => clamp(u64::from(s)),
            (Length::Count(n), UnixTest::StreamStream) => clamp(n),
            (Length::Count(n), UnixTest::StreamRr | UnixTest::DgRr) => -clamp(n),
            // Stock netperf has no count mode here and sends its test time, 0;
            // we count bytes and end with a zero-length datagram all the same.
            (Length::Count(_), UnixTest::DgStream) => 0,
        }
    }

    pub fn path_field(&self) -> UnixPath {
        self.dir
            .as_ref()
            .map(|d| UnixPath::new(std::os::unix::ffi::OsStrExt::as_bytes(d.as_os_str())))
            .unwrap_or_default()
    }
}

/// netserver's response, whichever test it answers.
pub struct Reply {
    pub serv_errno: i32,
    pub kind: u32,
    pub remote_send_buf: i32,
    pub remote_recv_buf: i32,
    /// Whether netserver measures CPU; None where netperf does not read it
    /// (DG_STREAM keeps its own idea).
    pub measure_cpu: Option<bool>,
    pub cpu_rate: f32,
    pub path: UnixPath,
}

/// netserver's results, whichever test they report.
pub struct Remote {
    pub serv_errno: i32,
    pub recv_calls: i64,
    pub messages: u64,
    pub cpu_util: f32,
    pub num_cpus: i32,
}

pub fn request(p: &Params, g: &GlobalOptions) -> Message {
    let measure_cpu = i32::from(g.remote_cpu);
    let (cpu_bind, cpu_rate, test_length, path) = (
        g.remote_cpu_bind,
        g.remote_cpu_rate,
        p.wire_length(),
        p.path_field(),
    );
    let (recv_alignment, recv_offset) = (g.remote_recv_align as i32, g.remote_recv_offset as i32);
    let (send_alignment, send_offset) = (g.remote_send_align as i32, g.remote_send_offset as i32);
    match p.test {
        UnixTest::StreamStream => StreamStreamRequest {
            cpu_bind,
            recv_buf_size: p.remote_recv_buf,
            send_buf_size: p.remote_send_buf,
            receive_size: p.remote_recv_size,
            recv_alignment,
            recv_offset,
            measure_cpu,
            cpu_rate,
            test_length,
            path,
            ..Default::default()
        }
        .encode(),
        UnixTest::StreamRr => StreamRrRequest {
            cpu_bind,
            recv_buf_size: p.remote_recv_buf,
            send_buf_size: p.remote_send_buf,
            recv_alignment,
            recv_offset,
            send_alignment,
            send_offset,
            request_size: p.request_size,
            response_size: p.response_size,
            measure_cpu,
            cpu_rate,
            test_length,
            path,
            ..Default::default()
        }
        .encode(),
        UnixTest::DgStream => DgStreamRequest {
            cpu_bind,
            recv_buf_size: p.remote_recv_buf,
            message_size: p.send_size,
            recv_alignment,
            recv_offset,
            measure_cpu,
            cpu_rate,
            test_length,
            path,
            ..Default::default()
        }
        .encode(),
        UnixTest::DgRr => DgRrRequest {
            cpu_bind,
            recv_buf_size: p.remote_recv_buf,
            send_buf_size: p.remote_send_buf,
            recv_alignment,
            recv_offset,
            send_alignment,
            send_offset,
            request_size: p.request_size,
            response_size: p.response_size,
            measure_cpu,
            cpu_rate,
            test_length,
            path,
            ..Default::default()
        }
        .encode(),
    }
}

pub fn reply(test: UnixTest, m: &Message) -> Reply {
    let kind = m.kind();
    match test {
        UnixTest::StreamStream => {
            let r = StreamStreamResponse::decode(m);
            Reply {
                serv_errno: r.serv_errno,
                kind,
                remote_send_buf: r.send_buf_size,
                remote_recv_buf: r.recv_buf_size,
                measure_cpu: Some(r.measure_cpu != 0),
                cpu_rate: r.cpu_rate,
                path: r.path,
            }
        }
        UnixTest::StreamRr => {
            let r = StreamRrResponse::decode(m);
            Reply {
                serv_errno: r.serv_errno,
                kind,
                remote_send_buf: r.send_buf_size,
                remote_recv_buf: r.recv_buf_size,
                measure_cpu: Some(r.measure_cpu != 0),
                cpu_rate: r.cpu_rate,
                path: r.path,
            }
        }
        UnixTest::DgStream => {
            let r = DgStreamResponse::decode(m);
            Reply {
                serv_errno: r.serv_errno,
                kind,
                remote_send_buf: r.send_buf_size,
                remote_recv_buf: r.recv_buf_size,
                measure_cpu: None,
                cpu_rate: r.cpu_rate,
                path: r.path,
            }
        }
        UnixTest::DgRr => {
            let r = DgRrResponse::decode(m);
            Reply {
                serv_errno: r.serv_errno,
                kind,
                remote_send_buf: r.send_buf_size,
                remote_recv_buf: r.recv_buf_size,
                measure_cpu: Some(r.measure_cpu != 0),
                cpu_rate: r.cpu_rate,
                path: r.path,
            }
        }
    }
}

pub fn remote(test: UnixTest, m: &Message) -> Remote {
    match test {
        UnixTest::StreamStream => {
            let r = StreamStreamResults::decode(m);
            Remote {
                serv_errno: r.serv_errno,
                recv_calls: i64::from(r.recv_calls),
                messages: 0,
                cpu_util: r.cpu_util,
                num_cpus: r.num_cpus,
            }
        }
        UnixTest::StreamRr => {
            let r = StreamRrResults::decode(m);
            Remote {
                serv_errno: r.serv_errno,
                recv_calls: i64::from(r.recv_calls),
                messages: 0,
                cpu_util: r.cpu_util,
                num_cpus: r.num_cpus,
            }
        }
        UnixTest::DgStream => {
            let r = DgStreamResults::decode(m);
            Remote {
                serv_errno: r.serv_errno,
                recv_calls: 0,
                messages: u64::from(r.messages_recvd.max(0) as u32),
                cpu_util: r.cpu_util,
                num_cpus: r.num_cpus,
            }
        }
        UnixTest::DgRr => {
            let r = DgRrResults::decode(m);
            Remote {
                serv_errno: r.serv_errno,
                recv_calls: i64::from(r.recv_calls),
                messages: 0,
                cpu_util: r.cpu_util,
                num_cpus: r.num_cpus,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::test_support::run as config;

    fn params(line: &str) -> Params {
        let c = config(line);
        let test = UnixTest::lookup(&c.global.test_name).expect("a unix test");
        Params::new(test, &c).expect("valid params")
    }

    #[test]
    fn defaults_follow_netperf() {
        let p = params("-t STREAM_RR -l -500");
        assert_eq!((p.request_size, p.response_size), (1, 1));
        assert_eq!(p.length, Length::Count(500));
        assert_eq!(p.wire_length(), -500);
        assert_eq!(p.unit, 'x');
        assert_eq!((p.remote_send_buf, p.local_recv_buf), (-1, -1));
        let p = params("-t STREAM_STREAM -l -4096 -f x");
        assert_eq!((p.wire_length(), p.unit), (4096, 'm'));
        let p = params("-t DG_STREAM -l -4096");
        assert_eq!(p.wire_length(), 0);
        let p = params("-t DG_RR -l 3 -- -r 32,64 -s 64K -S ,128K");
        assert_eq!(
            (p.request_size, p.response_size, p.wire_length()),
            (32, 64, 3)
        );
        assert_eq!((p.local_send_buf, p.local_recv_buf), (65536, 65536));
        assert_eq!((p.remote_send_buf, p.remote_recv_buf), (-1, 131072));
    }

    #[test]
    fn the_directory_is_checked_and_sent() {
        let tmp = path::default_dir();
        let p = params(&format!("-t STREAM_STREAM -- -p {}", tmp.display()));
        let field = p.path_field();
        assert!(field.is_announced());
        assert_eq!(
            PathBuf::from(String::from_utf8_lossy(&field.bytes).into_owned()),
            std::fs::canonicalize(&tmp).unwrap()
        );
        assert!(params("-t STREAM_STREAM").path_field().bytes.is_empty());
        let c = config("-t DG_RR -- -p /no/such/netperf-ng/dir");
        let e = Params::new(UnixTest::DgRr, &c).unwrap_err();
        assert!(e.contains("No such file or directory"), "{e}");
    }

    #[test]
    fn oversized_messages_are_refused_before_anything_runs() {
        let c = config("-t STREAM_STREAM -- -m 1G");
        assert!(Params::new(UnixTest::StreamStream, &c)
            .unwrap_err()
            .contains("limit"));
    }

    #[test]
    fn requests_carry_the_options() {
        let c = config("-t STREAM_STREAM -l 7 -C -- -M 8K -S 1M");
        let p = Params::new(UnixTest::StreamStream, &c).unwrap();
        let r = StreamStreamRequest::decode(&request(&p, &c.global));
        assert_eq!(
            (r.receive_size, r.send_buf_size, r.recv_buf_size),
            (8192, 1 << 20, 1 << 20)
        );
        assert_eq!((r.measure_cpu, r.test_length, r.recv_alignment), (1, 7, 8));
        assert_eq!(r.cpu_bind, -1);
    }
}
