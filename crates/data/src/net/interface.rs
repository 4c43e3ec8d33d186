//! Facts about a network interface for netperf's omni selectors and our packet
//! counters: which interface reaches a destination (`egress_interface`), its driver
//! and PCI identity (`InterfaceInfo`, LOCAL_DRIVER_NAME .. LOCAL_INTERFACE_SLOT) and
//! its packet counters (`InterfaceCounters`, read before and after a test) and
//! its MTU as sysfs shows it (`sysfs_mtu`).
//! Never on the data path; every failure gives a value.

use std::ffi::CStr;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;

use super::sysinfo::{bounded, c_field, read_text};

/// netperf's 16-byte interface name and slot fields, less the NUL.
pub const NAME_LEN: usize = 15;
/// netperf's 32-byte driver, version, firmware and bus fields, less the NUL.
pub const DRIVER_TEXT_LEN: usize = 31;
/// A PCI id that could not be read: netperf's -2, which it prints as 0xfffffffe.
pub const ID_NOT_AVAILABLE: u32 = 0xffff_fffe;

/// Where interfaces live in sysfs.
const SYSFS_NET: &str = "/sys/class/net";
/// PCI hotplug slots, each with an `address` such as "0000:3b:00".
const SYSFS_PCI_SLOTS: &str = "/sys/bus/pci/slots";

/// The interface the kernel would send to `dest` from: the owner of the local
/// address a connected UDP socket gets (no packet is sent). Destinations on this
/// host, loopback or not, go through the loopback interface ("lo"). `None` when
/// there is no route or no interface owns the address.
pub fn egress_interface(dest: &SocketAddr) -> Option<String> {
    let mut dest = *dest;
    if dest.port() == 0 {
        // Only the route matters; some stacks refuse port 0.
        dest.set_port(9);
    }
    let bind: SocketAddr = match dest {
        SocketAddr::V4(_) => (Ipv4Addr::UNSPECIFIED, 0).into(),
        SocketAddr::V6(_) => (Ipv6Addr::UNSPECIFIED, 0).into(),
    };
    let socket = UdpSocket::bind(bind).ok()?;
    socket.connect(dest).ok()?;
    let local = socket.local_addr().ok()?;
    let addresses = local_addresses();
    let dest_ip = dest.ip().to_canonical();
    let on_this_host = dest_ip.is_loopback()
        || dest_ip.is_unspecified()
        || addresses.iter().any(|entry| entry.ip == dest_ip);
    if on_this_host {
        let loopback = addresses.iter().find(|entry| entry.loopback);
        return Some(loopback.map_or_else(|| "lo".to_string(), |entry| entry.name.clone()));
    }
    // A link-local source names its interface by index.
    if let SocketAddr::V6(v6) = local {
        if v6.scope_id() != 0 {
            if let Some(name) = index_to_name(v6.scope_id()) {
                return Some(name);
            }
        }
    }
    let source = local.ip().to_canonical();
    addresses
        .into_iter()
        .find(|entry| entry.ip == source)
        .map(|entry| entry.name)
}

/// One address of one interface, from getifaddrs(3).
struct LocalAddress {
    name: String,
    ip: IpAddr,
    loopback: bool,
}

/// Every IPv4 and IPv6 address of this host; empty if getifaddrs fails.
fn local_addresses() -> Vec<LocalAddress> {
    let mut list: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs allocates a list we walk read-only and free once.
    if unsafe { libc::getifaddrs(&mut list) } != 0 {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut cursor = list;
    while !cursor.is_null() {
        // SAFETY: a node of the list getifaddrs returned, alive until freeifaddrs.
        let entry = unsafe { &*cursor };
        cursor = entry.ifa_next;
        if entry.ifa_name.is_null() || entry.ifa_addr.is_null() {
            continue;
        }
        // SAFETY: ifa_addr points to a sockaddr of the family it names.
        let Some(ip) = (unsafe { ip_of(entry.ifa_addr) }) else {
            continue;
        };
        // SAFETY: ifa_name is a NUL-terminated string owned by the list.
        let name = unsafe { CStr::from_ptr(entry.ifa_name) }.to_string_lossy();
        found.push(LocalAddress {
            name: bounded(&name, NAME_LEN),
            ip: ip.to_canonical(),
            loopback: entry.ifa_flags & libc::IFF_LOOPBACK as libc::c_uint != 0,
        });
    }
    // SAFETY: the list came from getifaddrs and is freed exactly once.
    unsafe { libc::freeifaddrs(list) };
    found
}

/// The IP address of an AF_INET or AF_INET6 sockaddr.
///
/// # Safety
/// `sa` must point to a valid sockaddr whose storage matches its family.
unsafe fn ip_of(sa: *const libc::sockaddr) -> Option<IpAddr> {
    match i32::from((*sa).sa_family) {
        libc::AF_INET => {
            let sin = &*(sa as *const libc::sockaddr_in);
            Some(IpAddr::V4(Ipv4Addr::from(u32::from_be(
                sin.sin_addr.s_addr,
            ))))
        }
        libc::AF_INET6 => {
            let sin6 = &*(sa as *const libc::sockaddr_in6);
            Some(IpAddr::from(sin6.sin6_addr.s6_addr))
        }
        _ => None,
    }
}

/// The name of interface `index`, if it exists.
fn index_to_name(index: u32) -> Option<String> {
    let mut name = [0 as libc::c_char; libc::IF_NAMESIZE];
    // SAFETY: the buffer holds IF_NAMESIZE bytes, as if_indextoname requires.
    let found = unsafe { libc::if_indextoname(index, name.as_mut_ptr()) };
    (!found.is_null()).then(|| bounded(&c_field(&name), NAME_LEN))
}

/// Whether `name` can be an interface name: 1..=15 bytes, and safe in a path.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= NAME_LEN
        && name != "."
        && name != ".."
        && !name.contains(['/', '\0'])
}

