//! One test's interim series as a page (`netperf ... -D 1 -- --report
//! FILE.html`): the context, the rate over time with the test's result as a
//! line, netperf's own result text, and every interval in a table — a
//! flent-like time series of our own, with no other tool. What the page
//! draws is also kept as JSON beside it (`SeriesRun`), from which
//! `netagg report FILE.json` draws the page again.

use super::chart::{self, Axis, Look, Plot, Series};
use super::context::RunContext;
use super::page::{Cell, Page, Table};
use crate::units::si_label;
use netperf_client::report::interim::Interim;
use serde::{Deserialize, Serialize};

/// The rate over time: each interval's rate at its end, seconds from the
/// test's start, with `result` (the test's figure) across.
pub fn chart(interims: &[Interim], started_epoch: f64, result: Option<f64>) -> String {
    let units = interims.first().map_or("", |i| i.units.as_str());
    let points: Vec<(f64, f64)> = interims
        .iter()
        .map(|i| (i.ending_epoch_secs - started_epoch, i.value))
        .collect();
    let x_end = points.last().map_or(1.0, |p| p.0).max(1.0);
    let x = Axis::si("seconds since the test started").range(0.0, x_end);
    let mut plot = Plot::new("Rate over time", x, Axis::si(units));
    let rates = Series::line(points, Look::new(chart::BLUE, 0));
    plot.series
        .push(rates.named("each interval's rate").dotted());
    if let Some(result) = result {
        let across = Series::line(
            vec![(0.0, result), (x_end, result)],
            Look::new(chart::VERMILLION, 0),
        );
        plot.series
            .push(across.named(format!("the test's result: {}", si_label(result))));
    }
    plot.svg()
}

use netperf_base::saved::SERIES;
/// Most intervals a saved series may hold (a bound against a hostile file).
const MAX_INTERVALS: usize = netperf_base::saved::MAX_ITEMS;

/// Everything the page draws, as its JSON keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SeriesRun {
    pub format: String,
    #[serde(default = "first_layout")]
    pub version: u64,
    pub context: RunContext,
    /// When the data phase started, seconds since the epoch.
    pub started_epoch_s: f64,
    /// The test's figure, in the intervals' unit.
    pub result: Option<f64>,
    /// What netperf printed for the test.
    pub result_text: String,
    pub interims: Vec<Interim>,
}

/// Series saved before "version" existed are of the first layout.
fn first_layout() -> u64 {
    1
}

impl SeriesRun {
    /// The page this run draws.
    pub fn page(&self) -> String {
        page(
            &self.context,
            &self.interims,
            self.started_epoch_s,
            self.result,
            &self.result_text,
        )
    }

    /// The run as the JSON saved beside its page.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default() + "\n"
    }

    /// A saved series, checked: its format, and no more intervals than
    /// any test makes.
    pub fn from_json(doc: &serde_json::Value) -> Result<SeriesRun, String> {
        match netperf_base::saved::identify(doc)? {
            &SERIES => {}
            other => return Err(format!("not a saved netperf series but {}", other.format)),
        }
        let run: SeriesRun = serde_json::from_value(doc.clone()).map_err(|e| e.to_string())?;
        if run.interims.len() > MAX_INTERVALS {
            return Err(format!("{} intervals, too many", run.interims.len()));
        }
        let rates = run.interims.iter().map(|i| i.value).chain(run.result);
        match rates
            .into_iter()
            .find(|rate| !super::rate::is_drawable_rate(*rate))
        {
            Some(rate) => Err(format!("a rate no test measures: {rate}")),
            None => Ok(run),
        }
    }
}

