//! netperf's test-specific options (after `--`) for the omni and migrated
//! BSD sockets tests: the letters its `scan_omni_args()` accepts and what
//! each one sets in [`TestOptions`]. Options netperf accepts but this build
//! cannot honour are listed in `TestOptions::unsupported`, never dropped.

use super::checked::{self, Notes};
use super::config::{Config, TestOptions};
use super::error::{CliError, OptionName, Section};
use super::getopt::{OptionTable, ValueKind};
use super::sizespec::{self, split_pair, split_pair_explicit, split_pair_explicit_sep};
use super::values;
use netperf_data::net::resolve::Family;
use netperf_data::spec::{RECV, XMIT};

use ValueKind::{Flag, OptionalWord, Required};

/// netperf 2.7.1's omni letters (`OMNI_ARGS`), with the optional selector
/// of `-k`, `-o`, `-O` that netperf reads by hand, and the `[L][,R]` word
/// the usage text documents after `-D`.
pub const TEST_OPTIONS: &OptionTable = &[
    ('4', Flag),
    ('6', Flag),
    ('a', Flag),
    ('B', Flag),
    ('b', Required),
    ('c', Flag),
    ('C', Flag),
    ('d', Required),
    ('D', OptionalWord),
    ('e', Required),
    ('f', Flag),
    ('F', Flag),
    ('g', Flag),
    ('G', Required),
    ('h', Flag),
    ('H', Required),
    ('i', Required),
    ('I', Flag),
    ('j', Required),
    ('J', OptionalWord),
    ('k', OptionalWord),
    ('K', Required),
    ('l', Required),
    ('L', Required),
    ('m', Required),
    ('M', Required),
    ('n', Flag),
    ('N', Flag),
    ('o', OptionalWord),
    ('O', OptionalWord),
    ('p', Required),
    ('P', Required),
    ('q', Required),
    ('r', Required),
    ('R', Required),
    ('s', Required),
    ('S', Required),
    ('t', Required),
    ('T', Required),
    ('u', Required),
    ('U', Flag),
    ('V', Flag),
    ('w', Required),
    ('W', Required),
];

/// The test options of the Unix-domain tests: only these, as netperf's
/// `scan_unix_args` takes them; any other letter is refused.
pub const UNIX_TEST_OPTIONS: &OptionTable = &[
    ('h', Flag),
    ('m', Required),
    ('M', Required),
    ('p', Required),
    ('r', Required),
    ('s', Required),
    ('S', Required),
];

/// Options netperf accepts that this build does not implement, and what
/// netperf would do with them (for the reader; the binary only warns).
const UNSUPPORTED_LETTERS: [(char, &str); 7] = [
    ('g', "SO_DEBUG on the data socket"),
    (
        'i',
        "check interval (netperf 2.7.1 only prints that it was removed)",
    ),
    ('I', "write() instead of send()"),
    ('j', "parallel connections"),
    ('l', "multicast TTL"),
    ('U', "keep retrying failed connect() calls"),
    ('w', "accepted and ignored by netperf 2.7.1"),
];

/// The test name whose test options netperf reads with omni's own rules
/// (for every other name `-d` is ignored and the direction is the preset's).
const NATIVE_OMNI_TEST: &str = "OMNI";

/// What netperf 2.7.1's sockets parser (TCP_CC, TCP_SENDFILE, TCP_MSS)
/// prints for `-V` on Linux.
const NO_COPY_AVOIDANCE_TEXT: &str =
    "Local send copy avoidance not available.\nLocal recv copy avoidance not available.\n";

/// Longest UUID netperf keeps (its buffer holds 37 characters).
const UUID_MAX: usize = 37;

/// Which omni output style an option selects.
#[derive(Clone, Copy)]
enum OutputStyle {
    Keyval,
    Csv,
    Human,
    Json,
}

