//! netperf's own doc/examples scripts (netperf 2.7.1), the other harness
//! that drives netperf: bloat.sh, packet_byte_script, find_max_burst.sh and
//! runemomni.sh, their netperf lines run as they run them (lengths
//! shortened, the port given) and read as they read them, held against what
//! they read from stock (common::harness, as harness_tests.rs does for the
//! other harnesses); with NETPERF_STOCK_DIR the scripts themselves run whole
//! from the stock tree beside it.

mod common;
use common::harness::*;
use common::*;
use std::os::unix::process::CommandExt;
use std::time::Duration;

// ---------------------------------------------------------------------------
// netperf's own doc/examples (netperf 2.7.1): bloat.sh, packet_byte_script,
// find_max_burst.sh, runemomni.sh; their lengths shortened, the port given.

const EXAMPLES: &str =
    "netperf 2.7.1 doc/examples: bloat.sh, packet_byte_script, find_max_burst.sh, runemomni.sh";

/// bloat.sh: `grep Interim | awk '{print int($10)}'` of the first and last
/// line are the RRD's start and end, the largest $6 its heartbeat, and
/// every line whose $1 is "Interim" an update `$10:$3`. Any line with
/// "Interim" in it must be netperf's interim line, its $10 a Unix time
/// (after 2001), the span from first to last within an hour.
fn bloat_parse(_case: &Case, ran: &[Ran]) -> Result<Vec<Record>, String> {
    let interim: Vec<Vec<&str>> = ran[0]
        .stdout
        .lines()
        .filter(|l| l.contains("Interim"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    // Stock's interim timing overshoots on a busy machine: one line is
    // all a 2 s test is sure to give.
    if interim.is_empty() {
        return Err("no Interim lines".into());
    }
    let mut record = Record::new();
    let mut stamps = Vec::new();
    for fields in &interim {
        let field = |i: usize| fields.get(i - 1).copied().unwrap_or("");
        let number = |i: usize| field(i).parse::<f64>();
        if field(1) != "Interim" || number(3).is_err() || number(6).is_err() {
            return Err(format!(
                "awk reads {:?} as an interim result",
                fields.join(" ")
            ));
        }
        match number(10) {
            Ok(t) if t > 1e9 => stamps.push(t as i64),
            _ => return Err(format!("$10 of {:?} is no timestamp", fields.join(" "))),
        }
        for i in [3, 6, 10] {
            record.push((format!("${i}"), field(i).to_string()));
        }
    }
    let length = stamps.last().unwrap() - stamps[0];
    if !(0..3600).contains(&length) {
        return Err(format!("LENGTH {length}: rrdtool create fails"));
    }
    record.push(("LENGTH".into(), length.to_string()));
    Ok(vec![record])
}

/// packet_byte_script: MSS=`netperf ... -t TCP_MSS -P 0 -v 0` feeds `expr`
/// and `[ $bar -lt $MSS ]`: a positive integer, white space around it.
fn mss_parse(_case: &Case, ran: &[Ran]) -> Result<Vec<Record>, String> {
    let mss = ran[0].stdout.trim();
    match mss.parse::<u32>() {
        Ok(n) if n > 0 => Ok(vec![vec![("MSS".into(), mss.to_string())]]),
        _ => Err(format!("expr cannot use MSS={mss:?}")),
    }
}

/// A script that prints netperf's table for a reader: the numbers of its
/// first result row (the first line starting with a digit). (Not its line
/// count: the confidence warning comes and goes with the machine's load.)
fn table_parse(_case: &Case, ran: &[Ran]) -> Result<Vec<Record>, String> {
    let row = ran[0]
        .stdout
        .lines()
        .find(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
        .ok_or("no result row")?;
    Ok(vec![row
        .split_whitespace()
        .enumerate()
        .map(|(i, v)| (format!("row ${}", i + 1), v.to_string()))
        .collect()])
}

/// find_max_burst.sh: `echo $TMP_TPS | awk '{print int($1)}'`, compared
/// with the last rate by `[ -gt ]`: the first word of the output.
fn burst_parse(_case: &Case, ran: &[Ran]) -> Result<Vec<Record>, String> {
    let first = ran[0].stdout.split_whitespace().next().unwrap_or("");
    match first.parse::<f64>() {
        Ok(tps) if tps >= 1.0 => Ok(vec![vec![("$1".into(), first.to_string())]]),
        _ => Err(format!("int($1) of {first:?} stops the search")),
    }
}

/// runemomni.sh: `-o all` CSV for the netperf database, header with -P 1:
/// how many lines (banner, header, values) and CSV fields it printed.
fn csv_parse(_case: &Case, ran: &[Ran]) -> Result<Vec<Record>, String> {
    let out = &ran[0].stdout;
    let lines: Vec<&str> = out.lines().filter(|l| !l.is_empty()).collect();
    let values = lines.last().ok_or("no output")?;
    let mut record = vec![("lines".to_string(), lines.len().to_string())];
    let fields = values.split(',').collect::<Vec<_>>();
    for i in [5, 6] {
        let v = fields.get(i - 1).unwrap_or(&"");
        record.push((format!("CSV ${i}"), v.to_string()));
    }
    Ok(vec![record])
}

const EXAMPLE_CASES: &[Case] = &[
    // bloat.sh's TCP_RR runs for 7200 s until `pkill -ALRM netperf`.
    Case {
        alarm: Some(2),
        ..Case::one(
            "bloat.sh TCP_RR",
            "-H {H} -p {P} -l 7200 -t TCP_RR -D -0.5 -v 2 -- -r 1",
            bloat_parse,
        )
    },
    Case::one(
        "bloat.sh TCP_STREAM",
        "-H {H} -p {P} -l 2 -t TCP_STREAM -D 0.25 -v 2 -- -m 1K",
        bloat_parse,
    ),
    // NETPERF_AFFINITY="-p P" puts the port right after the program.
    Case::one(
        "packet_byte_script TCP_MSS",
        "-p {P} -H {H} -t TCP_MSS -P 0 -v 0",
        mss_parse,
    ),
    // NETPERF_TIME=1 NETPERF_STATS="-i 3,3 -I 99,5": the first size with
    // the header, the next without.
    Case::one(
        "packet_byte_script TCP_RR",
        "-p {P} -l 1 -H {H} -t TCP_RR -i 3,3 -I 99,5 -- -r 64,1 -s -1 -S -1",
        table_parse,
    ),
    Case::one(
        "packet_byte_script TCP_RR -P 0",
        "-p {P} -l 1 -H {H} -P 0 -t TCP_RR -i 3,3 -I 99,5 -- -r 128,1 -s -1 -S -1",
        table_parse,
    ),
    // NETPERF="netperf -p P -l 1"; the first two bursts of its search.
    Case::one(
        "find_max_burst.sh -b 1",
        "-p {P} -l 1 -t UDP_RR -P 0 -H {H} -- -b 1 -D -o throughput -e 1 -s 1M -S 1M",
        burst_parse,
    ),
    Case::one(
        "find_max_burst.sh -b 2",
        "-p {P} -l 1 -t UDP_RR -P 0 -H {H} -- -b 2 -D -o throughput -e 1 -s 1M -S 1M",
        burst_parse,
    ),
    // length=1 confidence="-i 3,3", one CPU pair, the data host the
    // control host (IPv4: the script's second host is IPv6, below).
    Case::one(
        "runemomni.sh TCP_STREAM",
        "-P 1 -T 0,0 -t omni -c -C -H {H} -p {P} -l 1 -i 3,3 -- -o all -H {H} -m 64K",
        csv_parse,
    ),
    Case::one(
        "runemomni.sh UDP_RR burst",
        "-P 0 -T 0 -t omni -f m -c -C -H {H} -p {P} -l 1 -i 3,3 -- -o all -H {H} -s 1M -S 1M -r 64 -b 4 -T udp",
        csv_parse,
    ),
];

#[test]
fn netperf_doc_examples() {
    check_harness(&HARNESSES[0]);
}

const HARNESSES: [Harness; 1] = [Harness {
    name: "netperf-examples",
    source: EXAMPLES,
    cases: EXAMPLE_CASES,
    slow_secs: 6,
}];

/// The parsers against stock's recorded output, without running anything.
#[test]
fn each_harness_reads_stocks_recorded_output() {
    check_recorded_outputs(&HARNESSES);
}

/// Kills a process group when dropped.
struct KillGroup(i32);

impl Drop for KillGroup {
    fn drop(&mut self) {
        // SAFETY: kill takes a pid and a signal; a negative pid names a group.
        unsafe { libc::kill(-self.0, libc::SIGKILL) };
    }
}

/// netperf's doc/examples scripts themselves, from the stock tree next to
/// NETPERF_STOCK_DIR (DIR/../doc/examples), with our netperf and with
/// stock's: packet_byte_script whole (NETPERF_TIME and NETPERF_CRR_TIME
/// -100, a transaction or byte count, and NETPERF_STATS `-i 3,3 -I 99,5`
/// shorten each of its tests; NETPERF_AFFINITY carries the port)
/// prints as many result rows with ours as with stock; find_max_burst.sh
/// (its NETPERF with `-p P -l 1`) ends with a burst size, as with stock.
#[test]
fn netperf_example_scripts_run_whole() {
    if fast_tier_skips("slow (10 s)") {
        return;
    }
    let Some(dir) = stock_dir() else { return };
    let examples = std::path::Path::new(&dir).join("../doc/examples");
    if !examples.join("packet_byte_script").exists() {
        return skip(format!(
            "no netperf doc/examples beside NETPERF_STOCK_DIR ({})",
            examples.display()
        ));
    }
    // Our netperf where the scripts look for one: NETPERF_DIR/netperf.
    let ours = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("harness-netperf");
    std::fs::create_dir_all(&ours).unwrap();
    let link = ours.join("netperf");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(NETPERF.path(), &link).unwrap();
    let server = Server::start("127.0.0.1");
    let port = format!("-p {}", server.port);
    let script = |name: &str, netperf_dir: &std::path::Path, env: &[(&str, String)]| {
        let child = std::process::Command::new("sh")
            .arg(examples.join(name))
            .arg("127.0.0.1")
            .env("NETPERF_DIR", netperf_dir)
            .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("spawn sh");
        // The script's netperf processes go with it, also on a failure.
        let _group = KillGroup(child.id() as i32);
        wait_bounded(child, Duration::from_secs(120))
    };
    let packet_env = [
        ("NETPERF_TIME", "-100".to_string()),
        ("NETPERF_CRR_TIME", "-100".to_string()),
        ("NETPERF_STATS", "-i 3,3 -I 99,5".to_string()),
        ("NETPERF_AFFINITY", port.clone()),
    ];
    let rows = |out: &std::process::Output| {
        let stdout = text(&out.stdout);
        let n = stdout
            .lines()
            .filter(|l| l.trim_start().starts_with(|c: char| c.is_ascii_digit()))
            .count();
        (out.status.code(), n, stdout)
    };
    let stock_dir = std::path::PathBuf::from(&dir);
    let (with_ours, with_stock, burst) = std::thread::scope(|s| {
        let a = s.spawn(|| rows(&script("packet_byte_script", &ours, &packet_env)));
        let b = s.spawn(|| rows(&script("packet_byte_script", &stock_dir, &packet_env)));
        let netperf = format!("{} {port} -l 1", NETPERF.path());
        let c = s.spawn(|| script("find_max_burst.sh", &ours, &[("NETPERF", netperf)]));
        (a.join().unwrap(), b.join().unwrap(), c.join().unwrap())
    });
    assert_eq!(with_stock.0, Some(0), "stock: {}", with_stock.2);
    assert!(
        with_stock.1 > 10,
        "stock printed {} rows: {}",
        with_stock.1,
        with_stock.2
    );
    assert_eq!(
        (with_ours.0, with_ours.1),
        (with_stock.0, with_stock.1),
        "packet_byte_script with our netperf (exit, result rows) against stock's:\n{}",
        with_ours.2
    );
    let last = text(&burst.stdout);
    let size = last.split_whitespace().last().unwrap_or("");
    assert!(
        burst.status.success() && size.parse::<u32>().is_ok_and(|b| b >= 1),
        "find_max_burst.sh ends with {size:?}: {last}{}",
        text(&burst.stderr)
    );
}
