//! netperf's Unix-domain socket tests (STREAM_STREAM, STREAM_RR, DG_STREAM,
//! DG_RR, from a netperf 2.7.1 built with `--enable-unixdomain`): which test
//! a name or a message type means, and the pieces both ends share. The wire
//! layouts are in `wire`, socket files in `path`, the data loops in `data`,
//! netperf's half in `client` (its messages in `request`), netserver's in
//! `server`, the output in `report`.
//!
//! Both ends are on one machine by definition: the control connection is TCP
//! as for every test, the data moves over AF_UNIX sockets whose file names
//! netserver creates in a directory (`-- -p dir`, default the temp dir).

pub mod client;
pub mod data;
pub mod path;
pub mod report;
pub mod request;
pub mod server;
pub mod wire;

/// One of the four Unix-domain tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnixTest {
    /// SOCK_STREAM bulk transfer, netperf to netserver.
    StreamStream,
    /// SOCK_STREAM request/response.
    StreamRr,
    /// SOCK_DGRAM bulk transfer, netperf to netserver.
    DgStream,
    /// SOCK_DGRAM request/response.
    DgRr,
}

const NAMES: [(&str, UnixTest); 4] = [
    ("STREAM_STREAM", UnixTest::StreamStream),
    ("STREAM_RR", UnixTest::StreamRr),
    ("DG_STREAM", UnixTest::DgStream),
    ("DG_RR", UnixTest::DgRr),
];

impl UnixTest {
    /// The test a `-t` name means (any case, as netperf's strcasecmp).
    pub fn lookup(name: &str) -> Option<UnixTest> {
        NAMES
            .iter()
            .find(|(known, _)| known.eq_ignore_ascii_case(name))
            .map(|(_, test)| *test)
    }

    pub fn name(self) -> &'static str {
        NAMES
            .iter()
            .find(|(_, test)| *test == self)
            .map_or("", |(name, _)| name)
    }

    /// The test a netserver request type asks for.
    pub fn from_request_kind(kind: u32) -> Option<UnixTest> {
        [
            UnixTest::StreamStream,
            UnixTest::StreamRr,
            UnixTest::DgStream,
            UnixTest::DgRr,
        ]
        .into_iter()
        .find(|test| test.request_kind() == kind)
    }

    pub fn request_kind(self) -> u32 {
        match self {
            UnixTest::StreamStream => wire::DO_STREAM_STREAM,
            UnixTest::StreamRr => wire::DO_STREAM_RR,
            UnixTest::DgStream => wire::DO_DG_STREAM,
            UnixTest::DgRr => wire::DO_DG_RR,
        }
    }

    pub fn response_kind(self) -> u32 {
        self.request_kind() + 1
    }

    pub fn is_datagram(self) -> bool {
        matches!(self, UnixTest::DgStream | UnixTest::DgRr)
    }

    pub fn is_request_response(self) -> bool {
        matches!(self, UnixTest::StreamRr | UnixTest::DgRr)
    }
}

/// What `netperf -t STREAM_STREAM -- -h` prints (netperf's `unix_usage`).
pub const USAGE: &str = concat!(
    "\n",
    "Usage: netperf [global options] -- [test options] \n",
    "\n",
    "STREAM/DG UNIX Sockets Test Options:\n",
    "    -h                Display this text\n",
    "    -m bytes          Set the send size (STREAM_STREAM, DG_STREAM)\n",
    "    -M bytes          Set the recv size (STREAM_STREAM, DG_STREAM)\n",
    "    -p dir            Set the directory where pipes are created\n",
    "    -r req,res        Set request,response size (STREAM_RR, DG_RR)\n",
    "    -s send[,recv]    Set local socket send/recv buffer sizes\n",
    "    -S send[,recv]    Set remote socket send/recv buffer sizes\n",
    "\n",
    "For those options taking two parms, at least one must be specified;\n",
    "specifying one value without a comma will set both parms to that\n",
    "value, specifying a value with a leading comma will set just the second\n",
    "parm, a value with a trailing comma will set just the first. To set\n",
    "each parm to unique values, specify both and separate them with a\n",
    "comma.\n",
);

/// The test-specific usage text for `test_name`, if it is a Unix-domain test.
pub fn usage_for(test_name: &str) -> Option<&'static str> {
    UnixTest::lookup(test_name).map(|_| USAGE)
}

/// The text C's `strerror` gives for `errno`, as netperf's perror prints it.
pub fn strerror(errno: i32) -> String {
    let full = std::io::Error::from_raw_os_error(errno).to_string();
    match full.find(" (os error") {
        Some(at) => full[..at].to_string(),
        None => full,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_kinds_round_trip() {
        for (name, test) in NAMES {
            assert_eq!(UnixTest::lookup(&name.to_lowercase()), Some(test));
            assert_eq!(test.name(), name);
            assert_eq!(UnixTest::from_request_kind(test.request_kind()), Some(test));
        }
        assert_eq!(UnixTest::lookup("TCP_STREAM"), None);
        assert_eq!(
            UnixTest::from_request_kind(wire::DO_STREAM_STREAM + 1),
            None
        );
        assert_eq!(UnixTest::DgRr.response_kind(), 47);
    }

    #[test]
    fn usage_only_for_unix_tests() {
        assert!(usage_for("dg_rr").is_some_and(|u| u.contains("-p dir")));
        assert!(usage_for("UDP_RR").is_none());
    }

    #[test]
    fn strerror_has_no_rust_suffix() {
        assert_eq!(strerror(libc::ENOENT), "No such file or directory");
    }
}