/// The driver and PCI identity of one interface. Strings are empty and ids are
/// `ID_NOT_AVAILABLE` where the system does not say (`lo` has no driver and no
/// PCI device).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InterfaceInfo {
    pub name: String,
    /// ETHTOOL_GDRVINFO: driver name, driver version, firmware version, bus
    /// address (e.g. "0000:3b:00.0").
    pub driver: String,
    pub driver_version: String,
    pub firmware_version: String,
    pub bus_info: String,
    /// PCI ids from sysfs, printed by netperf as "0x%.4x".
    pub vendor: u32,
    pub device: u32,
    pub subvendor: u32,
    pub subdevice: u32,
    /// The PCI slot whose address holds the bus address, else the bus address.
    pub slot: String,
}

impl Default for InterfaceInfo {
    fn default() -> Self {
        InterfaceInfo {
            name: String::new(),
            driver: String::new(),
            driver_version: String::new(),
            firmware_version: String::new(),
            bus_info: String::new(),
            vendor: ID_NOT_AVAILABLE,
            device: ID_NOT_AVAILABLE,
            subvendor: ID_NOT_AVAILABLE,
            subdevice: ID_NOT_AVAILABLE,
            slot: String::new(),
        }
    }
}

/// Layout of the kernel's struct ethtool_drvinfo (linux/ethtool.h).
#[repr(C)]
struct EthtoolDrvinfo {
    cmd: u32,
    driver: [libc::c_char; 32],
    version: [libc::c_char; 32],
    fw_version: [libc::c_char; 32],
    bus_info: [libc::c_char; 32],
    erom_version: [libc::c_char; 32],
    reserved2: [libc::c_char; 12],
    n_priv_flags: u32,
    n_stats: u32,
    testinfo_len: u32,
    eedump_len: u32,
    regdump_len: u32,
}

/// linux/ethtool.h: get driver information.
const ETHTOOL_GDRVINFO: u32 = 0x0000_0003;

impl InterfaceInfo {
    /// Asks the kernel about `name`. An unknown or invalid name gives the
    /// defaults (with the name kept, bounded).
    pub fn for_interface(name: &str) -> Self {
        let mut info = InterfaceInfo {
            name: bounded(name, NAME_LEN),
            ..InterfaceInfo::default()
        };
        if !valid_name(name) {
            return info;
        }
        if let Some(drvinfo) = driver_info(name) {
            info.driver = drv_text(&drvinfo.driver);
            info.driver_version = drv_text(&drvinfo.version);
            info.firmware_version = drv_text(&drvinfo.fw_version);
            info.bus_info = drv_text(&drvinfo.bus_info);
        }
        let ids: [(&str, &mut u32); 4] = [
            ("vendor", &mut info.vendor),
            ("device", &mut info.device),
            ("subsystem_vendor", &mut info.subvendor),
            ("subsystem_device", &mut info.subdevice),
        ];
        for (file, id) in ids {
            *id = read_id(&format!("{SYSFS_NET}/{name}/device/{file}"));
        }
        info.slot = pci_slot(&info.bus_info).unwrap_or_else(|| bounded(&info.bus_info, NAME_LEN));
        info
    }
}

