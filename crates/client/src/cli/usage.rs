//! The exact usage texts of netperf 2.7.1 (netserver's is in the netserver
//! crate; the version text in netperf_wire),
//! byte for byte (trailing spaces and blank lines included), and which
//! stream each goes to.
//!
//! Each line is one literal so that trailing spaces stay visible in the source.

pub use netperf_wire::VERSION_TEXT;

/// Exit code of netperf and netserver after printing a usage text.
pub const USAGE_EXIT_CODE: i32 = 1;

/// The paragraph that ends every usage text about two-value options.
macro_rules! two_parms_note {
    () => {
        concat!(
            "For those options taking two parms, at least one must be specified;\n",
            "specifying one value without a comma will set both parms to that\n",
            "value, specifying a value with a leading comma will set just the second\n",
            "parm, a value with a trailing comma will set just the first. To set\n",
            "each parm to unique values, specify both and separate them with a\n",
            "comma.\n",
        )
    };
}

/// `netperf -h`: the global options. netperf writes it to stderr.
pub const GLOBAL_USAGE: &str = concat!(
    "\n",
    "Usage: netperf [global options] -- [test options] \n",
    "\n",
    "Global options:\n",
    "    -a send,recv      Set the local send,recv buffer alignment\n",
    "    -A send,recv      Set the remote send,recv buffer alignment\n",
    "    -B brandstr       Specify a string to be emitted with brief output\n",
    "    -c [cpu_rate]     Report local CPU usage\n",
    "    -C [cpu_rate]     Report remote CPU usage\n",
    "    -d                Increase debugging output\n",
    "    -D time,[units] * Display interim results at least every time interval\n",
    "                      using units as the initial guess for units per second\n",
    "                      A negative value for time will make heavy use of the\n",
    "                      system's timestamping functionality\n",
    "    -f G|M|K|g|m|k    Set the output units\n",
    "    -F lfill[,rfill]* Pre-fill buffers with data from specified file\n",
    "    -h                Display this text\n",
    "    -H name|ip,fam *  Specify the target machine and/or local ip and family\n",
    "    -i max,min        Specify the max and min number of iterations (15,1)\n",
    "    -I lvl[,intvl]    Specify confidence level (95 or 99) (99) \n",
    "                      and confidence interval in percentage (10)\n",
    "    -j                Keep additional timing statistics\n",
    "    -l testlen        Specify test duration (>0 secs) (<0 bytes|trans)\n",
    "    -L name|ip,fam *  Specify the local ip|name and address family\n",
    "    -o send,recv      Set the local send,recv buffer offsets\n",
    "    -O send,recv      Set the remote send,recv buffer offset\n",
    "    -n numcpu         Set the number of processors for CPU util\n",
    "    -N                Establish no control connection, do 'send' side only\n",
    "    -p port,lport*    Specify netserver port number and/or local port\n",
    "    -P 0|1            Don't/Do display test headers\n",
    "    -r                Allow confidence to be hit on result only\n",
    "    -s seconds        Wait seconds between test setup and test start\n",
    "    -S                Set SO_KEEPALIVE on the data connection\n",
    "    -t testname       Specify test to perform\n",
    "    -T lcpu,rcpu      Request netperf/netserver be bound to local/remote cpu\n",
    "    -v verbosity      Specify the verbosity level\n",
    "    -W send,recv      Set the number of send,recv buffers\n",
    "    -v level          Set the verbosity level (default 1, min 0)\n",
    "    -V                Display the netperf version and exit\n",
    "    -y local,remote   Set the socket priority\n",
    "    -Y local,remote   Set the IP_TOS. Use hexadecimal.\n",
    "    -Z passphrase     Set and pass to netserver a passphrase\n",
    "\n",
    two_parms_note!(),
    "\n",
    "* For these options taking two parms, specifying one value with no comma\n",
    "will only set the first parms and will leave the second at the default\n",
    "value. To set the second value it must be preceded with a comma or be a\n",
    "comma-separated pair. This is to retain previous netperf behaviour.\n",
);

