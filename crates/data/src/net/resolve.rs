//! Name resolution through getaddrinfo, reporting failures with the same
//! three lines netperf prints, so scripts that grep them keep working.

use std::ffi::{CStr, CString};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, SocketAddrV4, SocketAddrV6};

/// Address family asked for with -4/-6/-H name,fam/-L name,fam.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Family {
    #[default]
    Unspec,
    Inet,
    Inet6,
}

/// A failed lookup, carrying getaddrinfo's code and text.
#[derive(Debug, thiserror::Error)]
#[error("resolve_host: could not resolve host '{host}' port '{port}' af {family}\n\tgetaddrinfo returned {code} {text}\nNetperf could not resolve {host} as a host name")]
pub struct ResolveError {
    pub host: String,
    pub port: String,
    pub family: &'static str,
    pub code: i32,
    pub text: String,
}

pub fn family_name(f: Family) -> &'static str {
    match f {
        Family::Unspec => "AF_UNSPEC",
        Family::Inet => "AF_INET",
        Family::Inet6 => "AF_INET6",
    }
}

fn af_of(f: Family) -> i32 {
    match f {
        Family::Unspec => libc::AF_UNSPEC,
        Family::Inet => libc::AF_INET,
        Family::Inet6 => libc::AF_INET6,
    }
}

/// Resolve `host` for `family`; `port` may be None (netperf prints "(null)").
/// Addresses come back in getaddrinfo's order.
pub fn resolve(
    host: &str,
    port: Option<u16>,
    family: Family,
    datagram: bool,
) -> Result<Vec<SocketAddr>, ResolveError> {
    let fail = |code: i32, text: String| ResolveError {
        host: host.to_string(),
        port: port.map_or_else(|| "(null)".to_string(), |p| p.to_string()),
        family: family_name(family),
        code,
        text,
    };
    let c_host =
        CString::new(host).map_err(|_| fail(libc::EAI_NONAME, "invalid host name".into()))?;
    // SAFETY: zeroed addrinfo is a valid "no hints" value; fields set below.
    let mut hints: libc::addrinfo = unsafe { std::mem::zeroed() };
    hints.ai_family = af_of(family);
    hints.ai_socktype = if datagram {
        libc::SOCK_DGRAM
    } else {
        libc::SOCK_STREAM
    };
    let mut list: *mut libc::addrinfo = std::ptr::null_mut();
    // SAFETY: valid C string and hints; list is freed below.
    let rc = unsafe { libc::getaddrinfo(c_host.as_ptr(), std::ptr::null(), &hints, &mut list) };
    if rc != 0 {
        // SAFETY: gai_strerror returns a static string.
        let text = unsafe { CStr::from_ptr(libc::gai_strerror(rc)) }
            .to_string_lossy()
            .into_owned();
        return Err(fail(rc, text));
    }
    let mut out = Vec::new();
    let mut cur = list;
    while !cur.is_null() {
        // SAFETY: cur walks the list getaddrinfo returned.
        let ai = unsafe { &*cur };
        if let Some(addr) = sockaddr_to_std(ai.ai_addr, ai.ai_addrlen) {
            let addr = with_port(addr, port.unwrap_or(0));
            if !out.contains(&addr) {
                out.push(addr);
            }
        }
        cur = ai.ai_next;
    }
    // SAFETY: list came from getaddrinfo.
    unsafe { libc::freeaddrinfo(list) };
    if out.is_empty() {
        return Err(fail(libc::EAI_NONAME, "no usable address".into()));
    }
    Ok(out)
}

fn with_port(mut a: SocketAddr, port: u16) -> SocketAddr {
    a.set_port(port);
    a
}

fn sockaddr_to_std(sa: *const libc::sockaddr, len: libc::socklen_t) -> Option<SocketAddr> {
    if sa.is_null() {
        return None;
    }
    // SAFETY: family read from a non-null sockaddr of at least `len` bytes.
    let family = unsafe { (*sa).sa_family } as i32;
    match family {
        libc::AF_INET if len as usize >= std::mem::size_of::<libc::sockaddr_in>() => {
            // SAFETY: checked family and length.
            let sin = unsafe { &*(sa as *const libc::sockaddr_in) };
            let ip = Ipv4Addr::from(u32::from_be(sin.sin_addr.s_addr));
            Some(SocketAddr::V4(SocketAddrV4::new(
                ip,
                u16::from_be(sin.sin_port),
            )))
        }
        libc::AF_INET6 if len as usize >= std::mem::size_of::<libc::sockaddr_in6>() => {
            // SAFETY: checked family and length.
            let sin6 = unsafe { &*(sa as *const libc::sockaddr_in6) };
            let ip = Ipv6Addr::from(sin6.sin6_addr.s6_addr);
            Some(SocketAddr::V6(SocketAddrV6::new(
                ip,
                u16::from_be(sin6.sin6_port),
                sin6.sin6_flowinfo,
                sin6.sin6_scope_id,
            )))
        }
        _ => None,
    }
}

/// The wildcard address of the family of `peer`, for an unbound local end.
pub fn unspecified_like(peer: &SocketAddr) -> SocketAddr {
    match peer {
        SocketAddr::V4(_) => SocketAddr::new(IpAddr::V4(Ipv4Addr::UNSPECIFIED), 0),
        SocketAddr::V6(_) => SocketAddr::new(IpAddr::V6(Ipv6Addr::UNSPECIFIED), 0),
    }
}

/// netperf's name for the family of an address.
pub fn af_text(a: &SocketAddr) -> &'static str {
    match a {
        SocketAddr::V4(_) => "AF_INET",
        SocketAddr::V6(_) => "AF_INET6",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_resolves_in_both_families() {
        let v4 = resolve("127.0.0.1", Some(5), Family::Unspec, false).unwrap();
        assert_eq!(v4[0], "127.0.0.1:5".parse().unwrap());
        let v6 = resolve("::1", None, Family::Inet6, false).unwrap();
        assert!(v6[0].is_ipv6());
    }

    #[test]
    fn wrong_family_fails_like_netperf() {
        let e = resolve("127.0.0.1", None, Family::Inet6, false).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("resolve_host: could not resolve host '127.0.0.1' port '(null)' af AF_INET6\n\tgetaddrinfo returned -9 "));
        assert!(text.ends_with("Netperf could not resolve 127.0.0.1 as a host name"));
    }

    #[test]
    fn nul_in_name_is_an_error_not_a_panic() {
        assert!(resolve("a\0b", None, Family::Unspec, false).is_err());
    }
}
