//! netperf's Unix-domain socket tests (STREAM_STREAM, STREAM_RR, DG_STREAM,
//! DG_RR, from a netperf 2.7.1 built with `--enable-unixdomain`): which test
//! a name or a message type means, and the pieces both ends share. The wire
//! layouts are in `wire`, socket files in `path`, the data loops in `data`,
//! netperf's half in `client` (its messages in `request`), netserver's in
//! `server`; the output is `crate::report::unix`.
//!
//! Both ends are on one machine by definition: the control connection is TCP
//! as for every test, the data moves over AF_UNIX sockets whose file names
//! netserver creates in a directory (`-- -p dir`, default the temp dir).

pub mod client;
pub mod data;
pub mod request;
pub mod server;

/// The output, kept in report/ beside the classic tests it is printed like.
pub use crate::report::unix as report;

pub use crate::spec::UnixTest;

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_only_for_unix_tests() {
        assert!(usage_for("dg_rr").is_some_and(|u| u.contains("-p dir")));
        assert!(usage_for("UDP_RR").is_none());
    }
}
