//! Facts about this system for netperf's omni selectors (LOCAL_SYSNAME,
//! LOCAL_RELEASE, LOCAL_VERSION, LOCAL_MACHINE, LOCAL_SYSTEM_MODEL, LOCAL_CPU_MODEL,
//! LOCAL_CPU_FREQUENCY, LOCAL_CPU_COUNT): uname(2), DMI, /proc/cpuinfo and sysfs.
//! Collected once per test, never on the data path; every failure gives a value.

use std::path::Path;

/// Longest text kept, in bytes: uname's fields hold 64 and a NUL.
pub const TEXT_LEN: usize = 64;

/// What a missing system model or CPU model reads as.
pub const UNKNOWN: &str = "unknown";

/// Where the system model may be written, best first (x86 DMI, device tree).
const SYSTEM_MODEL_FILES: [&str; 2] = [
    "/sys/class/dmi/id/product_name",
    "/sys/firmware/devicetree/base/model",
];

/// /proc/cpuinfo keys that name the CPU, best first: x86 and most others,
/// 32-bit ARM, MIPS, PowerPC, ARM boards.
const CPU_MODEL_KEYS: [&str; 5] = ["model name", "Processor", "cpu model", "cpu", "Hardware"];

/// /proc/cpuinfo key of the current clock in MHz.
const CPU_MHZ_KEY: &str = "cpu MHz";

/// cpufreq files of CPU 0 in kHz, best first, when /proc/cpuinfo has no clock.
const CPU_KHZ_FILES: [&str; 2] = [
    "/sys/devices/system/cpu/cpu0/cpufreq/scaling_cur_freq",
    "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq",
];

/// One end's system facts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SystemInfo {
    /// uname(2): "Linux", the kernel release and build, the architecture.
    pub sysname: String,
    pub release: String,
    pub version: String,
    pub machine: String,
    /// DMI product name (or the device-tree model), else "unknown".
    pub system_model: String,
    /// "model name" of /proc/cpuinfo, else "unknown".
    pub cpu_model: String,
    /// Clock of the first CPU in MHz, rounded; 0 when unknown.
    pub cpu_mhz: i32,
    /// Online CPUs.
    pub cpu_count: u32,
}

impl SystemInfo {
    /// Reads everything now. Takes a few file reads; never fails.
    pub fn collect() -> Self {
        let (sysname, release, version, machine) = uname();
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let (cpu_model, cpuinfo_mhz) = parse_cpuinfo(&cpuinfo);
        let system_model = SYSTEM_MODEL_FILES
            .iter()
            .find_map(|path| read_text(path, TEXT_LEN));
        let cpu_mhz = cpuinfo_mhz
            .or_else(|| {
                CPU_KHZ_FILES
                    .iter()
                    .find_map(|path| read_text(path, TEXT_LEN)?.parse::<f64>().ok())
                    .and_then(|khz| mhz(khz / 1000.0))
            })
            .unwrap_or(0);
        SystemInfo {
            sysname,
            release,
            version,
            machine,
            system_model: system_model.unwrap_or_else(|| UNKNOWN.to_string()),
            cpu_model: cpu_model.unwrap_or_else(|| UNKNOWN.to_string()),
            cpu_mhz,
            cpu_count: cpu_count(),
        }
    }
}

/// `text` cut to at most `max` bytes on a character boundary.
pub fn bounded(text: &str, max: usize) -> String {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_string()
}

/// A small text file (sysfs, procfs) trimmed of whitespace and NULs and bounded to
/// `max` bytes; `None` when it cannot be read or is empty.
pub fn read_text(path: impl AsRef<Path>, max: usize) -> Option<String> {
    let bytes = std::fs::read(path).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let trimmed = text.trim_matches(|c: char| c.is_whitespace() || c == '\0');
    (!trimmed.is_empty()).then(|| bounded(trimmed, max))
}