/// Applies one test-specific option. `-h` never reaches here: the parser
/// answers it itself. `config.global.test_name` must already be final.
pub fn apply_test(config: &mut Config, letter: char, value: Option<&str>) -> Result<(), CliError> {
    let section = Section::Test;
    let option = OptionName { letter, section };
    let text = value.unwrap_or("");
    let is_native_omni = config.global.test_name == NATIVE_OMNI_TEST;
    let is_unix_domain = netperf_wire::unix::UnixTest::lookup(&config.global.test_name).is_some();
    let test = &mut config.test;
    let notes = &mut config.notes;
    if unsupported_purpose(letter).is_some() {
        test.unsupported.push(option_text(letter, value));
        return Ok(());
    }
    match letter {
        '4' => set_data_family(test, Family::Inet),
        '6' => set_data_family(test, Family::Inet6),
        'a' => test.defer_accept = true,
        'B' => test.use_pktinfo = true,
        'b' => test.first_burst = checked::atoi(option, text, notes),
        'c' => test.connection_test = true,
        'C' => test.cork = true,
        'd' => apply_direction(test, option, value, is_native_omni, notes),
        'D' => apply_nodelay(test, letter, value),
        'e' => test.receive_timeout = Some(checked::atoi(option, text, notes)),
        'f' => test.mtu_discover = true,
        'F' => test.fastopen = true,
        'G' => test.maxseg = maxseg(option, text, notes),
        'H' | 'L' => apply_data_address(test, option, text, notes, &mut config.stdout_text),
        'J' => select_output(test, OutputStyle::Json, value),
        'k' => select_output(test, OutputStyle::Keyval, value),
        'o' => select_output(test, OutputStyle::Csv, value),
        'O' => select_output(test, OutputStyle::Human, value),
        'K' => apply_cong_control(test, text),
        'm' => apply_send_sizes(test, option, text, is_native_omni, notes)?,
        'M' => apply_recv_sizes(test, option, text, is_native_omni, notes)?,
        'n' => test.local_connected = true,
        'N' => test.remote_connected = true,
        // The Unix-domain tests take a directory for their socket files.
        'p' if is_unix_domain => test.unix_dir = Some(text.to_string()),
        'p' => set_both(
            client_ports(option, text, notes),
            &mut test.port_min,
            &mut test.port_max,
        ),
        'P' => set_both(
            data_ports(option, text)?,
            &mut test.local_data_port,
            &mut test.remote_data_port,
        ),
        'q' => {
            let rate = checked::atoi(option, text, notes);
            test.pacing_rate = (rate > 0).then_some(rate as u32);
        }
        'r' => apply_rr_sizes(test, option, text, is_native_omni, notes)?,
        'R' => {
            let number = checked::atoi(option, text, notes);
            test.routing_allowed = Some(checked::truth(option, text, number, notes));
        }
        's' => set_both(
            checked::convert_pair(option, text, split_pair, notes),
            &mut test.local_send_buf,
            &mut test.local_recv_buf,
        ),
        'S' => set_both(
            checked::convert_pair(option, text, split_pair, notes),
            &mut test.remote_send_buf,
            &mut test.remote_recv_buf,
        ),
        't' => apply_socket_type(test, option, text)?,
        'T' => apply_protocol(test, option, text, notes),
        'u' => test.uuid = Some(uuid(option, text, notes)),
        'V' => {
            test.copy_avoidance = true;
            // netperf's sockets parser says so on stdout: Linux has no
            // SO_SND_COPYAVOID or SO_RCV_COPYAVOID (its omni parser is silent).
            if super::usage::sockets_parser(&config.global.test_name) {
                config.stdout_text.push_str(NO_COPY_AVOIDANCE_TEXT);
            }
        }
        // netperf's omni -W shares the global send ring width.
        'W' => {
            config.global.send_width = checked::convert(option, text, notes) as u32;
        }
        _ => return Err(CliError::UnknownOption { letter, section }),
    }
    Ok(())
}

