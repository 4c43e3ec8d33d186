//! `--report FILE.html`: one test's -D interim series drawn as a page
//! (`page::series`), and what it draws as FILE.json beside it (from which
//! `netagg report FILE.json` draws the page again). The page is created
//! before the test, so a path that cannot be written stops netperf before
//! any traffic; both are written after it, off the data path. What netperf
//! prints is unchanged.

pub use crate::drawn::Drawn;
use netperf_client::cli::config::Config;
use netperf_pages::context::{HostFacts, RunContext};
use std::path::PathBuf;
use std::time::{Duration, UNIX_EPOCH};

use crate::output_file::OutputFile;
use netperf_client::cli::extensions::EXIT_REPORT_FAILED;

/// The report file of this run, created and still empty.
pub struct ReportFile(OutputFile);

impl ReportFile {
    /// Creates the file the command line names, if any; refuses a test with
    /// no -D interval (there would be no series to draw). The error status
    /// after one line on stderr.
    pub fn create(config: &Config) -> Result<Option<ReportFile>, i32> {
        let Some(path) = config.test.report.clone() else {
            return Ok(None);
        };
        if config.global.interim_interval.is_none() {
            eprintln!("netperf: --report draws the test's interim results: give -D INTERVAL (global option, e.g. -D 1)");
            return Err(EXIT_REPORT_FAILED);
        }
        Ok(OutputFile::create(Some(&path), "--report")?.map(ReportFile))
    }

    /// Writes the page; 0, or the error status after one line.
    pub fn finish(self, config: &Config, drawn: &Drawn) -> i32 {
        let ctx = context(config, drawn);
        let started = drawn
            .last
            .data_started
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_secs_f64();
        let run = netperf_pages::series::SeriesRun {
            format: netperf_base::saved::SERIES.format.into(),
            version: netperf_base::saved::SERIES.version,
            context: ctx,
            started_epoch_s: started,
            result: Some(drawn.result),
            result_text: drawn.text.to_string(),
            interims: drawn.last.interims.clone(),
        };
        self.0.finish(|page| {
            let json = json_beside(page);
            for (path, body) in [(page, run.page()), (&json, run.to_json())] {
                std::fs::write(path, body)
                    .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            }
            Ok(())
        })
    }

    /// The test failed: a file we created goes again.
    pub fn abandon(self) {
        self.0.abandon();
    }
}

/// FILE.json for FILE.html (FILE.html.json should the page be named .json).
pub fn json_beside(page: &std::path::Path) -> PathBuf {
    match page.with_extension("json") {
        same if same == page => PathBuf::from(format!("{}.json", page.display())),
        other => other,
    }
}

/// What ran, where, when and with what, as the page opens with it.
fn context(config: &Config, drawn: &Drawn) -> RunContext {
    let g = &config.global;
    let record = drawn.record;
    let mut ctx = RunContext::new(&g.test_name, std::env::args().collect());
    ctx.setting("Remote host", format!("{} (port {})", g.host, g.port));
    let length = match g.test_length {
        len if len >= 0 => format!("{len} s"),
        len => format!("{} transactions or bytes", len.unsigned_abs()),
    };
    ctx.setting("Test length (-l)", length);
    ctx.setting(
        "Interval (-D)",
        format!("{} s", g.interim_interval.unwrap_or_default().abs()),
    );
    ctx.setting(
        "Units",
        drawn
            .last
            .interims
            .first()
            .map_or(String::new(), |i| i.units.clone()),
    );
    ctx.setting(
        "Protocol",
        format!("{} {}", record.socket_type, record.protocol),
    );
    if record.request_size > 0 {
        ctx.setting(
            "Request / response bytes",
            format!("{} / {}", record.request_size, record.response_size),
        );
    }
    ctx.timed(
        drawn.last.data_started,
        Duration::try_from_secs_f64(drawn.last.outcome.elapsed).unwrap_or_default(),
    );
    let local_interface = record.local.interface.name.clone();
    let mut local = match local_interface.is_empty() {
        true => HostFacts::this_host("netperf", &[]),
        false => HostFacts::this_host("netperf", &[local_interface]),
    };
    let recorded = HostFacts::of_end("netperf", &local.host, &record.local);
    if local.driver.is_empty() {
        local.driver = recorded.driver;
    }
    let mut remote = HostFacts::of_end("netserver", &g.host, &record.remote)
        .with_cpu_count(drawn.last.remote_system.as_ref());
    // Our netserver answers a read of its offloads and MTU; a stock one
    // cannot, and the page says so.
    match netperf_client::control::offload::RemoteOffloads::connect_with(g)
        .and_then(|mut r| r.read())
    {
        Ok(snapshot) => remote.add_remote_offloads(&snapshot),
        Err(e) => remote.note = format!("not reported: {e}"),
    }
    ctx.hosts = vec![local, remote];
    ctx
}