/// The CPU model and clock in MHz from the text of /proc/cpuinfo: the first
/// value of the best key present, and the first "cpu MHz".
pub fn parse_cpuinfo(text: &str) -> (Option<String>, Option<i32>) {
    let fields = || {
        text.lines().filter_map(|line| {
            let (key, value) = line.split_once(':')?;
            Some((key.trim(), value.trim()))
        })
    };
    let model = CPU_MODEL_KEYS.iter().find_map(|wanted| {
        fields()
            .find(|(key, value)| key == wanted && !value.is_empty())
            .map(|(_, value)| bounded(value, TEXT_LEN))
    });
    let clock = fields()
        .find(|(key, _)| *key == CPU_MHZ_KEY)
        .and_then(|(_, value)| mhz(value.parse().ok()?));
    (model, clock)
}

/// A clock in MHz as netperf keeps it: rounded to an int; None when not a
/// positive number that fits.
fn mhz(value: f64) -> Option<i32> {
    let rounded = value.round();
    (rounded > 0.0 && rounded <= f64::from(i32::MAX)).then_some(rounded as i32)
}

/// sysname, release, version and machine; empty strings if uname fails.
fn uname() -> (String, String, String, String) {
    // SAFETY: utsname is plain data; uname fills it and NUL-terminates each field.
    let mut names: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut names) } != 0 {
        return Default::default();
    }
    (
        c_field(&names.sysname),
        c_field(&names.release),
        c_field(&names.version),
        c_field(&names.machine),
    )
}

/// A fixed C char array up to its first NUL (or its end), bounded.
pub fn c_field(field: &[libc::c_char]) -> String {
    let bytes: Vec<u8> = field
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    bounded(String::from_utf8_lossy(&bytes).trim(), TEXT_LEN)
}

/// Online CPUs (netperf counts them the same way); at least 1.
fn cpu_count() -> u32 {
    // SAFETY: sysconf only reads a system value.
    let online = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
    match u32::try_from(online) {
        Ok(count) if count > 0 => count,
        _ => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_machine_has_names() {
        let info = SystemInfo::collect();
        assert_eq!(info.sysname, "Linux");
        assert!(!info.release.is_empty());
        assert!(!info.version.is_empty());
        assert!(!info.machine.is_empty());
        assert!(!info.system_model.is_empty());
        assert!(!info.cpu_model.is_empty());
        assert!(info.cpu_mhz >= 0);
        assert!(info.cpu_count >= 1);
        for text in [&info.sysname, &info.version, &info.cpu_model] {
            assert!(text.len() <= TEXT_LEN);
        }
    }

    #[test]
    fn x86_cpuinfo() {
        let text = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n\
                    model\t\t: 85\nmodel name\t: Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz\n\
                    cpu MHz\t\t: 2099.513\n\nprocessor\t: 1\nmodel name\t: other\n\
                    cpu MHz\t\t: 1000.000\n";
        let (model, clock) = parse_cpuinfo(text);
        assert_eq!(
            model.as_deref(),
            Some("Intel(R) Xeon(R) Gold 6130 CPU @ 2.10GHz")
        );
        assert_eq!(clock, Some(2100));
    }

    #[test]
    fn arm_and_odd_cpuinfo() {
        let arm = "processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n\n\
                   Hardware\t: BCM2835\nModel\t\t: Raspberry Pi 4\n";
        assert_eq!(parse_cpuinfo(arm), (Some("BCM2835".to_string()), None));
        assert_eq!(parse_cpuinfo(""), (None, None));
        let garbage = "model name:\ncpu MHz: fast\n::::\ncpu MHz : -5\n";
        assert_eq!(parse_cpuinfo(garbage), (None, None));
        let long = format!("model name : {}\n", "é".repeat(100));
        let (model, _) = parse_cpuinfo(&long);
        let model = model.unwrap();
        assert!(model.len() <= TEXT_LEN && model.chars().all(|c| c == 'é'));
    }

    #[test]
    fn helpers_bound_and_default() {
        assert_eq!(bounded("abcdef", 3), "abc");
        assert_eq!(bounded("ab", 3), "ab");
        assert_eq!(bounded("aé", 2), "a");
        assert_eq!(read_text("/nonexistent/file", 8), None);
        assert_eq!(mhz(f64::NAN), None);
        assert_eq!(mhz(1e12), None);
        assert_eq!(mhz(0.4), None);
        assert_eq!(mhz(2399.6), Some(2400));
        let field = [
            b'L' as libc::c_char,
            b'x' as libc::c_char,
            0,
            b'y' as libc::c_char,
        ];
        assert_eq!(c_field(&field), "Lx");
    }
}
