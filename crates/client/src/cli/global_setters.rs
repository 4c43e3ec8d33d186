//! What each global option's value sets: the readers and setters
//! [`apply_global`](super::global_opts::apply_global) dispatches to, one per
//! option (or per shape of option, for the `local[,remote]` pairs).

use super::checked::{self, INT_MAX};
use super::config::GlobalOptions;
use super::error::{CliError, OptionName};
use super::global_opts::GlobalScanState;
use super::sizespec::{self, split_pair, split_pair_explicit};
use super::values;
use netperf_data::net::resolve::Family;

/// netperf's limit for the remote fill file name (it travels in a
/// fixed 32-byte field of the control message, NUL included).
const REMOTE_FILL_FILE_MAX: usize = 31;

/// Default interim interval in seconds when `-D ,units` omits the time.
const DEFAULT_INTERIM_SECS: f64 = 1.0;

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

/// `send[,recv]` sizespecs of at least `min` (one value sets both, as
/// netperf's break_args does).
pub(super) fn sizes(
    option: OptionName,
    text: &str,
    min: u32,
) -> Result<(Option<u32>, Option<u32>), CliError> {
    checked::pair_of(option, text, split_pair, |half| {
        checked::size_u32(option, half, min)
    })
}

/// `local[,remote]` non-negative sizespecs as `int`s (CPU ids, priorities).
pub(super) fn ints(option: OptionName, text: &str) -> Result<(Option<i32>, Option<i32>), CliError> {
    checked::pair_of(option, text, split_pair, |half| {
        checked::size_i32(option, half, 0)
    })
}

/// `-Y local[,remote]`: IP type-of-service values.
pub(super) fn tos_pair(
    option: OptionName,
    text: &str,
) -> Result<(Option<i32>, Option<i32>), CliError> {
    let tos = |half: &str| values::parse_tos(half).map_err(|r| CliError::invalid(option, half, r));
    checked::pair_of(option, text, split_pair, tos)
}

/// `-4`, `-6`: both the remote and the local address family.
pub(super) fn set_families(global: &mut GlobalOptions, family: Family) {
    global.host_family = family;
    global.local_family = family;
}

/// `-c`, `-C [rate]`: measure CPU usage, with the optional calibrated rate.
pub(super) fn apply_cpu(
    option: OptionName,
    value: Option<&str>,
    measure: &mut bool,
    rate: &mut f32,
) -> Result<(), CliError> {
    *measure = true;
    if let Some(text) = value {
        *rate = cpu_rate(option, text)?;
    }
    Ok(())
}

/// `-f units`, remembered as chosen so the test name does not override it.
pub(super) fn apply_format_units(
    global: &mut GlobalOptions,
    option: OptionName,
    text: &str,
) -> Result<(), CliError> {
    global.format_units =
        values::parse_format_units(text).map_err(|r| CliError::invalid(option, text, r))?;
    global.format_units_explicit = true;
    Ok(())
}

