//! The `tcpi_*` lines netperf writes to stderr at the end of a TCP test when
//! `DUMP_TCP_INFO` is set in its environment (or at `-d -d`): flent sets it
//! and reads them into its metadata. Same text as netperf 2.7.1, its
//! `tpci_snd_cwnd` spelling included, since that is what parsers match.

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
