//! A file an option names for what the test leaves behind (`--flow-samples`,
//! `--latency-histogram`): created before the test, so a path that cannot
//! be written stops netperf before any traffic; filled after it, off the
//! data path; removed again when the test failed, if we created it.

use std::path::{Path, PathBuf};

/// netperf's exit status when such a file cannot be written, as for a
/// result that cannot be stored.
pub const EXIT_OUTPUT_FILE_FAILED: i32 = 2;

/// The file, created and still empty.
pub struct OutputFile {
    path: PathBuf,
    /// The option that names it, for messages ("--flow-samples").
    option: &'static str,
    /// It did not exist before: ours to remove again.
    created: bool,
}

impl OutputFile {
    /// Creates (or truncates) `path`, if given; the error status after one
    /// line on stderr.
    pub fn create(path: Option<&Path>, option: &'static str) -> Result<Option<OutputFile>, i32> {
        let Some(path) = path else {
            return Ok(None);
        };
        let created = std::fs::symlink_metadata(path).is_err();
        match std::fs::File::create(path) {
            Ok(_) => Ok(Some(OutputFile {
                path: path.to_path_buf(),
                option,
                created,
            })),
            Err(e) => {
                eprintln!("netperf: {option}: cannot create {}: {e}", path.display());
                Err(EXIT_OUTPUT_FILE_FAILED)
            }
        }
    }

    /// Writes what `fill` makes of the path; 0, or the error status after
    /// one line (and the file removed).
    pub fn finish(self, fill: impl FnOnce(&Path) -> Result<(), String>) -> i32 {
        match fill(&self.path) {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("netperf: {}: {e}", self.option);
                self.abandon();
                EXIT_OUTPUT_FILE_FAILED
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