/// Sets each field whose half of a two-value option was given.
fn set_both<T>(
    (first, second): (Option<T>, Option<T>),
    first_field: &mut Option<T>,
    second_field: &mut Option<T>,
) {
    set_some(first_field, first);
    set_some(second_field, second);
}

/// `-p min[,max]`: the client port range of connection tests (netperf's
/// `atoi`, kept in 16 bits as a port is).
fn client_ports(option: OptionName, text: &str, notes: &mut Notes) -> (Option<u16>, Option<u16>) {
    let halves = split_pair(text);
    let mut port = |half: &str| checked::atoi(option, half, notes) as u16;
    (halves.first.map(&mut port), halves.second.map(&mut port))
}

/// `-P local[,remote]` data ports: netperf hands them to getaddrinfo as
/// service names, which takes a port number (digits only) and fails the
/// test for anything else.
fn data_ports(option: OptionName, text: &str) -> Result<(Option<u16>, Option<u16>), CliError> {
    let port = |half: &str| {
        let number = (half.bytes().all(|b| b.is_ascii_digit()))
            .then(|| half.parse::<u16>().ok())
            .flatten();
        number.ok_or_else(|| {
            CliError::invalid(
                option,
                half,
                "not a port number (netperf 2.7.1 cannot resolve it either)",
            )
        })
    };
    checked::pair_of(text, split_pair, port)
}

/// `-m`/`-M`/`-r` `first[,second]` message sizes as netperf's `convert()`
/// reads them, kept as the bits of netperf's `int` (-1 is "the default").
/// Whether stock could allocate one depends on the test, which uses only
/// some: `Config::test_spec` checks those.
fn message_sizes(
    option: OptionName,
    text: &str,
    split: fn(&str) -> sizespec::Halves<'_>,
    notes: &mut Notes,
) -> (Option<u32>, Option<u32>) {
    let (first, second) = checked::convert_pair(option, text, split, notes);
    (first.map(|v| v as u32), second.map(|v| v as u32))
}

/// `-d`: omni's direction, as netperf's `parse_direction()` reads it
/// (`CRR` is 0, which runs as a send test); every other test keeps its
/// preset's and ignores -d, so there it is only listed as unsupported.
fn apply_direction(
    test: &mut TestOptions,
    option: OptionName,
    value: Option<&str>,
    is_native_omni: bool,
    notes: &mut Notes,
) {
    let text = value.unwrap_or("");
    if !is_native_omni {
        test.unsupported.push(option_text(option.letter, value));
        return;
    }
    let read = values::parse_direction(text);
    let mask = read.value as u32;
    let known = values::DIRECTION_XMIT | values::DIRECTION_RECV;
    if !read.exact || mask & !known != 0 {
        let runs = match mask & known {
            0 if mask == 0 => "a send test, as netperf 2.7.1 runs it",
            0 => "no send and no receive: netperf 2.7.1 moves no data",
            values::DIRECTION_XMIT => "a send test",
            values::DIRECTION_RECV => "a receive test",
            _ => "a request/response test",
        };
        notes.push(format!(
            "{option} '{text}' is read as {:#x} (netperf 2.7.1's reading): {runs}",
            read.value
        ));
    }
    test.direction = Some(text.to_string());
    test.direction_mask = Some(mask);
}

/// `-D [L][,R]`: TCP_NODELAY at both ends; a per-end selection is listed
/// as unsupported.
fn apply_nodelay(test: &mut TestOptions, letter: char, value: Option<&str>) {
    test.local_nodelay = true;
    test.remote_nodelay = true;
    if value.is_some() {
        test.unsupported.push(option_text(letter, value));
    }
}

/// `-H` (the netserver's) or `-L` (this end's) `name[/mask][,family]`:
/// a data address and its family.
fn apply_data_address(
    test: &mut TestOptions,
    option: OptionName,
    text: &str,
    notes: &mut Notes,
    stdout: &mut String,
) {
    let (address, family) = data_address(test, option, text, notes, stdout);
    let (name, name_family) = if option.letter == 'H' {
        (&mut test.data_host, &mut test.data_host_family)
    } else {
        (&mut test.data_local, &mut test.data_local_family)
    };
    set_some(name, address);
    *name_family = family.unwrap_or(*name_family);
}