/// `netperf -t OMNI -- -h`, also printed for the migrated tests (TCP_STREAM,
/// TCP_MAERTS, TCP_RR, TCP_CRR, UDP_STREAM, UDP_RR). netperf writes it to stdout.
pub const OMNI_USAGE: &str = concat!(
    "\n",
    "Usage: netperf [global options] -- [test options] \n",
    "\n",
    "OMNI and Migrated BSD Sockets Test Options:\n",
    "    -b number         Send number requests at start of _RR tests\n",
    "    -c                Explicitly declare this a connection test such as\n",
    "                      TCP_CRR or TCP_CC\n",
    "    -C                Set TCP_CORK when available\n",
    "    -d direction      Explicitly set test direction based on bitwise OR\n",
    "                      of 0x2 for transmit and 0x4 for receive. Default:\n",
    "                      based on test type\n",
    "    -D [L][,R]        Set TCP_NODELAY locally and/or remotely (TCP_*)\n",
    "    -f                Set IP_MTU_DISCOVER:IP_PMTU_DISC_DO where available\n",
    "    -F                Use TCP Fast Open functionality where available\n",
    "    -h                Display this text\n",
    "    -H name[/mask],fam  Use name (or IP) and family as target of data connection\n",
    "                      A mask value will cause randomization of the IP used\n",
    "    -k [file]         Generate keyval output optionally based on file\n",
    "                      Use filename of '?' to get the list of choices\n",
    "    -K loc[,rem]      Set the local and/or remote congestion control\n",
    "                      algorithm to use on those platforms where it can\n",
    "                      be set.\n",
    "    -L name[/mask],fam  Use name (or IP) and family as source of data connection\n",
    "                      A mask value will cause randomization of the IP used\n",
    "    -m local,remote   Set the send size for _STREAM/_MAERTS tests\n",
    "    -M local,remote   Set the recv size for _STREAM/_MAERTS tests\n",
    "    -n                Use the connected socket for UDP locally\n",
    "    -N                Use the connected socket for UDP remotely\n",
    "    -o [file]         Generate CSV output optionally based on file\n",
    "                      Use filename of '?' to get the list of choices\n",
    "    -O [file]         Generate classic-style output based on file\n",
    "                      Use filename of '?' to get the list of choices\n",
    "    -p min[,max]      Set the min/max port numbers for TCP_CRR, TCP_TRR\n",
    "    -P local[,remote] Set the local/remote port for the data socket\n",
    "    -r req,[rsp]      Set request/response sizes (TCP_RR, UDP_RR)\n",
    "    -R 0/1            Allow routing of traffic on data connection.\n",
    "                      Default: 0 (off) for UDP_STREAM, 1 (on) otherwise\n",
    "    -s send[,recv]    Set local socket send/recv buffer sizes\n",
    "    -S send[,recv]    Set remote socket send/recv buffer sizes\n",
    "    -t type           Explicitly set socket type. Default is implicit\n",
    "                      based on other settings\n",
    "    -T protocol       Explicitly set data connection protocol. Default is\n",
    "                      implicit based on other settings\n",
    "    -u uuid           Use the supplied string as the UUID for this test.\n",
    "    -4                Use AF_INET (eg IPv4) on both ends of the data conn\n",
    "    -6                Use AF_INET6 (eg IPv6) on both ends of the data conn\n",
    "\n",
    two_parms_note!(),
);

/// `netperf -t TCP_CC -- -h`: the classic BSD sockets text that netperf 2.7.1
/// still prints for the tests it did not migrate to omni (TCP_CC, TCP_MSS,
/// TCP_SENDFILE). netperf writes it to stdout.
pub const SOCKETS_USAGE: &str = concat!(
    "\n",
    "Usage: netperf [global options] -- [test options] \n",
    "\n",
    "TCP/UDP BSD Sockets Test Options:\n",
    "    -a                Use aio_write(2)\n",
    "    -A                Use aio_read(2)\n",
    "    -b number         Send number requests at start of _RR tests\n",
    "    -C                Set TCP_CORK when available\n",
    "    -D [L][,R]        Set TCP_NODELAY locally and/or remotely (TCP_*)\n",
    "    -h                Display this text\n",
    "    -H name,fam       Use name (or IP) and family as target of data connection\n",
    "    -L name,fam       Use name (or IP) and family as source of data connection\n",
    "    -m bytes          Set the send size (TCP_STREAM, UDP_STREAM)\n",
    "    -M bytes          Set the recv size (TCP_STREAM, UDP_STREAM)\n",
    "    -n                Use the connected socket for UDP locally\n",
    "    -N                Use the connected socket for UDP remotely\n",
    "    -p min[,max]      Set the min/max port numbers for TCP_CRR, TCP_TRR\n",
    "    -P local[,remote] Set the local/remote port for the data socket\n",
    "    -r req,[rsp]      Set request/response sizes (TCP_RR, UDP_RR)\n",
    "    -s send[,recv]    Set local socket send/recv buffer sizes\n",
    "    -S send[,recv]    Set remote socket send/recv buffer sizes\n",
    "    -4                Use AF_INET (eg IPv4) on both ends of the data conn\n",
    "    -6                Use AF_INET6 (eg IPv6) on both ends of the data conn\n",
    "\n",
    two_parms_note!(),
);

