//! What each global option's value sets: the readers and setters
//! [`apply_global`](super::global_opts::apply_global) dispatches to, one per
//! option (or per shape of option, for the `local[,remote]` pairs). Each
//! reads its value as netperf 2.7.1's `scan_cmd_line()` does.

use super::checked::{self, local_buffer, Notes};
use super::cnum;
use super::config::GlobalOptions;
use super::error::{CliError, OptionName};
use super::global_opts::GlobalScanState;
use super::sizespec::{split_pair, split_pair_explicit};
use super::values;
use netperf_data::net::resolve::Family;

/// netperf's limit for the remote fill file name (it travels in a
/// fixed 32-byte field of the control message, NUL included).
const REMOTE_FILL_FILE_MAX: usize = 31;

/// Default interim interval in seconds when `-D ,units` omits the time.
const DEFAULT_INTERIM_SECS: f64 = 1.0;

/// The shortest interim interval netperf-ng samples at: netperf 2.7.1
/// takes `-D 0` (or garbage, read as 0) as an interval of nothing and
/// reports at every check, which no reader wants either.
const SHORTEST_INTERIM_SECS: f64 = 0.001;

/// Iteration bounds netperf silently clamps -i into.
const ITERATIONS_FLOOR: u32 = 3;
const ITERATIONS_CEILING: u32 = 30;

fn set<T>(field: &mut T, value: Option<T>) {
    if let Some(value) = value {
        *field = value;
    }
}

/// Sets each field whose half of a two-value option was given.
pub(super) fn set_both<T>(
    (first, second): (Option<T>, Option<T>),
    first_field: &mut T,
    second_field: &mut T,
) {
    set(first_field, first);
    set(second_field, second);
}

/// Sets each field whose half was given, as the `unsigned` netperf's
/// `int` travels as on the wire (alignments, offsets of the netserver).
pub(super) fn set_both_bits(
    (first, second): (Option<i32>, Option<i32>),
    first_field: &mut u32,
    second_field: &mut u32,
) {
    set(first_field, first.map(|v| v as u32));
    set(second_field, second.map(|v| v as u32));
}

/// `convert()` of each half of a `send,recv` pair, then `check` of each
/// value read, which may replace it (with a note) or refuse it.
fn checked_pair(
    option: OptionName,
    text: &str,
    notes: &mut Notes,
    check: impl Fn(i32, &mut Notes) -> Result<u32, CliError>,
) -> Result<(Option<u32>, Option<u32>), CliError> {
    let (first, second) = checked::convert_pair(option, text, split_pair, notes);
    let first = first.map(|v| check(v, notes)).transpose()?;
    let second = second.map(|v| check(v, notes)).transpose()?;
    Ok((first, second))
}

/// `-a send,recv`: this end's buffer alignments. Stock netperf crashes on
/// an alignment of 0 when it uses that ring, and runs without one when it
/// does not; 0 runs as 1 here. Below 0 it crashes or fails to allocate.
pub(super) fn local_alignments(
    option: OptionName,
    text: &str,
    notes: &mut Notes,
) -> Result<(Option<u32>, Option<u32>), CliError> {
    checked_pair(option, text, notes, |value, notes| {
        if value == 0 {
            notes.push(format!(
                "{option} '{text}': an alignment of 0 runs as 1 (netperf 2.7.1 crashes on it)"
            ));
            return Ok(1);
        }
        local_buffer(option, text, value, 1).map(|v| v as u32)
    })
}

/// The most negative offset stock netperf runs with: it adds the offset
/// to the buffer's address (inside the alignment slack it allocated) and
/// to the `int` size it allocates, which fails past this.
const MOST_NEGATIVE_OFFSET: i32 = -(1 << 26);

