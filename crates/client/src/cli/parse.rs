//! The entry point of netperf command-line parsing: splits argv into the
//! global section and the test-specific section at `--`, feeds each option
//! to its handler, and answers `-h` and `-V`.
//!
//! Order of precedence follows netperf: options are read left to right and
//! an unknown option or a missing value stops the scan (netperf prints its
//! usage there). A bad value does not stop it, so that a `-h` or `-V` later
//! on the line still wins, as it does with netperf's lenient number parsing;
//! the first bad value is reported at the end.

use super::config::{Config, GlobalOptions, TestOptions};
use super::error::{CliError, Section};
use super::extensions;
use super::getopt::{Item, ScanError, Scanner};
use super::global_opts::{apply_global, finish_global, GlobalScanState, GLOBAL_OPTIONS};
use super::test_opts::{apply_test, TEST_OPTIONS, UNIX_TEST_OPTIONS};
use super::usage;

/// The program name netperf puts first in COMMAND_LINE.
pub const PROGRAM_NAME: &str = "netperf";

/// What the command line asks netperf to do.
// Built once per process and matched at once, so the size gap between
// `Run` and the others costs nothing; boxing would only burden callers.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Invocation {
    /// Run the test the configuration describes.
    Run(Config),
    /// Print `text` exactly and exit with `exit_code` (`-h`, or `-- -h`).
    /// See [`Invocation::usage_goes_to_stderr`] for the stream.
    Usage { text: String, exit_code: i32 },
    /// Print [`usage::VERSION_TEXT`] on stdout and exit 0 (`-V`).
    Version,
}

impl Invocation {
    /// netperf writes the global usage to stderr and the test-specific usage
    /// to stdout; false for anything but a global usage.
    pub fn usage_goes_to_stderr(&self) -> bool {
        matches!(self, Invocation::Usage { text, .. } if usage::goes_to_stderr(text))
    }
}

