//! `--latency-histogram FILE`: the file is created before the test, so a
//! path that cannot be written stops netperf before any traffic, and the
//! reported iteration's HDR histogram is written into it after the test,
//! off the data path (see `measure::latency_log` for the format).

use netperf_client::cli::config::Config;
use netperf_data::measure::latency::LatencyRecorder;
use netperf_data::measure::latency_log;
use std::time::{Duration, SystemTime};

use super::output_file::OutputFile;

/// What a finished test hands over to be written.
pub struct Recorded {
    pub recorder: LatencyRecorder,
    /// Wall-clock start of the data phase.
    pub started: SystemTime,
    pub elapsed: Duration,
}

/// The histogram file of this run, created and still empty.
pub struct LatencyFile(OutputFile);

impl LatencyFile {
    /// Creates (or truncates) the file the command line names, if any; the
    /// error status after one line on stderr.
    pub fn create(config: &Config) -> Result<Option<LatencyFile>, i32> {
        let path = config.test.latency_histogram.as_deref();
        Ok(OutputFile::create(path, "--latency-histogram")?.map(LatencyFile))
    }

    /// Writes the recording; 0, or the error status after one line.
    pub fn finish(self, recorded: Option<&Recorded>) -> i32 {
        self.0.finish(|path| match recorded {
            Some(r) => latency_log::write(path, &r.recorder, r.started, r.elapsed),
            None => Err(format!(
                "the test kept no latency histogram to write to {}",
                path.display()
            )),
        })
    }

    /// The test failed: the empty file goes again if we made it.
    pub fn abandon(self) {
        self.0.abandon();
    }
}
