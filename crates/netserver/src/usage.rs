//! netserver's usage text, byte for byte as netserver 2.7.1 prints it
//! (trailing spaces and blank lines included); netserver-ng's own options
//! follow it (`limits::usage_text`).
//!
//! Each line is one literal so that trailing spaces stay visible in the source.

/// `netserver -h`. netserver writes it to stderr.
pub const NETSERVER_USAGE: &str = concat!(
    "\n",
    "Usage: netserver [options] \n",
    "\n",
    "Options:\n",
    "    -h                Display this text\n",
    "    -D                Do not daemonize\n",
    "    -d                Increase debugging output\n",
    "    -f                Do not spawn chilren for each test, run serially\n",
    "    -L name,family    Use name to pick listen address and family for family\n",
    "    -N                No debugging output, even if netperf asks\n",
    "    -p portnum        Listen for connect requests on portnum.\n",
    "    -4                Do IPv4\n",
    "    -6                Do IPv6\n",
    "    -v verbosity      Specify the verbosity level\n",
    "    -V                Display version information and exit\n",
    "    -Z passphrase     Expect passphrase as the first thing received\n",
    "\n",
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Stock netperf 2.7.1's transcripts (scripts/record-stock-fixtures).
    const TRANSCRIPT: &str = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../tests/fixtures/netperf-2.7.1-transcripts.txt"
    ));

    #[test]
    fn usage_and_version_match_the_transcript_byte_for_byte() {
        for (command, expected) in [
            ("netserver -h", NETSERVER_USAGE),
            ("netperf -V", netperf_wire::VERSION_TEXT),
        ] {
            let header = format!("$ {command}\n");
            let start = TRANSCRIPT.find(&header).expect("command in transcript") + header.len();
            let rest = &TRANSCRIPT[start..];
            let end = rest.find("[exit ").expect("exit marker");
            assert_eq!(&rest[..end], expected, "text of `{command}`");
        }
        assert!(
            TRANSCRIPT.contains("$ netserver -h\n") && NETSERVER_USAGE.ends_with("received\n\n")
        );
    }
}
