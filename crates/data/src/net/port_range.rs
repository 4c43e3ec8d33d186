//! A fixed range of data ports (`--data-ports MIN-MAX` of netserver and
//! netperf): its parsing, and opening a data socket on the first free port
//! of it, so that a Kubernetes Service or a firewall that names the range
//! carries every data connection. Never an ephemeral port instead.

use std::fmt;
use std::io;

/// MIN-MAX, both inclusive, 1..=65535, MIN <= MAX.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PortRange {
    pub min: u16,
    pub max: u16,
}

impl fmt::Display for PortRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.min, self.max)
    }
}

impl PortRange {
    /// Read `MIN-MAX` (or a single `PORT`), or say what is wrong with it.
    pub fn parse(text: &str) -> Result<PortRange, String> {
        let text = text.trim();
        let (low, high) = text.split_once('-').unwrap_or((text, text));
        let port = |part: &str| -> Result<u16, String> {
            match part.trim().parse::<u32>() {
                Ok(p) if (1..=65535).contains(&p) => Ok(p as u16),
                Ok(p) => Err(format!(
                    "data port range '{text}': port {p} is outside 1..65535"
                )),
                Err(_) => Err(format!(
                    "data port range '{text}' is not MIN-MAX (e.g. 42424-42439)"
                )),
            }
        };
        let (min, max) = (port(low)?, port(high)?);
        if min > max {
            return Err(format!(
                "data port range '{text}': MIN {min} is above MAX {max}"
            ));
        }
        Ok(PortRange { min, max })
    }

    pub fn contains(&self, port: u16) -> bool {
        (self.min..=self.max).contains(&port)
    }

    /// How many ports the range holds.
    pub fn len(&self) -> usize {
        usize::from(self.max - self.min) + 1
    }

    pub fn is_empty(&self) -> bool {
        false
    }
}

/// Why no data socket could be opened within a range.
#[derive(Debug)]
pub enum RangeError {
    /// An explicitly requested port lies outside the range.
    Outside { port: u16, range: PortRange },
    /// Every port of the range is in use.
    Exhausted(PortRange),
    /// Another failure (not "address in use") opening on a port.
    Open(io::Error),
}

impl RangeError {
    /// The errno a peer is told (netperf prints its strerror text).
    pub fn errno(&self) -> i32 {
        match self {
            RangeError::Outside { .. } => libc::EADDRNOTAVAIL,
            RangeError::Exhausted(_) => libc::EADDRINUSE,
            RangeError::Open(e) if in_use(e) => libc::EADDRINUSE,
            RangeError::Open(e) => e.raw_os_error().unwrap_or(libc::EINVAL),
        }
    }
}

impl fmt::Display for RangeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RangeError::Outside { port, range } => write!(
                f,
                "data port {port} was asked for, outside --data-ports {range}"
            ),
            RangeError::Exhausted(range) => write!(
                f,
                "every data port of --data-ports {range} is in use (at most {} at once)",
                range.len()
            ),
            RangeError::Open(e) => write!(f, "{e}"),
        }
    }
}

fn in_use(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EADDRINUSE) || e.kind() == io::ErrorKind::AddrInUse
}

/// Open a data socket with `open(port)` (create, bind, listen): on
/// `requested` when it is not 0, else where the kernel picks; with a
/// `range`, only within it: a requested port must lie inside, and port 0
/// means each port of the range in turn, skipping those in use.
pub fn open_in_range<S>(
    range: Option<PortRange>,
    requested: u16,
    mut open: impl FnMut(u16) -> io::Result<S>,
) -> Result<S, RangeError> {
    let Some(range) = range else {
        return open(requested).map_err(RangeError::Open);
    };
    if requested != 0 {
        if !range.contains(requested) {
            return Err(RangeError::Outside {
                port: requested,
                range,
            });
        }
        return open(requested).map_err(RangeError::Open);
    }
    for port in range.min..=range.max {
        match open(port) {
            Ok(s) => return Ok(s),
            Err(e) if in_use(&e) => continue,
            Err(e) => return Err(RangeError::Open(e)),
        }
    }
    Err(RangeError::Exhausted(range))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_parse_and_bad_ones_say_why() {
        assert_eq!(
            PortRange::parse("42424-42439").unwrap(),
            PortRange {
                min: 42424,
                max: 42439
            }
        );
        assert_eq!(PortRange::parse(" 5000 ").unwrap().len(), 1);
        for (bad, why) in [
            ("10-5", "above"),
            ("0-10", "outside"),
            ("1-65536", "outside"),
            ("a-b", "MIN-MAX"),
            ("", "MIN-MAX"),
            ("1-2-3", "MIN-MAX"),
            ("-5", "MIN-MAX"),
        ] {
            let e = PortRange::parse(bad).unwrap_err();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    fn err(errno: i32) -> io::Error {
        io::Error::from_raw_os_error(errno)
    }

    #[test]
    fn first_free_port_of_the_range_is_taken() {
        let range = Some(PortRange { min: 10, max: 12 });
        let mut tried = vec![];
        let got = open_in_range(range, 0, |p| {
            tried.push(p);
            if p < 12 {
                Err(err(libc::EADDRINUSE))
            } else {
                Ok(p)
            }
        });
        assert_eq!(got.unwrap(), 12);
        assert_eq!(tried, [10, 11, 12]);
    }

    #[test]
    fn exhausted_outside_and_other_errors_refuse() {
        let range = Some(PortRange { min: 10, max: 11 });
        let e = open_in_range::<u16>(range, 0, |_| Err(err(libc::EADDRINUSE))).unwrap_err();
        assert_eq!(e.errno(), libc::EADDRINUSE);
        assert!(e.to_string().contains("10-11 is in use"), "{e}");
        let e = open_in_range(range, 9, Ok).unwrap_err();
        assert_eq!(e.errno(), libc::EADDRNOTAVAIL);
        assert!(e.to_string().contains("outside --data-ports 10-11"), "{e}");
        assert_eq!(open_in_range(range, 11, Ok).unwrap(), 11);
        let e = open_in_range::<u16>(range, 0, |_| Err(err(libc::EACCES))).unwrap_err();
        assert_eq!(e.errno(), libc::EACCES);
        // No range: the port asked for, 0 for the kernel's choice.
        assert_eq!(open_in_range(None, 0, Ok).unwrap(), 0);
    }
}
