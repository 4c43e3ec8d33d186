//! The `-v 2` lines of an open-loop test (`--rate`): who keeps the schedule,
//! how well it was kept, and the two latencies' percentiles, below the
//! result block whose shape stays netperf's.

use super::omni::record::OpenLoopRecord;

/// Percentile names, in the order of `OpenLoopRecord`'s latency arrays.
const TAIL: [&str; 6] = ["P50", "P90", "P99", "P99.9", "P99.99", "P99.999"];

/// The lines, each ending in a newline.
pub fn render_open_loop(r: &OpenLoopRecord, in_flight_at_end: u64, bound: u32) -> String {
    let tail = |values: &[f64; 6]| {
        TAIL.iter()
            .zip(values)
            .map(|(name, v)| format!("{name} {v:.1}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    format!(
        "\nOpen loop: {:.2} requests/s offered, {:.2} responses/s achieved; netperf alone keeps the schedule; the netserver answers each request as it arrives (any netserver over TCP; over UDP ours, which echoes each request's number)\n\
         Send slip (actual - intended), us: P50 {:.1} P99 {:.1} max {:.1}; late {}, caught up {} (sent several to a call), held back {} (at most {bound} in flight), lost {}, most in flight {}, in flight at the end {in_flight_at_end}, responses matching no request {}\n\
         Corrected latency (from intended send), us: {}\n\
         Raw latency (from actual send), us: {}\n",
        r.offered_rate,
        r.achieved_rate,
        r.slip[0],
        r.slip[1],
        r.slip[2],
        r.late,
        r.caught_up,
        r.held_back,
        r.lost,
        r.max_in_flight,
        r.unmatched,
        tail(&r.corrected),
        tail(&r.raw),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_figure_has_its_place() {
        let r = OpenLoopRecord {
            offered_rate: 1000.0,
            achieved_rate: 999.5,
            slip: [2.0, 9.0, 120.0],
            late: 3,
            caught_up: 7,
            unmatched: 5,
            held_back: 1,
            lost: 0,
            max_in_flight: 4,
            corrected: [10.0, 20.0, 30.0, 40.0, 50.0, 60.0],
            raw: [1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
        };
        let text = render_open_loop(&r, 2, 1024);
        assert!(text.contains("1000.00 requests/s offered, 999.50 responses/s"));
        assert!(text.contains(
            "late 3, caught up 7 (sent several to a call), held back 1 (at most 1024 in flight), lost 0"
        ));
        assert!(text.contains("Corrected latency (from intended send), us: P50 10.0 P90 20.0"));
        assert!(text.contains("Raw latency (from actual send), us: P50 1.0"));
        assert!(text.contains("in flight at the end 2, responses matching no request 5\n"));
        assert!(text.contains("P99.999 6.0\n"));
    }
}
