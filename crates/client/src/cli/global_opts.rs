//! netperf's global options (before `--`): the letters its `scan_cmd_line()`
//! accepts, what each one sets in [`GlobalOptions`], and the defaults it
//! derives once all of them are read (host name, `-N` resets, output units).

use super::checked::{self, Notes};
use super::config::GlobalOptions;
use super::error::{CliError, OptionName, Section};
use super::getopt::{OptionTable, ValueKind};
use super::global_setters::{
    apply_burst, apply_confidence, apply_cpu, apply_fill_files, apply_format_units, apply_host,
    apply_interim, apply_interval, apply_iterations, apply_local_host, apply_ports, ints,
    local_alignments, local_offsets, num_cpus, ring_widths, set_both, set_both_bits, set_families,
    test_length, tos_pair, wait_secs,
};
use netperf_data::net::resolve::Family;

use ValueKind::{Flag, OptionalNumber, Required};

/// netperf 2.7.1's global letters (`GLOBAL_CMD_LINE_ARGS`), with the
/// optional rate of `-c` and `-C` that netperf reads by hand.
pub const GLOBAL_OPTIONS: &OptionTable = &[
    ('4', Flag),
    ('6', Flag),
    ('a', Required),
    ('A', Required),
    ('b', Required),
    ('B', Required),
    ('c', OptionalNumber),
    ('C', OptionalNumber),
    ('d', Flag),
    ('D', Required),
    ('f', Required),
    ('F', Required),
    ('h', Flag),
    ('H', Required),
    ('i', Required),
    ('I', Required),
    ('j', Flag),
    ('k', Required),
    ('K', Required),
    ('l', Required),
    ('L', Required),
    ('n', Required),
    ('N', Flag),
    ('o', Required),
    ('O', Required),
    ('p', Required),
    ('P', Required),
    ('r', Flag),
    ('s', Required),
    ('S', Flag),
    ('t', Required),
    ('T', Required),
    ('v', Required),
    ('V', Flag),
    ('w', Required),
    ('W', Required),
    ('y', Required),
    ('Y', Required),
    ('Z', Required),
];

/// What this build of netperf 2.7.1 prints for `-k` and `-K`: it was built
/// without DIRTY, so it parses no dirty-buffer counts.
pub const NO_DIRTY_TEXT: &str = "I don't know how to get dirty.\n";

/// What the global pass remembers beyond the options themselves.
#[derive(Debug, Default)]
pub struct GlobalScanState {
    /// -H gave a host name, so netperf's family-based default does not apply.
    pub host_given: bool,
    /// What netperf prints on stdout while it reads its options (warnings).
    pub stdout: String,
    /// How values were read, for stderr.
    pub notes: Notes,
}

