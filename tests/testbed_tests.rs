//! netagg over the namespace testbed (scripts/testbed): a SUT and two load
//! generators joined by veth pairs, each running our netserver; a short ramp
//! (1 to 4 streams, 2 s per level) for tps and outbound. Skipped, saying so,
//! where network namespaces cannot be made (not root, no iproute2).

mod common;
use common::*;
use std::process::Command;
use std::time::Duration;

const NETAGG: &str = env!("CARGO_BIN_EXE_netagg");
const TESTBED: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/testbed");

/// Removes the testbed when the test ends, also when it fails.
struct Testbed {
    name: String,
}

impl Drop for Testbed {
    fn drop(&mut self) {
        let _ = Command::new(TESTBED)
            .args(["down", "--name", &self.name])
            .status();
    }
}

fn namespaces_work() -> bool {
    let probe = format!("ngprobe{}", std::process::id() % 100);
    let ok = Command::new("ip")
        .args(["netns", "add", &probe])
        .status()
        .is_ok_and(|s| s.success());
    if ok {
        let _ = Command::new("ip")
            .args(["netns", "delete", &probe])
            .status();
    }
    ok
}

#[test]
fn a_short_ramp_over_the_testbed() {
    if !namespaces_work() {
        eprintln!("skipped: cannot create network namespaces here (needs root and iproute2)");
        return;
    }
    let name = format!("n{}", std::process::id() % 100_000);
    let bed = Testbed { name: name.clone() };
    let up = run_with_limit(
        TESTBED,
        &[
            "up",
            "--name",
            &name,
            "--lgs",
            "2",
            "--netserver",
            NETSERVER,
        ],
        Duration::from_secs(60),
    );
    assert!(
        up.status.success(),
        "{}{}",
        text(&up.stdout),
        text(&up.stderr)
    );
    assert!(text(&up.stdout).contains("NUM_REMOTE_HOSTS=2"));
    // Every load generator is in the benchmarking range (RFC 2544), each on
    // its own /24.
    for i in 1..=2 {
        assert!(
            text(&up.stdout).contains(&format!("REMOTE_HOSTS[{}]=198.18.{i}.2", i - 1)),
            "{}",
            text(&up.stdout)
        );
    }
    let hosts = format!("/tmp/{name}-remote_hosts");
    let out_dir = std::env::temp_dir().join(format!("{name}-out"));
    for (kind, extra) in [("tps", &["--burst", "4"][..]), ("outbound", &[][..])] {
        let mut args = vec![
            "netns",
            "exec",
            &*format!("{name}-sut"),
            NETAGG,
            "--hosts-file",
            &hosts,
            "--kind",
            kind,
            "--duration",
            "2",
            "--max-streams",
            "4",
            "--out",
            out_dir.to_str().unwrap(),
        ]
        .into_iter()
        .map(str::to_string)
        .collect::<Vec<_>>();
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = run_with_limit("ip", &args, Duration::from_secs(120));
        let stdout = text(&run.stdout);
        assert!(
            run.status.success(),
            "{kind}: {stdout}{}",
            text(&run.stderr)
        );
        let json: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out_dir.join(format!("netagg_{kind}.json"))).unwrap(),
        )
        .unwrap();
        let levels = json["levels"].as_array().unwrap();
        let streams: Vec<u64> = levels
            .iter()
            .map(|l| l["streams"].as_u64().unwrap())
            .collect();
        assert_eq!(streams, [1, 2, 4], "{kind}");
        // Both veth interfaces are counted, and packets moved both ways.
        assert_eq!(json["interfaces"].as_array().unwrap().len(), 2, "{json}");
        for level in levels {
            assert!(level["average"].as_f64().unwrap() > 0.0, "{kind}: {level}");
            assert!(
                level["packets_out_per_s"].as_f64().unwrap() > 0.0,
                "{kind}: {level}"
            );
            assert!(
                level["packets_in_per_s"].as_f64().unwrap() > 0.0,
                "{kind}: {level}"
            );
        }
        // The summary agrees with the series: each level's average is the
        // mean of the CSV rows marked as its window.
        let csv = std::fs::read_to_string(out_dir.join(format!("netagg_{kind}.csv"))).unwrap();
        for (index, level) in levels.iter().enumerate() {
            let inside: Vec<f64> = csv
                .lines()
                .skip(1)
                .map(|l| l.split(',').collect::<Vec<_>>())
                .filter(|f| f[2] == index.to_string() && f[4] == "1")
                .map(|f| f[5].parse().unwrap())
                .collect();
            assert!(!inside.is_empty(), "{kind}: {csv}");
            let mean = inside.iter().sum::<f64>() / inside.len() as f64;
            let average = level["average"].as_f64().unwrap();
            assert!(
                (mean - average).abs() <= 0.001 * average,
                "{kind}: {mean} vs {average}"
            );
        }
        for file in ["txt", "html"] {
            assert!(out_dir.join(format!("netagg_{kind}.{file}")).exists());
        }
        assert!(out_dir.join(format!("netagg_{kind}_overall.svg")).exists());
        assert!(out_dir.join(format!("netperf_{kind}.log")).exists());
        // Streams alternate between the two load generators.
        assert_eq!(json["hosts"].as_array().unwrap().len(), 2);
        let peak = json["peak_level"].as_u64().unwrap() as usize;
        let peak_average = levels[peak]["average"].as_f64().unwrap();
        assert!(
            stdout.starts_with(&format!("Average of peak interval is {peak_average:.3}")),
            "{stdout}"
        );
        assert!(json["sample_spread_us"]["max"].as_f64().unwrap() < 1000.0);
    }
    std::fs::remove_dir_all(&out_dir).ok();
    drop(bed);
    let left = Command::new("ip").args(["netns", "list"]).output().unwrap();
    assert!(
        !text(&left.stdout).contains(&format!("{name}-")),
        "testbed not removed"
    );
}