/// A driver text field, bounded to netperf's 32-byte fields.
fn drv_text(field: &[libc::c_char]) -> String {
    bounded(&c_field(field), DRIVER_TEXT_LEN)
}

/// ETHTOOL_GDRVINFO for `name` (a valid name); `None` when the interface does not
/// exist or has no ethtool driver (EOPNOTSUPP for `lo`).
fn driver_info(name: &str) -> Option<EthtoolDrvinfo> {
    let socket = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0)).ok()?;
    // SAFETY: both structs are plain data for which all zeros is valid.
    let mut drvinfo: EthtoolDrvinfo = unsafe { std::mem::zeroed() };
    drvinfo.cmd = ETHTOOL_GDRVINFO;
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (slot, byte) in request.ifr_name.iter_mut().zip(name.bytes()) {
        *slot = byte as libc::c_char;
    }
    request.ifr_ifru.ifru_data = (&mut drvinfo as *mut EthtoolDrvinfo).cast();
    // SAFETY: the request names a NUL-terminated interface (at most 15 bytes in
    // 16) and points to a drvinfo the kernel fills within its size.
    let rc = unsafe { libc::ioctl(socket.as_raw_fd(), libc::SIOCETHTOOL as _, &mut request) };
    (rc == 0).then_some(drvinfo)
}

/// A PCI id file ("0x8086\n"), or `ID_NOT_AVAILABLE`.
fn read_id(path: &str) -> u32 {
    read_text(path, 16)
        .and_then(|text| {
            let digits = text.strip_prefix("0x").unwrap_or(&text);
            u32::from_str_radix(digits, 16).ok()
        })
        .unwrap_or(ID_NOT_AVAILABLE)
}

/// The name of the PCI slot whose address ("0000:3b:00") begins the bus address
/// ("0000:3b:00.0"), as netperf finds it.
fn pci_slot(bus_info: &str) -> Option<String> {
    if bus_info.is_empty() {
        return None;
    }
    std::fs::read_dir(SYSFS_PCI_SLOTS)
        .ok()?
        .flatten()
        .find(|slot| {
            read_text(slot.path().join("address"), 64)
                .is_some_and(|address| bus_info.starts_with(&address))
        })
        .map(|slot| bounded(&slot.file_name().to_string_lossy(), NAME_LEN))
}

/// An interface's packet counters (/sys/class/net/<if>/statistics). Read one
/// before and one after a test; `delta` is what the test moved (plus anything
/// else that used the interface meanwhile).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InterfaceCounters {
    /// The interface read (bounded to 15 bytes).
    pub name: String,
    pub rx_packets: u64,
    pub tx_packets: u64,
    pub rx_bytes: u64,
    pub tx_bytes: u64,
    pub rx_dropped: u64,
    pub tx_dropped: u64,
}

/// Each counter: its sysfs file and its field.
type CounterField = fn(&mut InterfaceCounters) -> &mut u64;
const COUNTERS: [(&str, CounterField); 6] = [
    ("rx_packets", |c| &mut c.rx_packets),
    ("tx_packets", |c| &mut c.tx_packets),
    ("rx_bytes", |c| &mut c.rx_bytes),
    ("tx_bytes", |c| &mut c.tx_bytes),
    ("rx_dropped", |c| &mut c.rx_dropped),
    ("tx_dropped", |c| &mut c.tx_dropped),
];

impl InterfaceCounters {
    /// The counters of `name` now; a counter that cannot be read is 0 (all of
    /// them for an unknown interface).
    pub fn read(name: &str) -> Self {
        let mut counters = InterfaceCounters {
            name: bounded(name, NAME_LEN),
            ..InterfaceCounters::default()
        };
        if !valid_name(name) {
            return counters;
        }
        for (file, field) in COUNTERS {
            let path = format!("{SYSFS_NET}/{name}/statistics/{file}");
            *field(&mut counters) = read_text(path, 32)
                .and_then(|text| text.parse().ok())
                .unwrap_or(0);
        }
        counters
    }

    /// `later - self`, counter by counter, never below 0 (an interface that was
    /// reset or recreated meanwhile); named as `later`.
    pub fn delta(&self, later: &InterfaceCounters) -> InterfaceCounters {
        let mut before = self.clone();
        let mut moved = later.clone();
        for (_, field) in COUNTERS {
            let earlier = *field(&mut before);
            let counter = field(&mut moved);
            *counter = counter.saturating_sub(earlier);
        }
        moved
    }
}