/// Applies one global option. `-h` and `-V` never reach here: the parser
/// answers them itself.
pub fn apply_global(
    global: &mut GlobalOptions,
    state: &mut GlobalScanState,
    letter: char,
    value: Option<&str>,
) -> Result<(), CliError> {
    let section = Section::Global;
    let option = OptionName { letter, section };
    // Required values are always present; flags ignore this.
    let text = value.unwrap_or("");
    let g = global;
    let notes = &mut state.notes;
    match letter {
        '4' => set_families(g, Family::Inet),
        '6' => set_families(g, Family::Inet6),
        'a' => set_both(
            local_alignments(option, text, notes)?,
            &mut g.local_send_align,
            &mut g.local_recv_align,
        ),
        'A' => set_both_bits(
            checked::convert_pair(option, text, super::sizespec::split_pair, notes),
            &mut g.remote_send_align,
            &mut g.remote_recv_align,
        ),
        'b' => apply_burst(g, option, text, notes),
        'B' => g.brand = Some(text.to_string()),
        'c' => apply_cpu(
            option,
            value,
            &mut g.local_cpu,
            &mut g.local_cpu_rate,
            notes,
        ),
        'C' => apply_cpu(
            option,
            value,
            &mut g.remote_cpu,
            &mut g.remote_cpu_rate,
            notes,
        ),
        'd' => g.debug = g.debug.saturating_add(1),
        'D' => apply_interim(g, option, text, notes),
        'f' => apply_format_units(g, option, text, notes),
        'F' => apply_fill_files(g, option, text)?,
        'H' => apply_host(g, state, text),
        'i' => apply_iterations(g, option, text, notes),
        'I' => apply_confidence(g, option, text, notes)?,
        'j' => g.keep_statistics = true,
        // netperf parses these "dirty buffer" counts only when built with
        // DIRTY, and otherwise says so on stdout, as here.
        'k' | 'K' => state.stdout.push_str(NO_DIRTY_TEXT),
        'l' => g.test_length = test_length(option, text, notes),
        'L' => apply_local_host(g, state, text),
        'n' => g.num_cpus = num_cpus(option, text, notes),
        'N' => g.no_control = true,
        'o' => set_both(
            local_offsets(option, text, notes)?,
            &mut g.local_send_offset,
            &mut g.local_recv_offset,
        ),
        'O' => set_both_bits(
            checked::convert_pair(option, text, super::sizespec::split_pair, notes),
            &mut g.remote_send_offset,
            &mut g.remote_recv_offset,
        ),
        'p' => apply_ports(g, text),
        'P' => {
            let number = checked::convert(option, text, notes);
            g.print_headers = checked::truth(option, text, number, notes);
        }
        'r' => g.result_confidence_only = true,
        's' => g.wait_secs = wait_secs(option, text, notes),
        'S' => g.keepalive = true,
        // The last -t wins.
        't' => g.test_name = text.to_ascii_uppercase(),
        'T' => {
            set_both(
                ints(option, text, notes),
                &mut g.local_cpu_bind,
                &mut g.remote_cpu_bind,
            );
            g.cpu_bind_requested = true;
        }
        'v' => g.verbosity = checked::convert(option, text, notes),
        'w' => apply_interval(g, option, text, notes),
        'W' => set_both(
            ring_widths(option, text, notes),
            &mut g.send_width,
            &mut g.recv_width,
        ),
        'y' => set_both(
            ints(option, text, notes),
            &mut g.local_socket_prio,
            &mut g.remote_socket_prio,
        ),
        'Y' => set_both(
            tos_pair(option, text, notes),
            &mut g.local_socket_tos,
            &mut g.remote_socket_tos,
        ),
        'Z' => g.passphrase = Some(text.to_string()),
        _ => return Err(CliError::UnknownOption { letter, section }),
    }
    Ok(())
}

/// The defaults netperf settles after reading every global option.
pub fn finish_global(global: &mut GlobalOptions, state: &GlobalScanState) {
    if !state.host_given {
        let wants_ipv6 = match global.host_family {
            Family::Inet6 => true,
            Family::Unspec => global.local_family == Family::Inet6,
            Family::Inet => false,
        };
        global.host = if wants_ipv6 { "::1" } else { "localhost" }.to_string();
    }
    if global.no_control {
        // No netserver to ask, so netperf forgets what was asked of it.
        global.remote_cpu = false;
        global.remote_cpu_rate = -1.0;
        global.remote_socket_prio = -1;
        global.remote_socket_tos = -1;
    }
    resolve_format_units(global);
}

/// netperf picks the default units from the test name for every test but
/// OMNI, whose direction decides later.
fn resolve_format_units(global: &mut GlobalOptions) {
    if global.test_name == "OMNI" {
        return;
    }
    let is_rr = global.test_name.contains("RR");
    if !global.format_units_explicit {
        global.format_units = if is_rr { 'x' } else { 'm' };
    } else if global.format_units == 'x' && !is_rr {
        global.format_units = 'm';
    }
}

#[cfg(test)]
mod tests {
    use super::NO_DIRTY_TEXT;
    use crate::cli::test_support::{error, run};
    use netperf_data::net::resolve::Family;

    #[test]
    fn cpu_options_and_their_optional_rates() {
        let g = run("-c").global;
        assert!(g.local_cpu && !g.remote_cpu);
        assert_eq!(g.local_cpu_rate, 0.0);
        let g = run("-c 5").global;
        assert!(g.local_cpu);
        assert_eq!(g.local_cpu_rate, 5.0);
        // the next word is a rate only when it starts with a digit
        let g = run("-c -C 7.5").global;
        assert_eq!((g.local_cpu_rate, g.remote_cpu_rate), (0.0, 7.5));
        let g = run("-cC").global;
        assert!(g.local_cpu && g.remote_cpu);
        // only the last letter of a cluster can take the rate
        let g = run("-Cc 50").global;
        assert_eq!((g.local_cpu_rate, g.remote_cpu_rate), (50.0, 0.0));
        assert_eq!(
            error("-c5"),
            "unknown option -5 (test-specific options go after --)"
        );
        // atof: the leading number
        let config = run("-c 5x");
        assert_eq!(config.global.local_cpu_rate, 5.0);
        assert_eq!(
            config.notes,
            ["-c '5x' is read as 5, as netperf 2.7.1 reads it"]
        );
    }

