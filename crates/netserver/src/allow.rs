//! netserver's optional allow-list of client networks (`--allow a/len,...`):
//! parsed once at start, asked at every accepted control and data connection.

use std::net::IpAddr;

/// One network: an address and how many leading bits must match.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Network {
    addr: IpAddr,
    prefix: u8,
}

impl Network {
    /// `a.b.c.d/len`, `x::y/len` or a bare address (a single host).
    pub fn parse(text: &str) -> Result<Network, String> {
        let text = text.trim();
        let (addr_text, prefix_text) = match text.split_once('/') {
            Some((a, p)) => (a, Some(p)),
            None => (text, None),
        };
        let addr: IpAddr = addr_text
            .parse()
            .map_err(|_| format!("'{text}' is not an address or a network (a/len)"))?;
        let bits = if addr.is_ipv4() { 32 } else { 128 };
        let prefix = match prefix_text {
            None => bits,
            Some(p) => p
                .parse::<u8>()
                .ok()
                .filter(|p| *p <= bits)
                .ok_or_else(|| format!("'{text}': prefix length must be 0..{bits}"))?,
        };
        Ok(Network { addr, prefix })
    }

    /// Whether `ip` is in this network; an IPv4-mapped IPv6 address (a v4
    /// client of a dual-stack listener) counts as its IPv4 address.
    pub fn contains(&self, ip: IpAddr) -> bool {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        match (self.addr, ip) {
            (IpAddr::V4(net), IpAddr::V4(a)) => same_prefix(
                u128::from(u32::from(net)),
                u128::from(u32::from(a)),
                32,
                self.prefix,
            ),
            (IpAddr::V6(net), IpAddr::V6(a)) => {
                same_prefix(u128::from(net), u128::from(a), 128, self.prefix)
            }
            _ => false,
        }
    }
}

fn same_prefix(net: u128, addr: u128, bits: u8, prefix: u8) -> bool {
    if prefix == 0 {
        return true;
    }
    let shift = u32::from(bits - prefix);
    (net ^ addr) >> shift == 0
}

/// The networks clients may come from; empty means everyone.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList(Vec<Network>);

impl AllowList {
    /// Add the comma-separated networks of one `--allow` option.
    pub fn add(&mut self, text: &str) -> Result<(), String> {
        for part in text.split(',').filter(|p| !p.trim().is_empty()) {
            self.0.push(Network::parse(part)?);
        }
        if self.0.is_empty() {
            return Err("--allow needs at least one network".into());
        }
        Ok(())
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn permits(&self, ip: IpAddr) -> bool {
        self.0.is_empty() || self.0.iter().any(|n| n.contains(ip))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    #[test]
    fn networks_match_by_prefix() {
        let n = Network::parse("10.1.0.0/16").unwrap();
        assert!(n.contains(ip("10.1.200.3")));
        assert!(!n.contains(ip("10.2.0.1")));
        assert!(n.contains(ip("::ffff:10.1.0.9")));
        assert!(!n.contains(ip("fe80::1")));
        let host = Network::parse("127.0.0.1").unwrap();
        assert!(host.contains(ip("127.0.0.1")) && !host.contains(ip("127.0.0.2")));
        assert!(Network::parse("0.0.0.0/0").unwrap().contains(ip("8.8.8.8")));
        let v6 = Network::parse("fd00::/8").unwrap();
        assert!(v6.contains(ip("fd12::1")) && !v6.contains(ip("fe00::1")));
        assert!(Network::parse("::1/128").unwrap().contains(ip("::1")));
    }

    #[test]
    fn bad_networks_are_refused() {
        for bad in [
            "10.0.0.0/33",
            "::/129",
            "10.0.0/8",
            "host",
            "10.0.0.0/-1",
            "",
        ] {
            assert!(Network::parse(bad).is_err(), "{bad}");
        }
        let mut list = AllowList::default();
        assert!(list.permits(ip("1.2.3.4")));
        assert!(list.add(",").is_err());
        list.add("127.0.0.0/8, ::1").unwrap();
        assert!(list.permits(ip("127.3.3.3")) && list.permits(ip("::1")));
        assert!(!list.permits(ip("192.168.1.1")));
    }
}