/// The COMMAND_LINE netperf reports: the program name and every argument
/// joined with single spaces, without quoting (as netperf builds it).
pub fn command_line(args: &[String]) -> String {
    std::iter::once(PROGRAM_NAME)
        .chain(args.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join(" ")
}

fn scan_error(error: ScanError, section: Section) -> CliError {
    match error {
        ScanError::Unknown(letter) => CliError::UnknownOption { letter, section },
        ScanError::MissingValue(letter) => CliError::MissingValue {
            option: super::error::OptionName { letter, section },
        },
    }
}

/// Parses netperf's arguments (`args` excludes argv\[0\]).
pub fn parse_netperf(args: &[String]) -> Result<Invocation, CliError> {
    let mut config = default_config();
    config.global.command_line = command_line(args);
    config.global.args = args.to_vec();
    // The first bad value, reported once nothing later on the line asks
    // for help or the version.
    let mut first_bad_value: Option<CliError> = None;
    let mut keep_first = |result: Result<(), CliError>| {
        if let Err(error) = result {
            first_bad_value.get_or_insert(error);
        }
    };

    let mut state = GlobalScanState::default();
    let mut globals = Scanner::new(args, GLOBAL_OPTIONS);
    for item in globals.by_ref() {
        match item.map_err(|e| scan_error(e, Section::Global))? {
            Item::Option { letter: 'h', .. } => return Ok(global_usage()),
            Item::Option { letter: 'V', .. } => return Ok(Invocation::Version),
            Item::Option { letter, value } => {
                keep_first(apply_global(&mut config.global, &mut state, letter, value))
            }
            Item::Positional(word) => state.notes.push(ignored(word)),
            Item::EndOfOptions => break,
        }
    }
    finish_global(&mut config.global, &state);
    config.notes.append(&mut state.notes);
    config.stdout_text = std::mem::take(&mut state.stdout);

    let test_words = match extensions::extract(globals.rest(), &mut config.test)? {
        extensions::Extracted::Rest(words) => words,
        extensions::Extracted::Help => {
            return Ok(Invocation::Usage {
                text: extensions::EXTENSIONS_USAGE.to_string(),
                exit_code: usage::USAGE_EXIT_CODE,
            })
        }
    };
    let table = match netperf_wire::unix::UnixTest::lookup(&config.global.test_name) {
        Some(_) => UNIX_TEST_OPTIONS,
        None => TEST_OPTIONS,
    };
    let mut tests = Scanner::new(&test_words, table);
    let unix_domain = std::ptr::eq(table, UNIX_TEST_OPTIONS);
    for item in tests.by_ref() {
        let item = match item {
            // netperf's omni and sockets parsers fall from getopt's '?'
            // into '-4'; only the Unix-domain one prints its usage.
            Err(error) if !unix_domain => {
                config.notes.push(as_dash_four(error));
                Item::Option {
                    letter: '4',
                    value: None,
                }
            }
            other => other.map_err(|e| scan_error(e, Section::Test))?,
        };
        match item {
            Item::Option { letter: 'h', .. } => {
                return Ok(Invocation::Usage {
                    text: usage::test_usage(&config.global.test_name).to_string(),
                    exit_code: usage::USAGE_EXIT_CODE,
                })
            }
            Item::Option { letter, value } => keep_first(apply_test(&mut config, letter, value)),
            Item::Positional(word) => config.notes.push(ignored(word)),
            Item::EndOfOptions => break,
        }
    }
    // Words after a second `--` are not options of anything.
    for word in tests.rest() {
        config.notes.push(ignored(word));
    }

    // A value that sets both halves of a pair is read, and noted, once.
    config.notes.dedup();
    match first_bad_value {
        Some(error) => Err(error),
        None => Ok(Invocation::Run(config)),
    }
}

/// netperf's defaults for every option.
pub fn default_config() -> Config {
    Config {
        global: GlobalOptions::default(),
        test: TestOptions::default(),
        unsupported: Vec::new(),
        notes: Vec::new(),
        stdout_text: String::new(),
    }
}

fn global_usage() -> Invocation {
    Invocation::Usage {
        text: usage::GLOBAL_USAGE.to_string(),
        exit_code: usage::USAGE_EXIT_CODE,
    }
}

/// netperf's getopt moves words that are no option out of its way and
/// never reads them; so are they here, and said to be.
fn ignored(word: &str) -> String {
    format!("'{word}' is no option nor an option's value: ignored, as netperf 2.7.1 does (quote values that contain spaces)")
}

/// The note for a test option netperf's getopt does not take: it runs as
/// `-4` (the data connection over IPv4).
fn as_dash_four(error: ScanError) -> String {
    match error {
        ScanError::Unknown(letter) => format!(
            "test option -{letter} is unknown to netperf 2.7.1, which runs it as -4 (IPv4 data connection)"
        ),
        ScanError::MissingValue(letter) => format!(
            "test option -{letter} has no value; netperf 2.7.1 runs it as -4 (IPv4 data connection)"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::test_support::{error, notes, run, words as args};
    use netperf_data::net::resolve::Family;

    #[test]
    fn no_arguments_is_netperf_defaults() {
        let config = run("");
        assert_eq!(config.global.test_name, "TCP_STREAM");
        assert_eq!(config.global.host, "localhost");
        assert_eq!(config.global.port, "12865");
        assert_eq!(config.global.test_length, 10);
        assert_eq!(config.global.format_units, 'm');
        assert_eq!(config.global.command_line, "netperf");
        assert!(config.unsupported.is_empty());
        assert!(config.test.unsupported.is_empty());
    }

    #[test]
    fn help_and_version() {
        for line in ["-h", "-H host -h -l 1", "-l 1 -h -- -m 1"] {
            match parse_netperf(&args(line)) {
                Ok(Invocation::Usage { text, exit_code }) => {
                    assert_eq!(text, usage::GLOBAL_USAGE, "{line}");
                    assert_eq!(exit_code, 1);
                }
                other => panic!("`{line}` gave {other:?}"),
            }
        }
        for line in ["-t TCP_STREAM -- -h", "-t omni -- -m 1 -h", "-- -h"] {
            match parse_netperf(&args(line)) {
                Ok(Invocation::Usage { text, exit_code }) => {
                    assert_eq!(text, usage::OMNI_USAGE, "{line}");
                    assert_eq!(exit_code, 1);
                }
                other => panic!("`{line}` gave {other:?}"),
            }
        }
        match parse_netperf(&args("-t tcp_cc -- -h")) {
            Ok(Invocation::Usage { text, .. }) => assert_eq!(text, usage::SOCKETS_USAGE),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            parse_netperf(&args("-V")),
            Ok(Invocation::Version)
        ));
        assert!(matches!(
            parse_netperf(&args("-l 1 -V -h")),
            Ok(Invocation::Version)
        ));
        // help wins over a bad value earlier on the line, as in netperf
        assert!(matches!(
            parse_netperf(&args("-l abc -h")),
            Ok(Invocation::Usage { .. })
        ));
        let global = parse_netperf(&args("-h")).map(|i| i.usage_goes_to_stderr());
        assert_eq!(global, Ok(true));
        let test = parse_netperf(&args("-- -h")).map(|i| i.usage_goes_to_stderr());
        assert_eq!(test, Ok(false));
    }

    #[test]
    fn double_dash_separates_the_sections() {
        // -m is not a global option, -l is not the global -l after --
        assert_eq!(
            error("-m 1K"),
            "unknown option -m (test-specific options go after --)"
        );
        let config = run("-l 5 -- -m 1K");
        assert_eq!(config.global.test_length, 5);
        assert_eq!(config.test.local_send_size, Some(1024));
        // -s before -- is the global wait, after it the socket buffer
        let config = run("-s 2 -- -s 64K");
        assert_eq!(config.global.wait_secs, 2);
        assert_eq!(config.test.local_send_buf, Some(65536));
        assert_eq!(config.test.local_recv_buf, Some(65536));
        // test options with no global ones
        assert_eq!(run("-- -r 32").test.request_size, Some(32));
        // a second -- ends test options; what follows it is ignored
        assert!(run("-- -D --").test.local_nodelay);
        assert_eq!(notes("-- -D -- extra"), [ignored("extra")]);
    }

    fn ignored(word: &str) -> String {
        super::ignored(word)
    }

    #[test]
    fn stray_words_are_ignored_as_netperf_does_and_said_to_be() {
        let config = run("-B brand here");
        assert_eq!(config.global.brand.as_deref(), Some("brand"));
        assert_eq!(
            config.notes,
            ["'here' is no option nor an option's value: ignored, as netperf 2.7.1 does (quote values that contain spaces)"]
        );
        let config = run("-- -m 1 two");
        assert_eq!(config.test.local_send_size, Some(1));
        assert_eq!(config.notes, [ignored("two")]);
    }

    #[test]
    fn errors_name_option_and_value() {
        // netperf prints its usage for these
        assert_eq!(error("-l"), "-l requires a value");
        assert_eq!(
            error("-x"),
            "unknown option -x (test-specific options go after --)"
        );
        // the first bad value is the one reported
        assert!(error("-I 50 -W -1").contains("-I"));
    }

    #[test]
    fn unknown_test_options_run_as_dash_four_as_netperf_does() {
        // netperf's omni parser falls from getopt's '?' into -4
        for line in ["-- -z", "-- -m"] {
            let config = run(line);
            assert_eq!(config.test.data_family, Family::Inet, "{line}");
        }
        assert_eq!(
            notes("-- -z"),
            ["test option -z is unknown to netperf 2.7.1, which runs it as -4 (IPv4 data connection)"]
        );
        assert_eq!(
            notes("-- -m"),
            ["test option -m has no value; netperf 2.7.1 runs it as -4 (IPv4 data connection)"]
        );
        // the Unix-domain tests' parser prints its usage instead
        assert_eq!(
            error("-t STREAM_STREAM -- -z"),
            "unknown option -z after --"
        );
    }

    #[test]
    fn loose_values_run_as_netperf_reads_them_with_one_note() {
        let config = run("-l 3s -- -m abc");
        assert_eq!(config.global.test_length, 3);
        assert_eq!(config.test.local_send_size, Some(0));
        assert_eq!(
            config.notes,
            [
                "-l '3s' is read as 3, as netperf 2.7.1 reads it",
                "test option -m 'abc' is read as 0, as netperf 2.7.1 reads it"
            ]
        );
        // one note for a value that sets both halves
        assert_eq!(notes("-s 4x").len(), 1);
        assert!(notes("-l 30 -- -m 32K").is_empty());
    }

    #[test]
    fn command_line_is_netperf_style() {
        let line = "-H 127.0.0.1 -l 1 -t omni -c -C -- -d stream -k all";
        assert_eq!(
            run(line).global.command_line,
            "netperf -H 127.0.0.1 -l 1 -t omni -c -C -- -d stream -k all"
        );
        // values with spaces are joined unquoted, as netperf does
        let with_space = vec!["-B".to_string(), "brand here".to_string()];
        assert_eq!(command_line(&with_space), "netperf -B brand here");
    }

    #[test]
    fn transcript_command_lines() {
        let config = run("-H 127.0.0.1 -l 1 -t TCP_STREAM -f M -- -m 32K -s 128K -S 128K");
        assert_eq!(config.global.format_units, 'M');
        assert_eq!(config.test.local_send_size, Some(32768));
        assert_eq!(config.test.remote_send_size, None);
        assert_eq!(config.test.local_send_buf, Some(131072));
        assert_eq!(config.test.remote_recv_buf, Some(131072));

        let config = run("-H 127.0.0.1 -l 1 -t UDP_STREAM -c -C -- -O local_send_size,local_sd -m 1024 -M 64K,64K -R 1");
        assert!(config.global.local_cpu && config.global.remote_cpu);
        assert_eq!(
            config.test.human_output.as_deref(),
            Some("local_send_size,local_sd")
        );
        assert_eq!(config.test.local_send_size, Some(1024));
        assert_eq!(config.test.remote_recv_size, Some(65536));
        assert_eq!(config.test.local_recv_size, Some(65536));
        assert_eq!(config.test.routing_allowed, Some(true));

        let config = run("-H 127.0.0.1 -l 3 -t TCP_RR -D -0.5 -f x");
        assert_eq!(config.global.interim_interval, Some(0.5));
        assert!(config.global.interim_always_timestamp);
        assert_eq!(config.global.format_units, 'x');

        let config = run("-H 127.0.0.1 -l 1 -i 5,3 -I 99,5 -t TCP_STREAM");
        assert_eq!(
            (config.global.iterations_max, config.global.iterations_min),
            (5, 3)
        );
        assert_eq!(config.global.confidence_level, 99);
        assert_eq!(config.global.confidence_width, 5.0);

        let config = run("-H 127.0.0.1 -l 1 -6 -t TCP_STREAM");
        assert_eq!(config.global.host_family, Family::Inet6);
        assert_eq!(config.global.host, "127.0.0.1");
    }

    /// The longest command line of the transcripts, field by field.
    #[test]
    fn long_realistic_command_line() {
        let line = "-H 127.0.0.1 -l 1 -t omni -c -C -B on -- -T tcp -d send \
                    -o protocol,result_brand,local_send_size,transport_mss,local_send_throughput,remote_recv_throughput \
                    -m 1024 -M 128K,128K -R 1 -G 1036";
        let config = run(line);

        let mut expected = default_config();
        let global = &mut expected.global;
        global.host = "127.0.0.1".into();
        global.test_length = 1;
        global.test_name = "OMNI".into();
        global.local_cpu = true;
        global.remote_cpu = true;
        global.brand = Some("on".into());
        global.command_line = format!("netperf {}", args(line).join(" "));
        global.args = args(line);
        let test = &mut expected.test;
        test.protocol = Some("tcp".into());
        test.socket_type = Some("stream".into());
        test.direction = Some("send".into());
        test.direction_mask = Some(2);
        test.csv_output = Some(
            "protocol,result_brand,local_send_size,transport_mss,local_send_throughput,remote_recv_throughput"
                .into(),
        );
        test.local_send_size = Some(1024);
        test.remote_recv_size = Some(131072);
        test.local_recv_size = Some(131072);
        test.routing_allowed = Some(true);
        test.maxseg = Some(1036);

        assert_eq!(format!("{config:?}"), format!("{expected:?}"));
    }

    #[test]
    fn another_realistic_command_line() {
        let config = run(
            "-H 127.0.0.1 -l 1 -t TCP_RR -P 0 -v 0 -B brand -- -b 8 -D -r 64,1024 -s 1M, -S ,2M -P 5000,6000 -4",
        );
        let global = &config.global;
        assert!(!global.print_headers);
        assert_eq!(global.verbosity, 0);
        assert_eq!(global.format_units, 'x');
        let test = &config.test;
        assert_eq!(test.first_burst, 8);
        assert!(test.local_nodelay && test.remote_nodelay);
        assert_eq!(
            (test.request_size, test.response_size),
            (Some(64), Some(1024))
        );
        assert_eq!(
            (test.local_send_buf, test.local_recv_buf),
            (Some(1 << 20), None)
        );
        assert_eq!(
            (test.remote_send_buf, test.remote_recv_buf),
            (None, Some(2 << 20))
        );
        assert_eq!(
            (test.local_data_port, test.remote_data_port),
            (Some(5000), Some(6000))
        );
        assert_eq!(test.data_family, Family::Inet);
        assert!(test.unsupported.is_empty());
    }

    /// Arbitrary mixtures of tricky words never panic.
    #[test]
    fn no_input_panics() {
        const WORDS: [&str; 28] = [
            "-", "--", "-c", "-C", "5", "-cC", "-l", "-1", "-H", ",", ",6", "-D", "-k", "-x", "é",
            "-é", "-h", "-V", "0", "-m", "1K,", "-I", "-i", "99,5", "-t", "omni", "-d", "-Y",
        ];
        let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 8) as usize;
            let line: Vec<String> = (0..len)
                .map(|i| WORDS[((seed >> (i * 5)) % WORDS.len() as u64) as usize].to_string())
                .collect();
            let _ = parse_netperf(&line);
        }
    }
}