/// `-o send,recv`: this end's buffer offsets. A small negative offset,
/// which stock netperf takes as a pointer into its slack, runs as 0.
pub(super) fn local_offsets(
    option: OptionName,
    text: &str,
    notes: &mut Notes,
) -> Result<(Option<u32>, Option<u32>), CliError> {
    checked_pair(option, text, notes, |value, notes| {
        if (MOST_NEGATIVE_OFFSET..0).contains(&value) {
            notes.push(format!(
                "{option} '{text}': an offset of {value} points before the buffer; it runs as 0"
            ));
            return Ok(0);
        }
        local_buffer(option, text, value, 0).map(|v| v as u32)
    })
}

/// `-W send,recv`: ring widths; 0 is netperf's automatic choice. Each
/// travels as the bits of netperf's `int`: a negative width is refused
/// only where the test makes that ring (`to_spec`), as stock netperf
/// sends it unused in its request and runs.
pub(super) fn ring_widths(
    option: OptionName,
    text: &str,
    notes: &mut Notes,
) -> (Option<u32>, Option<u32>) {
    let (send, recv) = checked::convert_pair(option, text, split_pair, notes);
    (send.map(|w| w as u32), recv.map(|w| w as u32))
}

/// `-T`, `-y`: `local[,remote]` `int`s (CPU ids, priorities) as netperf's
/// `convert()` reads them.
pub(super) fn ints(
    option: OptionName,
    text: &str,
    notes: &mut Notes,
) -> (Option<i32>, Option<i32>) {
    checked::convert_pair(option, text, split_pair, notes)
}

/// `-Y local[,remote]`: IP type-of-service values; one netperf does not
/// read is -1, which leaves the TOS alone.
pub(super) fn tos_pair(
    option: OptionName,
    text: &str,
    notes: &mut Notes,
) -> (Option<i32>, Option<i32>) {
    let halves = split_pair(text);
    let mut tos = |half: &str| {
        let read = values::parse_tos(half);
        if !read.exact {
            notes.push(format!(
                "{option} '{half}' is no TOS netperf 2.7.1 knows: the TOS is left alone"
            ));
        }
        read.value
    };
    (halves.first.map(&mut tos), halves.second.map(&mut tos))
}

/// `-4`, `-6`: both the remote and the local address family.
pub(super) fn set_families(global: &mut GlobalOptions, family: Family) {
    global.host_family = family;
    global.local_family = family;
}

/// `-c`, `-C [rate]`: measure CPU usage, with the optional calibrated rate
/// (netperf's `atof`).
pub(super) fn apply_cpu(
    option: OptionName,
    value: Option<&str>,
    measure: &mut bool,
    rate: &mut f32,
    notes: &mut Notes,
) {
    *measure = true;
    if let Some(text) = value {
        *rate = checked::strtod(option, text, notes) as f32;
    }
}

/// `-f units`: the first letter; one netperf does not know is KBytes.
pub(super) fn apply_format_units(
    global: &mut GlobalOptions,
    option: OptionName,
    text: &str,
    notes: &mut Notes,
) {
    let read = values::parse_format_units(text);
    if !read.exact {
        notes.push(format!(
            "{option} '{text}' reports in {}, as netperf 2.7.1 reads it",
            if read.value == 'K' && !text.starts_with('K') {
                "KBytes".to_string()
            } else {
                format!("'{}'", read.value)
            }
        ));
    }
    global.format_units = read.value;
    global.format_units_explicit = true;
}

/// `-F local[,remote]` fill files; the remote name must fit its wire field.
pub(super) fn apply_fill_files(
    global: &mut GlobalOptions,
    option: OptionName,
    text: &str,
) -> Result<(), CliError> {
    let halves = split_pair_explicit(text);
    if let Some(remote) = halves.second {
        if remote.len() > REMOTE_FILL_FILE_MAX {
            return Err(CliError::invalid(
                option,
                text,
                format!("the remote fill file name must be at most {REMOTE_FILL_FILE_MAX} bytes"),
            ));
        }
        global.remote_fill_file = Some(remote.to_string());
    }
    if let Some(local) = halves.first {
        global.local_fill_file = Some(local.to_string());
    }
    Ok(())
}