/// What `netperf -t STREAM_STREAM -- -h` prints (netperf's `unix_usage`).
pub const UNIX_USAGE: &str = concat!(
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
    two_parms_note!(),
);

/// Tests whose test-specific options netperf 2.7.1 still hands to the classic
/// BSD sockets parser (its `scan_sockets_args`) rather than the omni one.
const SOCKETS_PARSER_TESTS: [&str; 3] = ["TCP_CC", "TCP_MSS", "TCP_SENDFILE"];

/// Whether netperf 2.7.1 reads `test_name`'s test-specific options with
/// its classic BSD sockets parser (upper case, as the parser stores it).
pub fn sockets_parser(test_name: &str) -> bool {
    SOCKETS_PARSER_TESTS.contains(&test_name)
}

/// The text `netperf -t <test_name> -- -h` prints; `test_name` is upper case
/// as the parser stores it.
pub fn test_usage(test_name: &str) -> &'static str {
    if netperf_wire::unix::UnixTest::lookup(test_name).is_some() {
        UNIX_USAGE
    } else if sockets_parser(test_name) {
        SOCKETS_USAGE
    } else {
        OMNI_USAGE
    }
}

/// True for the texts netperf writes to stderr (the global usage); the
/// test-specific texts and the version go to stdout.
pub fn goes_to_stderr(text: &str) -> bool {
    text == GLOBAL_USAGE
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Stock netperf 2.7.1's transcripts (scripts/record-stock-fixtures).
    const TRANSCRIPT: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/netperf-2.7.1-transcripts.txt"
    ));

    /// The output recorded after `$ <command>` up to its `[exit N]` line,
    /// and the exit code.
    fn recorded_output(transcript: &str, command: &str) -> (String, i32) {
        let header = format!("$ {command}\n");
        let start = transcript
            .find(&header)
            .map(|at| at + header.len())
            .unwrap_or_else(|| panic!("command {command:?} not in transcript"));
        let rest = &transcript[start..];
        let end = rest.find("[exit ").expect("exit marker");
        let code_text = &rest[end + 6..];
        let code: i32 = code_text[..code_text.find(']').expect("]")]
            .parse()
            .expect("exit code");
        (rest[..end].to_string(), code)
    }

    #[test]
    fn texts_match_the_transcript_byte_for_byte() {
        let cases = [
            ("netperf -h", GLOBAL_USAGE, USAGE_EXIT_CODE),
            ("netperf -t TCP_STREAM -- -h", OMNI_USAGE, USAGE_EXIT_CODE),
            ("netperf -t omni -- -h", OMNI_USAGE, USAGE_EXIT_CODE),
            ("netperf -V", VERSION_TEXT, 0),
        ];
        for (command, expected, expected_code) in cases {
            let (output, code) = recorded_output(TRANSCRIPT, command);
            assert_eq!(output, expected, "text of `{command}`");
            assert_eq!(code, expected_code, "exit code of `{command}`");
        }
    }

    #[test]
    fn trailing_spaces_are_kept() {
        assert!(GLOBAL_USAGE.contains("-- [test options] \n"));
        assert!(GLOBAL_USAGE.contains("(95 or 99) (99) \n"));
    }

    #[test]
    fn test_usage_depends_on_the_parser_netperf_uses() {
        assert_eq!(test_usage("TCP_STREAM"), OMNI_USAGE);
        assert_eq!(test_usage("OMNI"), OMNI_USAGE);
        assert_eq!(test_usage("UDP_RR"), OMNI_USAGE);
        assert_eq!(test_usage("TCP_CC"), SOCKETS_USAGE);
        assert_eq!(test_usage("TCP_SENDFILE"), SOCKETS_USAGE);
        assert_eq!(test_usage("dg_rr"), UNIX_USAGE);
        assert!(UNIX_USAGE.contains("-p dir") && UNIX_USAGE.ends_with("comma.\n"));
        assert!(SOCKETS_USAGE.contains("TCP/UDP BSD Sockets Test Options:\n"));
        assert!(SOCKETS_USAGE.ends_with("comma.\n"));
    }

    #[test]
    fn streams() {
        assert!(goes_to_stderr(GLOBAL_USAGE));
        assert!(!goes_to_stderr(OMNI_USAGE));
        assert!(!goes_to_stderr(SOCKETS_USAGE));
    }
}