    #[test]
    fn last_test_name_wins_upper_cased() {
        assert_eq!(
            run("-t tcp_rr -t udp_stream").global.test_name,
            "UDP_STREAM"
        );
        assert_eq!(run("-t omni").global.test_name, "OMNI");
        assert_eq!(run("-tTCP_MAERTS").global.test_name, "TCP_MAERTS");
    }

    #[test]
    fn test_length() {
        assert_eq!(run("-l 30").global.test_length, 30);
        assert_eq!(run("-l -100000").global.test_length, -100_000);
        assert_eq!(run("-l -1K").global.test_length, -1024);
        assert_eq!(run("-l 0").global.test_length, 0, "0 runs until stopped");
        // netperf's convert(): the leading number, suffix letters anywhere,
        // 32-bit wrap
        assert_eq!(run("-l 3s").global.test_length, 3);
        assert_eq!(run("-l ten").global.test_length, 0);
        assert_eq!(run("-l 3000000000").global.test_length, -1_294_967_296);
        assert_eq!(run("-l 1m").global.test_length, 1_000_000);
    }

    #[test]
    fn host_and_family_rules() {
        // starred: one value sets only the name
        let g = run("-H lag").global;
        assert_eq!((g.host.as_str(), g.host_family), ("lag", Family::Unspec));
        let g = run("-H lag,4").global;
        assert_eq!((g.host.as_str(), g.host_family), ("lag", Family::Inet));
        // only the family: the default name follows it
        let g = run("-H ,6").global;
        assert_eq!((g.host.as_str(), g.host_family), ("::1", Family::Inet6));
        let g = run("-6").global;
        assert_eq!(g.host, "::1");
        assert_eq!(
            (g.host_family, g.local_family),
            (Family::Inet6, Family::Inet6)
        );
        let g = run("-L ,inet6").global;
        assert_eq!(g.host, "::1");
        // the last explicit family wins
        let g = run("-4 -H h,6").global;
        assert_eq!(
            (g.host_family, g.local_family),
            (Family::Inet6, Family::Inet)
        );
        let g = run("-H h,6 -4").global;
        assert_eq!(g.host_family, Family::Inet);
        let g = run("-L 10.0.0.1,inet").global;
        assert_eq!(g.local_host.as_deref(), Some("10.0.0.1"));
        assert_eq!(g.local_family, Family::Inet);
        // a family netperf does not know: its warning on stdout, AF_UNSPEC
        let config = run("-H h,ipx");
        assert_eq!(config.global.host_family, Family::Unspec);
        assert!(config
            .stdout_text
            .starts_with("WARNING! ipx not recognized"));
        // case matters to netperf: AF_INET is not inet
        assert_eq!(run("-H h,AF_INET").global.host_family, Family::Unspec);
        assert_eq!(run("-H ,").global.host, "localhost");
    }

    #[test]
    fn ports_are_starred() {
        let g = run("-p 12866").global;
        assert_eq!((g.port.as_str(), g.local_port.as_deref()), ("12866", None));
        let g = run("-p ,5000").global;
        assert_eq!(
            (g.port.as_str(), g.local_port.as_deref()),
            ("12865", Some("5000"))
        );
        let g = run("-p 1,2").global;
        assert_eq!((g.port.as_str(), g.local_port.as_deref()), ("1", Some("2")));
    }

    #[test]
    fn two_parm_rules_on_alignments_and_offsets() {
        let g = run("-a 4K").global;
        assert_eq!((g.local_send_align, g.local_recv_align), (4096, 4096));
        let g = run("-a ,16").global;
        assert_eq!((g.local_send_align, g.local_recv_align), (8, 16));
        let g = run("-A 32,").global;
        assert_eq!((g.remote_send_align, g.remote_recv_align), (32, 8));
        let g = run("-o 1,2 -O 3,4").global;
        assert_eq!((g.local_send_offset, g.local_recv_offset), (1, 2));
        assert_eq!((g.remote_send_offset, g.remote_recv_offset), (3, 4));
        let g = run("-W 4,8").global;
        assert_eq!((g.send_width, g.recv_width), (4, 8));
        // stock crashes on an alignment of 0 when it uses that ring
        assert_eq!(run("-a 0").global.local_send_align, 1);
        assert!(error("-a -1").starts_with("invalid value '-1' for -a"));
        assert!(error("-a 2147483647").contains("cannot run with it"));
        // the netserver's travel as the bits of netperf's int
        assert_eq!(run("-A -1").global.remote_send_align, u32::MAX);
        // a small negative local offset runs as 0
        assert_eq!(run("-o -1").global.local_send_offset, 0);
        // a negative width travels as its bits; to_spec refuses it where used
        assert_eq!(run("-W -1").global.send_width, u32::MAX);
    }