/// An address family as netperf reads it: one it does not know is
/// AF_UNSPEC, after its warning on stdout.
pub(super) fn family(text: &str, state: &mut GlobalScanState) -> Family {
    values::parse_family(text).unwrap_or_else(|| {
        state.stdout.push_str(&values::family_warning(text));
        Family::Unspec
    })
}

/// `-H name[,family]`: the netserver's host and address family.
pub(super) fn apply_host(global: &mut GlobalOptions, state: &mut GlobalScanState, text: &str) {
    let halves = split_pair_explicit(text);
    if let Some(host) = halves.first {
        global.host = host.to_string();
        state.host_given = true;
    }
    if let Some(name) = halves.second {
        global.host_family = family(name, state);
    }
}

/// `-L name[,family]`: the local control address and family.
pub(super) fn apply_local_host(
    global: &mut GlobalOptions,
    state: &mut GlobalScanState,
    text: &str,
) {
    let halves = split_pair_explicit(text);
    if let Some(host) = halves.first {
        global.local_host = Some(host.to_string());
    }
    if let Some(name) = halves.second {
        global.local_family = family(name, state);
    }
}

/// `-p port[,local port]` of the control connection.
pub(super) fn apply_ports(global: &mut GlobalOptions, text: &str) {
    let halves = split_pair_explicit(text);
    set(&mut global.port, halves.first.map(String::from));
    if let Some(local_port) = halves.second {
        global.local_port = Some(local_port.to_string());
    }
}

/// `-l`: seconds, 0 (until a signal — SIGALRM, SIGINT, SIGTERM — stops the
/// test) or a negative byte/transaction count, as netperf's `convert()`
/// reads it (`3s` is 3).
pub(super) fn test_length(option: OptionName, text: &str, notes: &mut Notes) -> i64 {
    i64::from(checked::convert(option, text, notes))
}

/// `-w local[,remote]` pacing intervals (netperf's `convert_timespec`).
pub(super) fn apply_interval(
    global: &mut GlobalOptions,
    option: OptionName,
    text: &str,
    notes: &mut Notes,
) {
    let halves = split_pair_explicit(text);
    if let Some(local) = halves.first {
        let usecs = checked::timespec(option, local, notes);
        global.interval_usecs = usecs;
        global.interval_wait_ms = usecs / 1000;
    }
    if let Some(remote) = halves.second {
        global.remote_interval_usecs = checked::timespec(option, remote, notes);
    }
}

/// `-b local[,remote]`: sends per pacing interval. Without `-w` netperf
/// paces every millisecond. A burst netperf holds as negative (`-b 10G`
/// wraps) counts down for billions of sends before its first wait: no
/// pacing, which is what runs here.
pub(super) fn apply_burst(
    global: &mut GlobalOptions,
    option: OptionName,
    text: &str,
    notes: &mut Notes,
) {
    let halves = split_pair_explicit(text);
    if let Some(half) = halves.first {
        let read = cnum::convert(half);
        let burst = read.value;
        if burst < 0 {
            notes.push(format!(
                "{option} '{half}' is read as {burst}, a burst that never fills: the test is not paced, as with netperf 2.7.1"
            ));
        } else {
            checked::note_if_loose(notes, option, half, &read);
        }
        global.interval_burst = burst.max(0) as u32;
        if global.interval_usecs == 0 {
            global.interval_usecs = 1000;
            global.interval_wait_ms = 1;
        }
    }
    if let Some(half) = halves.second {
        global.remote_interval_burst = checked::convert(option, half, notes) as u32;
        if global.remote_interval_usecs == 0 {
            global.remote_interval_usecs = 1000;
        }
    }
}