/// Shortest remote congestion control name netperf takes: it tests the
/// third character of the remote half (`arg2[2]`), so `-K a,b` leaves the
/// netserver's alone.
const REMOTE_CONG_CONTROL_MIN: usize = 3;

/// `-K local[,remote]` congestion control algorithms.
fn apply_cong_control(test: &mut TestOptions, text: &str) {
    let halves = split_pair(text);
    set_some(&mut test.local_cong_control, halves.first.map(String::from));
    let remote = halves
        .second
        .filter(|name| name.len() >= REMOTE_CONG_CONTROL_MIN);
    set_some(&mut test.remote_cong_control, remote.map(String::from));
}

/// `-m local[,remote]` send sizes; in an omni test each implies a direction.
fn apply_send_sizes(
    test: &mut TestOptions,
    option: OptionName,
    text: &str,
    is_native_omni: bool,
    notes: &mut Notes,
) -> Result<(), CliError> {
    let (local, remote) = message_sizes(option, text, split_pair_explicit, notes);
    imply(test, is_native_omni, local.is_some(), XMIT);
    imply(test, is_native_omni, remote.is_some(), RECV);
    set_some(&mut test.local_send_size, local);
    set_some(&mut test.remote_send_size, remote);
    Ok(())
}

/// `-M remote[,local]` receive sizes: netperf's omni parser takes the
/// netserver's first. In an omni test each implies a direction.
fn apply_recv_sizes(
    test: &mut TestOptions,
    option: OptionName,
    text: &str,
    is_native_omni: bool,
    notes: &mut Notes,
) -> Result<(), CliError> {
    let (remote, local) = message_sizes(option, text, split_pair_explicit, notes);
    imply(test, is_native_omni, remote.is_some(), XMIT);
    imply(test, is_native_omni, local.is_some(), RECV);
    set_some(&mut test.remote_recv_size, remote);
    set_some(&mut test.local_recv_size, local);
    Ok(())
}

/// `-r request[,response]` sizes; in an omni test they imply both directions.
fn apply_rr_sizes(
    test: &mut TestOptions,
    option: OptionName,
    text: &str,
    is_native_omni: bool,
    notes: &mut Notes,
) -> Result<(), CliError> {
    let (request, response) = message_sizes(option, text, split_pair, notes);
    imply(test, is_native_omni, true, XMIT | RECV);
    set_some(&mut test.request_size, request);
    set_some(&mut test.response_size, response);
    Ok(())
}

/// `-t stream|dgram`.
fn apply_socket_type(
    test: &mut TestOptions,
    option: OptionName,
    text: &str,
) -> Result<(), CliError> {
    let socket_type = values::parse_socket_type(text)
        .map_err(|reason| CliError::invalid(option, text, reason))?;
    test.socket_type = Some(socket_type.to_string());
    Ok(())
}

/// `-T protocol`, and the socket type it implies. A name netperf does not
/// know is its IPPROTO_IP: the socket type's own protocol, which is what
/// runs (the test's own).
fn apply_protocol(test: &mut TestOptions, option: OptionName, text: &str, notes: &mut Notes) {
    let Some((protocol, implied_type)) = values::parse_protocol(text) else {
        notes.push(format!(
            "{option} '{text}' is no protocol netperf 2.7.1 knows: it runs protocol 0, the socket type's own"
        ));
        test.protocol_unnamed = true;
        return;
    };
    test.protocol_unnamed = false;
    // netperf-ng's `-T mptcp` is TCP over MPTCP sockets: `--mptcp`.
    let protocol = match protocol {
        values::MPTCP => {
            test.mptcp = true;
            "tcp"
        }
        other => other,
    };
    test.protocol = Some(protocol.to_string());
    if let Some(socket_type) = implied_type {
        test.socket_type = Some(socket_type.to_string());
    }
}