    #[test]
    fn iterations_are_clamped_like_netperf() {
        let g = run("-i 10,3").global;
        assert_eq!((g.iterations_max, g.iterations_min), (10, 3));
        assert_eq!((g.confidence_level, g.confidence_width), (99, 5.0));
        let g = run("-i 1").global;
        assert_eq!((g.iterations_max, g.iterations_min), (3, 3));
        let g = run("-i 50,1").global;
        assert_eq!((g.iterations_max, g.iterations_min), (30, 3));
        let g = run("-i ,5").global;
        assert_eq!((g.iterations_max, g.iterations_min), (5, 5));
        // garbage is 0, clamped to 3
        let g = run("-i x").global;
        assert_eq!((g.iterations_max, g.iterations_min), (3, 3));
    }

    #[test]
    fn confidence_levels() {
        let g = run("-I 99,5").global;
        assert_eq!((g.confidence_level, g.confidence_width), (99, 5.0));
        assert_eq!((g.iterations_max, g.iterations_min), (10, 3));
        // one value sets both halves, as netperf's break_args does
        let g = run("-I 95").global;
        assert_eq!((g.confidence_level, g.confidence_width), (95, 95.0));
        let g = run("-I 99,").global;
        assert_eq!(g.confidence_width, 5.0);
        let g = run("-i 20,5 -I 95,10").global;
        assert_eq!((g.iterations_max, g.iterations_min), (20, 5));
        assert!(error("-I 50").contains("only 95% and 99%"));
        assert!(error("-I ,5").contains("only 95% and 99%"));
        // a width netperf reads as 0 is its default 5%
        assert_eq!(run("-I 99,abc").global.confidence_width, 5.0);
        assert_eq!(run("-I 99x").global.confidence_level, 99);
    }

    #[test]
    fn output_units() {
        assert_eq!(run("-f G").global.format_units, 'G');
        assert_eq!(run("-f k -t TCP_RR").global.format_units, 'k');
        // default from the test name
        assert_eq!(run("-t TCP_RR").global.format_units, 'x');
        assert_eq!(run("-t UDP_STREAM").global.format_units, 'm');
        // x makes no sense for a non-RR test
        assert_eq!(run("-f x -t TCP_STREAM").global.format_units, 'm');
        // omni decides by direction later
        let g = run("-t omni").global;
        assert_eq!((g.format_units, g.format_units_explicit), ('m', false));
        let g = run("-t omni -f x").global;
        assert_eq!((g.format_units, g.format_units_explicit), ('x', true));
        // netperf's format_units() reports a letter it does not know in KBytes
        let config = run("-f q");
        assert_eq!(config.global.format_units, 'K');
        assert_eq!(
            config.notes,
            ["-f 'q' reports in KBytes, as netperf 2.7.1 reads it"]
        );
        assert_eq!(run("-f mb").global.format_units, 'm');
    }

    #[test]
    fn headers_verbosity_and_debug() {
        assert!(!run("-P 0").global.print_headers);
        assert!(run("-P 1").global.print_headers);
        assert!(run("-P 2").global.print_headers);
        assert!(!run("-P abc").global.print_headers);
        assert_eq!(run("-v 2").global.verbosity, 2);
        assert_eq!(run("-v2x").global.verbosity, 2);
        assert_eq!(run("-d -d -dd").global.debug, 4);
        assert_eq!(run("-v -1").global.verbosity, -1);
    }

    #[test]
    fn interim_results() {
        let g = run("-D 1").global;
        assert_eq!(g.interim_interval, Some(1.0));
        assert!(!g.interim_always_timestamp);
        let g = run("-D -0.5").global;
        assert_eq!(g.interim_interval, Some(0.5));
        assert!(g.interim_always_timestamp);
        let g = run("-D 2,64K").global;
        assert_eq!(g.interim_interval, Some(2.0));
        assert_eq!(g.interim_units.as_deref(), Some("64K"));
        assert_eq!(g.interim_units_value, Some(65536));
        // starred: a lone units half keeps the default interval
        let g = run("-D ,1000").global;
        assert_eq!(g.interim_interval, Some(1.0));
        assert_eq!(g.interim_units_value, Some(1000));
        // atof: 0 and garbage would report at every check; 1 ms here
        assert_eq!(run("-D 0").global.interim_interval, Some(0.001));
        assert_eq!(run("-D soon").global.interim_interval, Some(0.001));
        assert_eq!(run("-D 1s").global.interim_interval, Some(1.0));
    }

