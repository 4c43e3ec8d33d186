//! The `tcpi_*` lines netperf writes to stderr at the end of a TCP test when
//! `DUMP_TCP_INFO` is set in its environment (or at `-d -d`): flent sets it
//! and reads them into its metadata. Same text as netperf 2.7.1, its
//! `tpci_snd_cwnd` spelling included, since that is what parsers match.
//! And what TCP did over one interim interval (`-D`), from two readings.

/// Defined with the message that carries the netserver's series of them.
pub use netperf_wire::tcp_series::TcpInterval;

/// Whether the lines are wanted: `DUMP_TCP_INFO` set, or a debug level
/// above one, as netperf decides.
pub fn wanted(debug: i32) -> bool {
    debug > 1 || std::env::var_os("DUMP_TCP_INFO").is_some()
}

/// Write the lines of a socket's TCP_INFO to stderr when they are wanted
/// (netperf does as it reads the retransmission count from it).
pub fn dump(info: Option<&libc::tcp_info>, debug: i32) {
    if let Some(info) = info.filter(|_| wanted(debug)) {
        eprint!("{}", lines(info));
    }
}

/// The three lines, each ending in a newline. netperf prints the fields
/// with `%d`, so values past `i32::MAX` show negative there and here.
pub fn lines(info: &libc::tcp_info) -> String {
    let d = |v: u32| v as i32;
    format!(
        "tcpi_rto {} tcpi_ato {} tcpi_pmtu {} tcpi_rcv_ssthresh {}\n\
         tcpi_rtt {} tcpi_rttvar {} tcpi_snd_ssthresh {} tpci_snd_cwnd {}\n\
         tcpi_reordering {} tcpi_total_retrans {}\n",
        d(info.tcpi_rto),
        d(info.tcpi_ato),
        d(info.tcpi_pmtu),
        d(info.tcpi_rcv_ssthresh),
        d(info.tcpi_rtt),
        d(info.tcpi_rttvar),
        d(info.tcpi_snd_ssthresh),
        d(info.tcpi_snd_cwnd),
        d(info.tcpi_reordering),
        d(info.tcpi_total_retrans),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_is_the_difference_of_two_readings() {
        // SAFETY: tcp_info is plain data.
        let mut a: libc::tcp_info = unsafe { std::mem::zeroed() };
        a.tcpi_total_retrans = 5;
        a.tcpi_busy_time = 1_000_000;
        a.tcpi_rwnd_limited = 200_000;
        let mut b = a;
        b.tcpi_total_retrans = 8;
        b.tcpi_busy_time = 1_900_000;
        b.tcpi_rwnd_limited = 450_000;
        b.tcpi_rtt = 120;
        b.tcpi_snd_cwnd = 10;
        b.tcpi_delivery_rate = 125_000_000;
        let i = TcpInterval::between(&a, &b, 1.0);
        assert_eq!((i.retransmits, i.rtt_us, i.snd_cwnd), (3, 120, 10));
        assert!((i.busy - 0.9).abs() < 1e-9 && (i.rwnd_limited - 0.25).abs() < 1e-9);
        assert_eq!(i.sndbuf_limited, 0.0);
        assert!(i.line().contains(
            "delivery 1000.00 10^6bits/s pacing 0.00 10^6bits/s busy 90.0% rwnd-limited 25.0%"
        ));
        // Counters that went backwards (a new socket) give no negative share.
        assert_eq!(TcpInterval::between(&b, &a, 1.0).busy, 0.0);
    }

    #[test]
    fn the_lines_are_netperfs() {
        // SAFETY: tcp_info is plain data.
        let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
        info.tcpi_rto = 204000;
        info.tcpi_pmtu = 65535;
        info.tcpi_rcv_ssthresh = 65495;
        info.tcpi_rtt = 120;
        info.tcpi_rttvar = 48;
        info.tcpi_snd_ssthresh = 30;
        info.tcpi_snd_cwnd = 12;
        info.tcpi_reordering = 8;
        info.tcpi_total_retrans = 71;
        // As a stock netperf 2.7.1 printed it under flent.
        assert_eq!(
            lines(&info),
            "tcpi_rto 204000 tcpi_ato 0 tcpi_pmtu 65535 tcpi_rcv_ssthresh 65495\n\
             tcpi_rtt 120 tcpi_rttvar 48 tcpi_snd_ssthresh 30 tpci_snd_cwnd 12\n\
             tcpi_reordering 8 tcpi_total_retrans 71\n"
        );
        info.tcpi_snd_ssthresh = u32::MAX;
        assert!(lines(&info).contains("tcpi_snd_ssthresh -1 "));
    }
}