/// `-F local[,remote]` fill files; the remote name must fit its wire field.
pub(super) fn apply_fill_files(
    global: &mut GlobalOptions,
    option: OptionName,
    text: &str,
) -> Result<(), CliError> {
    let halves = checked::pair(option, text, split_pair_explicit)?;
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

/// `-H name[,family]`: the netserver's host and address family.
pub(super) fn apply_host(
    global: &mut GlobalOptions,
    state: &mut GlobalScanState,
    option: OptionName,
    text: &str,
) -> Result<(), CliError> {
    let halves = checked::pair(option, text, split_pair_explicit)?;
    if let Some(family) = halves.second {
        global.host_family = family_of(option, text, family)?;
    }
    if let Some(host) = halves.first {
        global.host = host.to_string();
        state.host_given = true;
    }
    Ok(())
}

/// `-L name[,family]`: the local control address and family.
pub(super) fn apply_local_host(
    global: &mut GlobalOptions,
    option: OptionName,
    text: &str,
) -> Result<(), CliError> {
    let halves = checked::pair(option, text, split_pair_explicit)?;
    if let Some(family) = halves.second {
        global.local_family = family_of(option, text, family)?;
    }
    if let Some(host) = halves.first {
        global.local_host = Some(host.to_string());
    }
    Ok(())
}

/// `-p port[,local port]` of the control connection.
pub(super) fn apply_ports(
    global: &mut GlobalOptions,
    option: OptionName,
    text: &str,
) -> Result<(), CliError> {
    let halves = checked::pair(option, text, split_pair_explicit)?;
    set(&mut global.port, halves.first.map(String::from));
    if let Some(local_port) = halves.second {
        global.local_port = Some(local_port.to_string());
    }
    Ok(())
}

/// `-l`: seconds, 0 (until a signal — SIGALRM, SIGINT, SIGTERM — stops the
/// test) or a negative byte/transaction count, within 32 bits.
pub(super) fn test_length(option: OptionName, text: &str) -> Result<i64, CliError> {
    let length = sizespec::parse_signed_size(text)
        .map_err(|reason| CliError::invalid(option, text, reason))?;
    if i32::try_from(length).is_err() {
        return Err(CliError::invalid(
            option,
            text,
            "must be seconds, 0 (until stopped) or a negative byte/transaction count that fits 32 bits",
        ));
    }
    Ok(length)
}

/// `-w local[,remote]` pacing intervals.
pub(super) fn apply_interval(
    global: &mut GlobalOptions,
    option: OptionName,
    text: &str,
) -> Result<(), CliError> {
    let usecs = |half: &str| interval_usecs(option, half);
    let (local, remote) = checked::pair_of(option, text, split_pair_explicit, usecs)?;
    if let Some(local) = local {
        global.interval_usecs = local;
        global.interval_wait_ms = local / 1000;
    }
    set(&mut global.remote_interval_usecs, remote);
    Ok(())
}

fn family_of(option: OptionName, whole: &str, family: &str) -> Result<Family, CliError> {
    values::parse_family(family).map_err(|reason| CliError::invalid(option, whole, reason))
}

fn cpu_rate(option: OptionName, text: &str) -> Result<f32, CliError> {
    let rate = checked::decimal(option, text)?;
    if rate < 0.0 || rate > f64::from(f32::MAX) {
        return Err(CliError::invalid(
            option,
            text,
            "must be a non-negative rate",
        ));
    }
    // The range check above makes the narrowing exact enough for a hint.
    Ok(rate as f32)
}

fn interval_usecs(option: OptionName, text: &str) -> Result<u32, CliError> {
    let usecs = sizespec::parse_timespec_usecs(text)
        .map_err(|reason| CliError::invalid(option, text, reason))?;
    match u32::try_from(usecs) {
        Ok(usecs) if usecs > 0 && u64::from(usecs) <= INT_MAX => Ok(usecs),
        _ => Err(CliError::invalid(
            option,
            text,
            "must be a positive interval",
        )),
    }
}

/// `-b local[,remote]`: sends per pacing interval. Without `-w` netperf
/// paces every millisecond.
pub(super) fn apply_burst(
    global: &mut GlobalOptions,
    option: OptionName,
    text: &str,
) -> Result<(), CliError> {
    let burst = |half: &str| checked::size_u32(option, half, 1);
    let (local, remote) = checked::pair_of(option, text, split_pair_explicit, burst)?;
    if let Some(local) = local {
        global.interval_burst = local;
        if global.interval_usecs == 0 {
            global.interval_usecs = 1000;
            global.interval_wait_ms = 1;
        }
    }
    if let Some(remote) = remote {
        global.remote_interval_burst = remote;
        if global.remote_interval_usecs == 0 {
            global.remote_interval_usecs = 1000;
        }
    }
    Ok(())
}

/// `-D time[,units]`.
pub(super) fn apply_interim(
    global: &mut GlobalOptions,
    option: OptionName,
    text: &str,
) -> Result<(), CliError> {
    let halves = checked::pair(option, text, split_pair_explicit)?;
    global.interim_always_timestamp = false;
    match halves.first {
        Some(time_text) => {
            let secs = checked::decimal(option, time_text)?;
            if secs == 0.0 {
                return Err(CliError::invalid(
                    option,
                    text,
                    "the interval must not be 0",
                ));
            }
            // A sampler waking more than a thousand times a second, or once
            // a day, is a typing mistake rather than a test.
            if !(0.001..=86_400.0).contains(&secs.abs()) {
                return Err(CliError::invalid(
                    option,
                    text,
                    "the interval must be between 0.001 and 86400 seconds",
                ));
            }
            global.interim_always_timestamp = secs < 0.0;
            global.interim_interval = Some(secs.abs());
        }
        None => {
            global.interim_interval = Some(global.interim_interval.unwrap_or(DEFAULT_INTERIM_SECS));
        }
    }
    if let Some(units_text) = halves.second {
        global.interim_units_value = Some(checked::size_u32(option, units_text, 1)?);
        global.interim_units = Some(units_text.to_string());
    }
    Ok(())
}

/// `-i max,min`, with netperf's silent clamping.
pub(super) fn apply_iterations(
    global: &mut GlobalOptions,
    option: OptionName,
    text: &str,
) -> Result<(), CliError> {
    let count = |half: &str| checked::size_u32(option, half, 0);
    let (max, min) = checked::pair_of(option, text, split_pair, count)?;
    set(&mut global.iterations_max, max);
    set(&mut global.iterations_min, min);
    global.iterations_max = global.iterations_max.max(global.iterations_min);
    global.iterations_max = global
        .iterations_max
        .clamp(ITERATIONS_FLOOR, ITERATIONS_CEILING);
    global.iterations_min = global
        .iterations_min
        .clamp(ITERATIONS_FLOOR, ITERATIONS_CEILING);
    if global.confidence_level == 0 {
        global.confidence_level = 99;
    }
    if global.confidence_width == 0.0 {
        global.confidence_width = 5.0;
    }
    Ok(())
}

/// `-I level[,width]`. As in netperf a single value sets both halves, so
/// `-I 99` asks for a 99% wide interval too.
pub(super) fn apply_confidence(
    global: &mut GlobalOptions,
    option: OptionName,
    text: &str,
) -> Result<(), CliError> {
    let halves = checked::pair(option, text, split_pair)?;
    if let Some(level) = halves.first {
        global.confidence_level = checked::size_u32(option, level, 0)?;
    }
    if global.confidence_level != 95 && global.confidence_level != 99 {
        return Err(CliError::invalid(
            option,
            text,
            "only 95% and 99% confidence levels are supported",
        ));
    }
    if let Some(width) = halves.second {
        let percent = checked::decimal(option, width)?;
        if percent <= 0.0 {
            return Err(CliError::invalid(
                option,
                text,
                "the interval width must be > 0",
            ));
        }
        global.confidence_width = percent;
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