    #[test]
    fn fill_files() {
        let g = run("-F /tmp/data").global;
        assert_eq!(g.local_fill_file.as_deref(), Some("/tmp/data"));
        assert_eq!(g.remote_fill_file, None);
        let g = run("-F ,/r").global;
        assert_eq!(
            (g.local_fill_file, g.remote_fill_file.as_deref()),
            (None, Some("/r"))
        );
        let long = format!("-F ,{}", "x".repeat(32));
        assert!(error(&long).contains("at most 31 bytes"));
    }

    #[test]
    fn no_control_forgets_the_remote() {
        let g = run("-C -y 1,2 -Y 3,4 -N").global;
        assert!(g.no_control);
        assert!(!g.remote_cpu);
        assert_eq!(g.remote_cpu_rate, -1.0);
        assert_eq!((g.local_socket_prio, g.remote_socket_prio), (1, -1));
        assert_eq!((g.local_socket_tos, g.remote_socket_tos), (3, -1));
    }

    #[test]
    fn cpu_binding_priority_and_tos() {
        let g = run("-T 1").global;
        assert_eq!((g.local_cpu_bind, g.remote_cpu_bind), (1, 1));
        let g = run("-T 1,").global;
        assert_eq!((g.local_cpu_bind, g.remote_cpu_bind), (1, -1));
        let g = run("-T ,2").global;
        assert_eq!((g.local_cpu_bind, g.remote_cpu_bind), (-1, 2));
        let g = run("-y 6").global;
        assert_eq!((g.local_socket_prio, g.remote_socket_prio), (6, 6));
        let g = run("-Y 0x10,ef").global;
        assert_eq!((g.local_socket_tos, g.remote_socket_tos), (0x10, 0xb8));
        // parse_ipqos: anything else is -1, the TOS left alone
        let config = run("-Y 300");
        assert_eq!(config.global.local_socket_tos, -1);
        assert_eq!(config.notes.len(), 1);
        assert_eq!(run("-T a").global.local_cpu_bind, 0);
    }

    #[test]
    fn pacing() {
        let g = run("-w 10").global;
        assert_eq!((g.interval_usecs, g.interval_wait_ms), (10_000, 10));
        let g = run("-w 500u,2s").global;
        assert_eq!(
            (g.interval_usecs, g.remote_interval_usecs),
            (500, 2_000_000)
        );
        // a burst without -w paces every millisecond
        let g = run("-b 4").global;
        assert_eq!(
            (g.interval_burst, g.interval_usecs, g.interval_wait_ms),
            (4, 1000, 1)
        );
        assert_eq!(g.remote_interval_burst, 0);
        let g = run("-w 5 -b ,3").global;
        assert_eq!((g.interval_burst, g.remote_interval_burst), (0, 3));
        assert_eq!(g.remote_interval_usecs, 1000);
        // convert_timespec: no m, u or s means milliseconds
        assert_eq!(run("-w 5h").global.interval_usecs, 5000);
        // a burst that wraps negative never fills: not paced
        let config = run("-b 10G");
        assert_eq!(config.global.interval_burst, 0);
        assert_eq!(config.notes.len(), 1);
    }

    #[test]
    fn simple_options() {
        let config = run("-B tag -j -n 4 -r -s 3 -S -Z secret");
        let g = &config.global;
        assert_eq!(g.brand.as_deref(), Some("tag"));
        assert!(g.keep_statistics && g.result_confidence_only && g.keepalive);
        assert_eq!((g.num_cpus, g.wait_secs), (Some(4), 3));
        assert_eq!(g.passphrase.as_deref(), Some("secret"));
        assert_eq!(run("-n 0").global.num_cpus, None);
    }

    #[test]
    fn dirty_counts_say_what_netperf_says() {
        let config = run("-k 1,2 -K 3");
        assert_eq!(config.stdout_text, NO_DIRTY_TEXT.repeat(2));
        assert!(config.unsupported.is_empty());
    }
}