/// The TCP_MAXSEG values Linux takes (TCP_MIN_MSS to MAX_TCP_WINDOW).
const MAXSEG_RANGE: std::ops::RangeInclusive<i32> = 88..=32767;

/// `-G mss` (netperf's `atoi`). netperf ignores the kernel refusing a
/// value; so does this parser, which drops one Linux would refuse.
fn maxseg(option: OptionName, text: &str, notes: &mut Notes) -> Option<i32> {
    let mss = checked::atoi(option, text, notes);
    if MAXSEG_RANGE.contains(&mss) {
        return Some(mss);
    }
    if mss != 0 {
        notes.push(format!(
            "{option} '{text}': Linux refuses a TCP_MAXSEG of {mss} (it takes {} to {}); as netperf 2.7.1, the test runs without it",
            MAXSEG_RANGE.start(),
            MAXSEG_RANGE.end()
        ));
    }
    None
}

/// `-u uuid`, cut to as long as netperf keeps.
fn uuid(option: OptionName, text: &str, notes: &mut Notes) -> String {
    let kept: String = text.chars().take(UUID_MAX).collect();
    if kept.len() < text.len() {
        notes.push(format!(
            "{option}: netperf 2.7.1 keeps the first {UUID_MAX} characters, '{kept}'"
        ));
    }
    kept
}

/// What netperf does with a test-specific option this build accepts but
/// does not implement (None for the implemented ones), for fuller warnings.
pub fn unsupported_purpose(letter: char) -> Option<&'static str> {
    UNSUPPORTED_LETTERS
        .iter()
        .find(|(known, _)| *known == letter)
        .map(|(_, purpose)| *purpose)
}

/// The option as the user typed it, for the "not yet supported" warning.
fn option_text(letter: char, value: Option<&str>) -> String {
    match value {
        Some(value) => format!("-{letter} {value}"),
        None => format!("-{letter}"),
    }
}

fn set_some<T>(field: &mut Option<T>, value: Option<T>) {
    if value.is_some() {
        *field = value;
    }
}

/// The last -4/-6 sets both data families; a later `-H ..,fam` or
/// `-L ..,fam` overrides its own side.
fn set_data_family(test: &mut TestOptions, family: Family) {
    test.data_family = family;
    test.data_host_family = family;
    test.data_local_family = family;
}

/// `-H`/`-L name[/mask][,family]`: the address without its mask, and the
/// family (netperf's reading, its stdout warning included). A mask
/// (netperf's address randomization) is listed as unsupported.
fn data_address(
    test: &mut TestOptions,
    option: OptionName,
    text: &str,
    notes: &mut Notes,
    stdout: &mut String,
) -> (Option<String>, Option<Family>) {
    let halves = split_pair_explicit(text);
    let mut address = None;
    if let Some(name_and_mask) = halves.first {
        let parts = split_pair_explicit_sep(name_and_mask, '/');
        if let Some(mask) = parts.second {
            checked::convert(option, mask, notes);
            test.unsupported.push(format!("-{} {text}", option.letter));
        }
        address = parts.first.map(str::to_string);
    }
    let family = halves.second.map(|name| {
        values::parse_family(name).unwrap_or_else(|| {
            stdout.push_str(&values::family_warning(name));
            Family::Unspec
        })
    });
    (address, family)
}

/// `-k`, `-o`, `-O`: the last one wins and forgets the others' selection.
/// An omni test's sizes imply directions until -d sets one (netperf's
/// implicit_direction); the migrated tests keep their preset's.
fn imply(test: &mut TestOptions, is_native_omni: bool, given: bool, bits: u32) {
    if is_native_omni && given && test.direction_mask.is_none() {
        test.implied_direction |= bits;
    }
}