/// The whole page. `result_text` is what netperf printed for the test.
pub fn page(
    ctx: &RunContext,
    interims: &[Interim],
    started_epoch: f64,
    result: Option<f64>,
    result_text: &str,
) -> String {
    let mut page = Page::new(&format!("{} over time", ctx.what));
    ctx.add_to(&mut page);
    page.section("series", "Rate over time", |page| match interims.first() {
        None => {
            page.caution("No interval completed: the test ended before its first -D interval, or moved nothing.");
        }
        Some(first) => {
            let caption = format!(
                "{} interval rates (about every {:.2} s; an interval in which nothing completed joins the next one), and the test's result",
                interims.len(),
                first.interval_secs
            );
            page.figure(&chart(interims, started_epoch, result), &caption);
        }
    });
    page.section("result", "netperf's result", |page| {
        page.summary(result_text);
    });
    if let Some(first) = interims.first() {
        page.section("intervals", "Every interval", |page| {
            page.table(&intervals_table(interims, started_epoch, &first.units));
        });
    }
    ctx.add_reproduce_to(&mut page);
    page.finish()
}

fn intervals_table(interims: &[Interim], started_epoch: f64, units: &str) -> Table {
    let mut table = Table::new([
        "ends at (s)".to_string(),
        "length (s)".to_string(),
        format!("rate ({units})"),
    ]);
    for i in interims {
        table.row([
            Cell::number(format!("{:.3}", i.ending_epoch_secs - started_epoch)),
            Cell::number(format!("{:.3}", i.interval_secs)),
            Cell::number(format!("{:.2}", i.value)),
        ]);
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    fn interim(t: f64, value: f64) -> Interim {
        Interim {
            value,
            units: "Trans/s".into(),
            interval_secs: 1.0,
            ending_epoch_secs: 1000.0 + t,
            tcp: None,
            remote_tcp: None,
        }
    }

    #[test]
    fn the_page_has_its_chart_intervals_and_context() {
        let ctx = RunContext::new(
            "TCP_RR",
            vec!["netperf".into(), "-t".into(), "TCP_RR".into()],
        );
        let series = [interim(1.0, 180_000.0), interim(2.0, 175_000.0)];
        let page = page(&ctx, &series, 1000.0, Some(177_500.0), "result <text>");
        assert!(page.contains("<h1>TCP_RR over time</h1>"));
        assert!(page.contains("180k"), "SI axis labels");
        assert!(page.contains("result: 178k"));
        assert!(page.contains("<td>2.000</td><td>1.000</td><td>175000.00</td>"));
        assert!(page.contains("result &lt;text&gt;"));
        assert!(page.contains("id=\"reproduce\""));
        assert!(!page.contains("<script"));
    }

    #[test]
    fn a_saved_series_draws_the_same_page() {
        let run = SeriesRun {
            format: SERIES.format.into(),
            version: SERIES.version,
            context: RunContext::new("TCP_RR", vec!["netperf".into()]),
            started_epoch_s: 1000.0,
            result: Some(177_500.0),
            result_text: "text".into(),
            interims: vec![interim(1.0, 180_000.0), interim(2.0, 175_000.0)],
        };
        let doc: serde_json::Value = serde_json::from_str(&run.to_json()).unwrap();
        let again = SeriesRun::from_json(&doc).unwrap();
        assert_eq!(again.page(), run.page());
        let other = serde_json::json!({"format": "netagg"});
        assert!(SeriesRun::from_json(&other)
            .unwrap_err()
            .contains("not a saved netperf series but netagg"));
        let mut broken = doc.clone();
        broken["interims"] = serde_json::json!("many");
        assert!(SeriesRun::from_json(&broken).is_err());
        // Rates the chart cannot draw (they overflowed its arithmetic).
        for value in [-1e308, 1e307] {
            let mut hostile = doc.clone();
            hostile["interims"][0]["value"] = serde_json::json!(value);
            assert!(SeriesRun::from_json(&hostile).is_err(), "{value}");
        }
        let mut hostile = doc.clone();
        hostile["result"] = serde_json::json!(-1e308);
        assert!(SeriesRun::from_json(&hostile).is_err());
    }

    #[test]
    fn no_interval_is_said_not_drawn() {
        let ctx = RunContext::new("TCP_RR", vec![]);
        let page = page(&ctx, &[], 0.0, None, "");
        assert!(page.contains("No interval completed"));
        assert!(!page.contains("<svg"));
    }
}
