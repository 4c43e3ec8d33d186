//! `--latency-histogram FILE`: the file is created before the test, so a
//! path that cannot be written stops netperf before any traffic, and the
//! reported iteration's HDR histogram is written into it after the test,
//! off the data path (see `measure::latency_log` for the format).

use netperf_client::cli::config::Config;
use netperf_data::measure::latency::LatencyRecorder;
use netperf_data::measure::latency_log;
use std::path::PathBuf;
use std::time::{Duration, SystemTime};

/// netperf's exit status when the histogram file cannot be written, as for
/// a result that cannot be stored.
pub const EXIT_LATENCY_FILE_FAILED: i32 = 2;

/// What a finished test hands over to be written.
pub struct Recorded {
    pub recorder: LatencyRecorder,
    /// Wall-clock start of the data phase.
    pub started: SystemTime,
    pub elapsed: Duration,
}

/// The histogram file of this run, created and still empty.
pub struct LatencyFile {
    path: PathBuf,
    /// It did not exist before: ours to remove again.
    created: bool,
}

impl LatencyFile {
    /// Creates (or truncates) the file the command line names, if any; the
    /// error status after one line on stderr.
    pub fn create(config: &Config) -> Result<Option<LatencyFile>, i32> {
        let Some(path) = config.test.latency_histogram.clone() else {
            return Ok(None);
        };
        let created = std::fs::symlink_metadata(&path).is_err();
        match std::fs::File::create(&path) {
            Ok(_) => Ok(Some(LatencyFile { path, created })),
            Err(e) => {
                eprintln!(
                    "netperf: --latency-histogram: cannot create {}: {e}",
                    path.display()
                );
                Err(EXIT_LATENCY_FILE_FAILED)
            }
        }
    }

    /// Writes the recording; 0, or the error status after one line.
    pub fn finish(self, recorded: Option<&Recorded>) -> i32 {
        let result = match recorded {
            Some(r) => latency_log::write(&self.path, &r.recorder, r.started, r.elapsed),
            None => Err(format!(
                "the test kept no latency histogram to write to {}",
                self.path.display()
            )),
        };
        match result {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("netperf: --latency-histogram: {e}");
                self.abandon();
                EXIT_LATENCY_FILE_FAILED
            }
        }
    }

    /// The test failed: remove the empty file we created rather than leave
    /// one that looks like a result (never what was there before: a device
    /// such as /dev/null, or a file the user made).
    pub fn abandon(self) {
        if self.created {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