/// `-D time[,units]`: netperf's `atof` of the seconds (negative: always
/// timestamp) and `convert()` of the units.
pub(super) fn apply_interim(
    global: &mut GlobalOptions,
    option: OptionName,
    text: &str,
    notes: &mut Notes,
) {
    let halves = split_pair_explicit(text);
    global.interim_always_timestamp = false;
    match halves.first {
        Some(time_text) => {
            let secs = checked::strtod(option, time_text, notes);
            let mut interval = secs.abs();
            if !interval.is_finite() || interval < SHORTEST_INTERIM_SECS {
                notes.push(format!(
                    "{option} '{time_text}': an interval of {interval} s runs as {SHORTEST_INTERIM_SECS} s (netperf 2.7.1 would report at every check)"
                ));
                interval = SHORTEST_INTERIM_SECS;
            }
            global.interim_always_timestamp = secs < 0.0;
            global.interim_interval = Some(interval);
        }
        None => {
            global.interim_interval = Some(global.interim_interval.unwrap_or(DEFAULT_INTERIM_SECS));
        }
    }
    if let Some(units_text) = halves.second {
        let units = checked::convert(option, units_text, notes);
        // netperf's first guess of units per interval; it adapts from there.
        global.interim_units_value = Some(units.max(1) as u32);
        global.interim_units = Some(units_text.to_string());
    }
}

/// `-i max,min`, with netperf's silent clamping.
pub(super) fn apply_iterations(
    global: &mut GlobalOptions,
    option: OptionName,
    text: &str,
    notes: &mut Notes,
) {
    let (max, min) = checked::convert_pair(option, text, split_pair, notes);
    let clamp = |v: i32| v.clamp(ITERATIONS_FLOOR as i32, ITERATIONS_CEILING as i32) as u32;
    // netperf compares the ints before clamping them
    let mut max = max.map_or(global.iterations_max as i32, |v| v);
    let min = min.map_or(global.iterations_min as i32, |v| v);
    if max < min {
        max = min;
    }
    global.iterations_max = clamp(max);
    global.iterations_min = clamp(min);
    if global.confidence_level == 0 {
        global.confidence_level = 99;
    }
    if global.confidence_width == 0.0 {
        global.confidence_width = 5.0;
    }
}

/// `-I level[,width]`. As in netperf a single value sets both halves, so
/// `-I 99` asks for a 99% wide interval too. netperf refuses any level but
/// 95 and 99; a width of 0 is its default of 5%.
pub(super) fn apply_confidence(
    global: &mut GlobalOptions,
    option: OptionName,
    text: &str,
    notes: &mut Notes,
) -> Result<(), CliError> {
    let halves = split_pair(text);
    if let Some(level) = halves.first {
        global.confidence_level = checked::convert(option, level, notes) as u32;
    }
    if global.confidence_level != 95 && global.confidence_level != 99 {
        return Err(CliError::invalid(
            option,
            text,
            "only 95% and 99% confidence levels are supported",
        ));
    }
    if let Some(width) = halves.second {
        global.confidence_width = checked::strtod(option, width, notes);
    }
    if global.iterations_min == 1 {
        global.iterations_min = ITERATIONS_FLOOR;
    }
    if global.iterations_max == 1 {
        global.iterations_max = 10;
    }
    if global.confidence_width == 0.0 {
        global.confidence_width = 5.0;
    }
    Ok(())
}

/// `-n numcpu` (netperf's `atoi`); no count (0 or less) leaves netperf to
/// find the CPUs itself.
pub(super) fn num_cpus(option: OptionName, text: &str, notes: &mut Notes) -> Option<u32> {
    let count = checked::atoi(option, text, notes);
    (count > 0).then_some(count as u32)
}

/// `-s seconds` to wait before the test: netperf's `convert()`, whose
/// negative value it hands to `sleep()` as a huge unsigned one.
pub(super) fn wait_secs(option: OptionName, text: &str, notes: &mut Notes) -> u32 {
    let secs = checked::convert(option, text, notes);
    if secs < 0 {
        notes.push(format!(
            "{option} '{text}': netperf 2.7.1 waits {} s before the test, and so does this run",
            secs as u32
        ));
    }
    secs as u32
}