fn select_output(test: &mut TestOptions, style: OutputStyle, selection: Option<&str>) {
    test.keyval_output = None;
    test.csv_output = None;
    test.human_output = None;
    test.json_output = None;
    let chosen = Some(selection.unwrap_or("").to_string());
    match style {
        OutputStyle::Keyval => test.keyval_output = chosen,
        OutputStyle::Csv => test.csv_output = chosen,
        OutputStyle::Human => test.human_output = chosen,
        OutputStyle::Json => test.json_output = chosen,
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::test_support::{error, run};
    use netperf_data::net::resolve::Family;

    #[test]
    fn send_sizes_are_starred() {
        let t = run("-- -m 32K").test;
        assert_eq!((t.local_send_size, t.remote_send_size), (Some(32768), None));
        let t = run("-- -m ,32K").test;
        assert_eq!((t.local_send_size, t.remote_send_size), (None, Some(32768)));
        let t = run("-- -m 16K,32K").test;
        assert_eq!(
            (t.local_send_size, t.remote_send_size),
            (Some(16384), Some(32768))
        );
        let t = run("-- -m 1k").test;
        assert_eq!(t.local_send_size, Some(1000));
    }

    #[test]
    fn recv_sizes_give_the_first_value_to_the_remote() {
        let t = run("-- -M 32K").test;
        assert_eq!((t.remote_recv_size, t.local_recv_size), (Some(32768), None));
        let t = run("-- -M ,32K").test;
        assert_eq!((t.remote_recv_size, t.local_recv_size), (None, Some(32768)));
        let t = run("-- -M 16K,32K").test;
        assert_eq!(
            (t.remote_recv_size, t.local_recv_size),
            (Some(16384), Some(32768))
        );
    }

    #[test]
    fn two_parm_rules_on_sizes() {
        let t = run("-- -r 128").test;
        assert_eq!((t.request_size, t.response_size), (Some(128), Some(128)));
        let t = run("-- -r ,16K").test;
        assert_eq!((t.request_size, t.response_size), (None, Some(16384)));
        let t = run("-- -r 128,").test;
        assert_eq!((t.request_size, t.response_size), (Some(128), None));
        let t = run("-- -s 128K -S 1M,2M").test;
        assert_eq!(
            (t.local_send_buf, t.local_recv_buf),
            (Some(131072), Some(131072))
        );
        assert_eq!(
            (t.remote_send_buf, t.remote_recv_buf),
            (Some(1 << 20), Some(2 << 20))
        );
    }

    #[test]
    fn socket_buffers_take_zero_and_negative_values_as_netperf_does() {
        // netperf's tcp_rr_script passes -s 0 -S 0 (the kernel's smallest
        // buffers) and udp_rr_script -s -1 -S -1 (the system default).
        let t = run("-- -s 0 -S 0").test;
        assert_eq!((t.local_send_buf, t.local_recv_buf), (Some(0), Some(0)));
        assert_eq!((t.remote_send_buf, t.remote_recv_buf), (Some(0), Some(0)));
        let t = run("-- -s -1 -S -5,-1").test;
        assert_eq!((t.local_send_buf, t.local_recv_buf), (Some(-1), Some(-1)));
        assert_eq!((t.remote_send_buf, t.remote_recv_buf), (Some(-5), Some(-1)));
        // convert(): -1 times 1024
        assert_eq!(run("-- -s -1K").test.local_send_buf, Some(-1024));
    }

    #[test]
    fn sizes_are_read_as_netperf_reads_them() {
        for option in ["m", "M", "r", "s", "S"] {
            let config = run(&format!("-- -{option} abc"));
            assert_eq!(
                config.notes,
                [format!(
                    "test option -{option} 'abc' is read as 0, as netperf 2.7.1 reads it"
                )]
            );
        }
        assert_eq!(run("-- -m 0").test.local_send_size, Some(0));
        // 32KB: the K multiplies, the B is ignored
        assert_eq!(run("-- -m 32KB").test.local_send_size, Some(32768));
        assert_eq!(run("-- -s 3G").test.local_send_buf, Some(-1_073_741_824));
        assert_eq!(run("-- -r 1,x").test.response_size, Some(0));
        // `-m --3` is -m's value, as getopt reads it, not a long option
        assert_eq!(run("-- -m --3").test.local_send_size, Some(0));
    }

    #[test]
    fn direction_only_for_native_omni() {
        let t = run("-t omni -- -d rr").test;
        assert_eq!(
            (t.direction.as_deref(), t.direction_mask),
            (Some("rr"), Some(6))
        );
        let t = run("-t omni -- -d Send|Recv").test;
        assert_eq!(t.direction_mask, Some(6));
        // netperf ignores -d for the classic names; we say so
        let t = run("-t TCP_STREAM -- -d recv").test;
        assert_eq!(t.direction, None);
        assert_eq!(t.unsupported, vec!["-d recv".to_string()]);
        // strtol reads no number in CRR: 0, which runs a send test
        let config = run("-t omni -- -d CRR");
        assert_eq!(config.test.direction_mask, Some(0));
        assert_eq!(
            config.notes,
            ["test option -d 'CRR' is read as 0x0 (netperf 2.7.1's reading): a send test, as netperf 2.7.1 runs it"]
        );
        assert_eq!(run("-t omni -- -d 9").test.direction_mask, Some(9));
    }

    #[test]
    fn nodelay_and_its_documented_word() {
        let t = run("-- -D").test;
        assert!(t.local_nodelay && t.remote_nodelay);
        assert!(t.unsupported.is_empty());
        let t = run("-- -D L -b 8").test;
        assert!(t.local_nodelay && t.remote_nodelay);
        assert_eq!(t.unsupported, vec!["-D L".to_string()]);
        assert_eq!(t.first_burst, 8);
    }

    #[test]
    fn output_selection_last_wins() {
        let t = run("-- -k THROUGHPUT").test;
        assert_eq!(t.keyval_output.as_deref(), Some("THROUGHPUT"));
        let t = run("-- -k -d rr").test;
        assert_eq!(t.keyval_output.as_deref(), Some(""));
        let t = run("-- -k a -o b -O").test;
        assert_eq!((t.keyval_output, t.csv_output), (None, None));
        assert_eq!(t.human_output.as_deref(), Some(""));
        let t = run("-- -o ?").test;
        assert_eq!(t.csv_output.as_deref(), Some("?"));
    }

    #[test]
    fn data_addresses_and_families() {
        let t = run("-- -H 10.0.0.2 -L 10.0.0.1,4").test;
        assert_eq!(t.data_host.as_deref(), Some("10.0.0.2"));
        assert_eq!(t.data_host_family, Family::Unspec);
        assert_eq!(t.data_local.as_deref(), Some("10.0.0.1"));
        assert_eq!(t.data_local_family, Family::Inet);
        let t = run("-- -4 -H ,6").test;
        assert_eq!(t.data_family, Family::Inet);
        assert_eq!(
            (t.data_host_family, t.data_local_family),
            (Family::Inet6, Family::Inet)
        );
        let t = run("-- -H ,6 -4").test;
        assert_eq!(t.data_host_family, Family::Inet);
        let t = run("-- -H 10.0.0.0/24,inet").test;
        assert_eq!(t.data_host.as_deref(), Some("10.0.0.0"));
        assert_eq!(t.data_host_family, Family::Inet);
        assert_eq!(t.unsupported, vec!["-H 10.0.0.0/24,inet".to_string()]);
        assert_eq!(
            run("-- -L 10.0.0.0/200").test.data_local.as_deref(),
            Some("10.0.0.0")
        );
        // a family netperf does not know: its stdout warning, AF_UNSPEC
        let config = run("-- -H h,ipx");
        assert_eq!(config.test.data_host_family, Family::Unspec);
        assert!(config.stdout_text.starts_with("WARNING! ipx"));
    }

    #[test]
    fn ports() {
        let t = run("-- -p 5000,6000 -P 7000").test;
        assert_eq!((t.port_min, t.port_max), (Some(5000), Some(6000)));
        assert_eq!(
            (t.local_data_port, t.remote_data_port),
            (Some(7000), Some(7000))
        );
        let t = run("-- -P ,12867").test;
        assert_eq!((t.local_data_port, t.remote_data_port), (None, Some(12867)));
        assert!(error("-- -P 70000").contains("not a port number"));
        assert!(error("-- -P 1x").contains("not a port number"));
        // atoi, kept in 16 bits
        assert_eq!(run("-- -p discard").test.port_min, Some(0));
    }

    #[test]
    fn socket_type_protocol_and_routing() {
        let t = run("-- -T udp").test;
        assert_eq!(
            (t.protocol.as_deref(), t.socket_type.as_deref()),
            (Some("udp"), Some("dgram"))
        );
        let t = run("-- -T UDP -t stream").test;
        assert_eq!(t.socket_type.as_deref(), Some("stream"));
        // a protocol netperf does not know runs the socket type's own
        let config = run("-- -T icmp");
        assert_eq!(config.test.protocol, None);
        assert_eq!(config.notes.len(), 1);
        assert!(error("-- -t raw").contains("unknown socket type"));
        assert_eq!(run("-- -R 0").test.routing_allowed, Some(false));
        assert_eq!(run("-- -R 2").test.routing_allowed, Some(true));
        assert_eq!(run("-- -R x").test.routing_allowed, Some(false));
    }

    #[test]
    fn flags_and_small_values() {
        let config = run("-- -c -C -f -F -n -N -V -b 4 -e 1 -G 1036 -u 0123 -K bbr,cubic -W 16");
        let t = &config.test;
        assert!(t.connection_test && t.cork && t.mtu_discover && t.fastopen);
        assert!(t.local_connected && t.remote_connected && t.copy_avoidance);
        assert_eq!(
            (t.first_burst, t.receive_timeout, t.maxseg),
            (4, Some(1), Some(1036))
        );
        assert_eq!(t.uuid.as_deref(), Some("0123"));
        assert_eq!(t.local_cong_control.as_deref(), Some("bbr"));
        assert_eq!(t.remote_cong_control.as_deref(), Some("cubic"));
        assert_eq!(config.global.send_width, 16);
        let t = run("-- -K bbr").test;
        assert_eq!(t.remote_cong_control.as_deref(), Some("bbr"));
        // netperf keeps 37 characters of a UUID
        let long = run(&format!("-- -u {}", "u".repeat(38)));
        assert_eq!(long.test.uuid, Some("u".repeat(37)));
        // the remote half of -K needs three characters, as netperf tests arg2[2]
        assert_eq!(run("-- -K a,b").test.remote_cong_control, None);
        // -G outside what Linux takes is dropped, as netperf ignores the refusal
        assert_eq!(run("-- -G 7").test.maxseg, None);
        assert_eq!(run("-- -b -4").test.first_burst, -4);
        assert_eq!(run("-- -b 4").test.first_burst, 4);
    }

    #[test]
    fn accepted_but_unsupported_options_are_listed() {
        let t = run("-- -a -B -g -G 100 -i 1 -I -j 2 -l 5 -q 1000 -U -w 10").test;
        assert_eq!(
            t.unsupported,
            ["-g", "-i 1", "-I", "-j 2", "-l 5", "-U", "-w 10"]
                .map(String::from)
                .to_vec()
        );
        // -a and -B go to netserver as request flags, as netperf sends them
        assert!(t.defer_accept && t.use_pktinfo);
        assert!(super::unsupported_purpose('g').is_some());
        assert!(super::unsupported_purpose('m').is_none());
        assert_eq!(t.pacing_rate, Some(1000));
        assert_eq!(t.maxseg, Some(100));
    }
}