/// The interface's MTU from sysfs.
pub fn sysfs_mtu(interface: &str) -> Option<u32> {
    if interface.is_empty() || interface.contains('/') || interface.starts_with('.') {
        return None;
    }
    std::fs::read_to_string(format!("{SYSFS_NET}/{interface}/mtu"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn loopback_destinations_leave_by_lo() {
        for dest in ["127.0.0.1:12865", "127.0.0.53:0", "0.0.0.0:1"] {
            let dest: SocketAddr = dest.parse().unwrap();
            assert_eq!(egress_interface(&dest).as_deref(), Some("lo"), "{dest}");
        }
        // IPv6 only where this host has ::1.
        if UdpSocket::bind("[::1]:0").is_ok() {
            let dest: SocketAddr = "[::1]:5".parse().unwrap();
            assert_eq!(egress_interface(&dest).as_deref(), Some("lo"));
        }
    }

    #[test]
    fn own_addresses_leave_by_lo_and_others_by_a_named_interface() {
        for entry in local_addresses() {
            let dest = SocketAddr::new(entry.ip, 7);
            // Link-local IPv6 needs a scope to connect; skip those.
            if let Some(name) = egress_interface(&dest) {
                assert_eq!(name, "lo", "{dest}");
            }
        }
        // Off-host (TEST-NET-3, never contacted): an interface if there is a route.
        let far: SocketAddr = "203.0.113.1:9".parse().unwrap();
        if let Some(name) = egress_interface(&far) {
            assert!(valid_name(&name), "{name}");
        }
    }

    #[test]
    fn loopback_counters_grow_with_a_datagram() {
        let receiver = UdpSocket::bind("127.0.0.1:0").unwrap();
        receiver
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
        let before = InterfaceCounters::read("lo");
        sender
            .send_to(b"netperf-ng", receiver.local_addr().unwrap())
            .unwrap();
        let mut buf = [0u8; 64];
        assert_eq!(receiver.recv(&mut buf).unwrap(), 10);
        let after = InterfaceCounters::read("lo");
        let moved = before.delta(&after);
        assert!(moved.tx_packets >= 1 && moved.rx_packets >= 1, "{moved:?}");
        assert!(moved.tx_bytes >= 10 && moved.rx_bytes >= 10, "{moved:?}");
        assert_eq!(moved.name, "lo");
        // Saturating the other way round.
        assert_eq!(after.delta(&before).tx_packets, 0);
    }

    #[test]
    fn lo_has_no_driver_or_pci_ids() {
        let info = InterfaceInfo::for_interface("lo");
        assert_eq!(info.name, "lo");
        assert_eq!(info.vendor, ID_NOT_AVAILABLE);
        assert_eq!(info.subdevice, ID_NOT_AVAILABLE);
        assert!(info.driver.len() <= DRIVER_TEXT_LEN);
        assert!(info.slot.len() <= NAME_LEN);
    }

    #[test]
    fn unknown_interfaces_give_defaults() {
        let long = "x".repeat(100);
        for name in ["nosuchif0", "", "..", "../../etc", "a\0b", long.as_str()] {
            let info = InterfaceInfo::for_interface(name);
            assert_eq!(
                info,
                InterfaceInfo {
                    name: bounded(name, NAME_LEN),
                    ..InterfaceInfo::default()
                },
                "{name:?}"
            );
            assert_eq!(
                InterfaceCounters::read(name),
                InterfaceCounters {
                    name: bounded(name, NAME_LEN),
                    ..InterfaceCounters::default()
                }
            );
        }
    }

    #[test]
    fn every_interface_reads_without_panicking() {
        for entry in std::fs::read_dir(SYSFS_NET).into_iter().flatten().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let info = InterfaceInfo::for_interface(&name);
            for text in [&info.driver, &info.driver_version, &info.firmware_version] {
                assert!(text.len() <= DRIVER_TEXT_LEN);
            }
            let _ = InterfaceCounters::read(&name);
        }
    }

    #[test]
    fn ids_parse_as_hex() {
        let dir = std::env::temp_dir().join(format!("netperf-ng-ids-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases = [
            ("0x8086\n", 0x8086),
            ("1af4", 0x1af4),
            ("zz", ID_NOT_AVAILABLE),
        ];
        for (index, (text, expected)) in cases.into_iter().enumerate() {
            let path = dir.join(index.to_string());
            std::fs::write(&path, text).unwrap();
            assert_eq!(read_id(path.to_str().unwrap()), expected, "{text:?}");
        }
        assert_eq!(read_id("/nonexistent/vendor"), ID_NOT_AVAILABLE);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn drvinfo_matches_the_kernel_layout() {
        assert_eq!(std::mem::size_of::<EthtoolDrvinfo>(), 196);
    }
}
