//! An exposition checked by the tools Prometheus users run:
//! prometheus_client's OpenMetrics parser and its Prometheus text-format
//! parser (installed from PyPI if missing), and `promtool check metrics`
//! (Debian's `prometheus` package, full tier); each skipped, saying why,
//! where it cannot be had.

use super::{install, run_with_limit, skip, text};
use std::path::Path;
use std::time::Duration;

/// Which parsers must read a text: OpenMetrics text is also valid
/// Prometheus text (`# EOF` is a comment there); the other way it is not.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Text {
    OpenMetrics,
    Prometheus,
}

/// The exposition through prometheus_client's parsers: every sample
/// parsed, and, where every family is a gauge (whose text the two formats
/// share), both parsers see the same families.
pub fn check_with_prometheus_parsers(dir: &Path, exposition: &str, kind: Text) {
    let have = || install::python_imports("prometheus_client.openmetrics.parser");
    if let Err(why) = install::ensure(install::From::Pip, "prometheus_client", have) {
        return skip(format!("the OpenMetrics parser check: {why}"));
    }
    let file = dir.join("export.om");
    std::fs::write(&file, exposition).unwrap();
    let script = "import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families as om
from prometheus_client.parser import text_string_to_metric_families as prom
text = open(sys.argv[1]).read()
b = list(prom(text))
a = list(om(text)) if sys.argv[2] == 'om' else b
print(len(a), sum(len(f.samples) for f in a), len(b), sum(len(f.samples) for f in b))";
    let which = if kind == Text::OpenMetrics {
        "om"
    } else {
        "prom"
    };
    let out = run_with_limit(
        "python3",
        &["-c", script, file.to_str().unwrap(), which],
        Duration::from_secs(60),
    );
    assert!(
        out.status.success(),
        "parsers refused it: {}",
        text(&out.stderr)
    );
    let counts: Vec<usize> = text(&out.stdout)
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    let samples = exposition.lines().filter(|l| !l.starts_with('#')).count();
    assert_eq!(counts[1], samples, "every sample parsed");
    assert_eq!(counts[3], samples, "every sample parsed as Prometheus text");
    let gauges = exposition
        .lines()
        .filter(|l| l.starts_with("# TYPE "))
        .all(|l| l.ends_with(" gauge"));
    if gauges {
        assert_eq!(counts[0], counts[2], "both parsers see the same families");
    }
}

/// `promtool check metrics` on Prometheus text: it parses and its linter
/// (naming, units, counters, help) has nothing to say.
pub fn check_with_promtool(dir: &Path, exposition: &str) {
    if super::fast_tier_skips("needs promtool (Debian's prometheus package)") {
        return;
    }
    let have = || install::runs("promtool", &["--version"]);
    if let Err(why) = install::ensure(install::From::Apt, "prometheus", have) {
        return skip(format!("the promtool check: {why}"));
    }
    let file = dir.join("metrics.prom");
    std::fs::write(&file, exposition).unwrap();
    let out = run_with_limit(
        "sh",
        &[
            "-c",
            "promtool check metrics < \"$1\"",
            "sh",
            file.to_str().unwrap(),
        ],
        Duration::from_secs(60),
    );
    assert!(
        out.status.success(),
        "promtool check metrics: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
}
