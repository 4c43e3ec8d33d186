//! A classic test run as netperf runs it: control connection, banner,
//! iterations until the confidence interval is met (or -i max), then the
//! classic result block.

use super::omni::{Measured, OmniOutput};
use super::EXIT_FAILURE;
use crate::store::PendingStore;
use netperf_client::cli::config::{Config, GlobalOptions};
use netperf_client::control::client::{self, ClientError, Iteration, RunOptions};
use netperf_client::control::interim::InterimOptions;
use netperf_client::report::banner::{render_banner, Banner, BannerConfidence, BannerEndpoint};
use netperf_client::report::classic::{render_classic, ClassicOptions, HeadlineFigures};
use netperf_client::report::confidence::{should_warn, ConfidenceWidths};
use netperf_client::report::interim::InterimStyle;
use netperf_client::report::omni::build::direction_text;
use netperf_client::report::omni::table::Need;
use netperf_client::report::omni::{OmniRecord, Selection, Style};
use netperf_client::report::ClassicKind;
use netperf_data::engine::Histogram;
use netperf_data::measure::confidence::Confidence;
use netperf_data::measure::outcome::Outcome;
use netperf_data::net::channel::Channel;
use netperf_data::net::resolve::af_text;
use netperf_data::spec::{TestName, TestSpec};
use std::io::Write;
use std::net::SocketAddr;
use std::time::Duration;

fn endpoint(name: String, addr: &SocketAddr) -> BannerEndpoint {
    BannerEndpoint {
        name,
        address: addr.ip().to_string(),
        port: addr.port(),
        family: af_text(addr).to_string(),
    }
}

pub(super) fn banner(
    config: &Config,
    spec: &TestSpec,
    kind: ClassicKind,
) -> Result<Banner, ClientError> {
    let (remote, local) = client::data_endpoints(spec)?;
    let local = local.unwrap_or_else(|| {
        let mut l = netperf_data::net::resolve::unspecified_like(&remote);
        l.set_port(spec.local_data_port);
        l
    });
    let mut remote_shown = remote;
    remote_shown.set_port(spec.remote_data_port);
    let g = &config.global;
    Ok(Banner {
        title: if spec.test == TestName::Omni {
            format!("OMNI {} TEST", direction_text(spec))
        } else {
            kind.title().to_string()
        },
        local: endpoint(
            spec.data_local.clone().unwrap_or_else(|| {
                // netperf's names for "any": "0.0.0.0", and "::0" (not "::").
                match local {
                    SocketAddr::V4(_) => "0.0.0.0".to_string(),
                    SocketAddr::V6(_) => "::0".to_string(),
                }
            }),
            &local,
        ),
        remote: endpoint(spec.data_host.clone(), &remote_shown),
        confidence: (g.iterations_max > 1).then_some(BannerConfidence {
            level: g.confidence_level as i32,
            interval_percent: g.confidence_width,
            result_only: g.result_confidence_only,
        }),
        nodelay: spec.local_nodelay || spec.remote_nodelay,
        copy_avoidance: spec.copy_avoidance,
        no_control: g.no_control,
        features: Default::default(),
        first_burst: spec.first_burst_given,
        cpu_bind: g.cpu_bind_requested,
    })
}

/// What any test does first: open `--store`'s database and bind to `-T`'s
/// CPU. The database failing stops us before the test, with this exit
/// status; a binding the machine refuses does not: netperf 2.7.1 ignores
/// sched_setaffinity's error (and any CPU past its set's 1024) and runs
/// unbound, so ours says so on stderr and runs too.
pub(super) fn prepare(config: &Config) -> Result<Option<PendingStore>, i32> {
    let store = PendingStore::open(config)?;
    let cpu = config.global.local_cpu_bind;
    if let Err(e) = netperf_data::engine::affinity::bind_current_thread(cpu) {
        eprintln!("netperf: note: -T: cannot bind to CPU {cpu} ({e}); the test runs without the binding, as netperf 2.7.1 runs it");
    }
    Ok(store)
}

/// Run the test and print its result; returns the exit status.
pub fn run(config: &Config, spec: &TestSpec) -> i32 {
    let g = &config.global;
    // netperf 2.7.1 names `-- -L addr` in its banner but binds a stream
    // test's data socket only for a port: the kernel picks the source.
    if let Some(local) = config.test.data_local.as_deref() {
        if !netperf_client::control::must_bind(spec) {
            eprintln!("netperf: note: -- -L '{local}' without a port does not bind the data socket, as netperf 2.7.1 does not: the kernel picks the source address; a local port (-- -P PORT,) binds it");
        }
    }
    let omni = match super::omni::choose(config, spec) {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{e}");
            return EXIT_FAILURE;
        }
    };
    let mut spec = spec.clone();
    if let Some(o) = &omni {
        o.prepare_spec(&mut spec);
    }
    spec.extension.tcp_info_ms = remote_tcp_info(config, &spec, omni.as_ref());
    let kind = ClassicKind::from_test_name(&g.test_name).unwrap_or_else(|| kind_of(&spec));
    // --flows: a socket per flow must fit under the open-file limit.
    if spec.extension.flows > 0 {
        if let Err(why) = netperf_base::rlimit::room_for_flows(spec.extension.flows) {
            eprintln!("netperf: --flows: {why}");
            return 2;
        }
    }
    // --mptcp: a kernel that opens no MPTCP socket stops us before the test.
    if spec.extension.mptcp {
        if let Err(why) = netperf_data::net::mptcp::available() {
            eprintln!("netperf: --mptcp: {why}");
            return 2;
        }
    }
    let store = match prepare(config) {
        Ok(store) => store,
        Err(code) => return code,
    };
    // --latency-histogram: a file that cannot be created stops us before
    // the test too.
    let latency_file = match super::latency_file::LatencyFile::create(config) {
        Ok(file) => file,
        Err(code) => return code,
    };
    // --report: likewise, and the page wants every fact of both ends.
    let report_file = match super::report_file::ReportFile::create(config) {
        Ok(file) => file,
        Err(code) => return code,
    };
    if report_file.is_some() {
        spec.extension.system_facts = true;
    }
    let samples_file = match super::output_file::OutputFile::create(
        config.test.flow_samples.as_deref(),
        "--flow-samples",
    ) {
        Ok(file) => file,
        Err(code) => return code,
    };
    match run_iterations(config, &spec, kind, omni.as_ref()) {
        Ok(finished) => {
            super::out(&finished.text);
            let reported = match (report_file, &finished.report) {
                (Some(file), Some(r)) => file.finish(
                    config,
                    &super::report_file::Drawn {
                        last: &r.last,
                        result: r.result,
                        text: &finished.text,
                        record: &r.record,
                    },
                ),
                (Some(file), None) => {
                    file.abandon();
                    0
                }
                (None, _) => 0,
            };
            let stored = match store {
                Some(store) => store.finish(config, finished.stored.as_ref()),
                None => 0,
            };
            let written = match latency_file {
                Some(file) => file.finish(finished.latency.as_ref()),
                None => 0,
            };
            let sampled = match samples_file {
                Some(file) => file.finish(|path| match &finished.flow_samples {
                    Some(csv) => std::fs::write(path, csv).map_err(|e| e.to_string()),
                    None => Err("the test kept no flow samples".into()),
                }),
                None => 0,
            };
            stored.max(written).max(reported).max(sampled)
        }
        Err(e) => {
            let _ = std::io::stdout().flush();
            eprintln!("{e}");
            if let Some(file) = latency_file {
                file.abandon();
            }
            if let Some(file) = report_file {
                file.abandon();
            }
            if let Some(file) = samples_file {
                file.abandon();
            }
            e.exit_status(EXIT_FAILURE)
        }
    }
}

/// -D: sample every |interval| seconds (a negative interval asks netperf
/// for tight timing; ours is always timed by the clock), printed in the
/// style of the omni output if one was chosen.
fn interim_options(
    config: &Config,
    spec: &TestSpec,
    omni: Option<&OmniOutput>,
) -> Option<InterimOptions> {
    let seconds = config.global.interim_interval?.abs();
    let style = match omni.map(|o| o.style) {
        Some(Style::Csv) => InterimStyle::Csv,
        Some(Style::Keyval) => InterimStyle::Keyval,
        Some(Style::Json) => InterimStyle::Silent,
        _ => InterimStyle::Human,
    };
    let columns = omni.map_or_else(Vec::new, |o| o.selection.tcp_columns());
    let deferred = columns.iter().any(|s| s.need == Need::RemoteTcpInfo);
    Some(InterimOptions {
        interval: Duration::try_from_secs_f64(seconds).unwrap_or(Duration::from_secs(1)),
        style,
        unit: interim_unit(config, spec, omni),
        next_index: Default::default(),
        test_end: match spec.limit {
            netperf_data::spec::Limit::Seconds(s) if s > 0 => {
                Some(Duration::from_secs(u64::from(s)))
            }
            _ => None,
        },
        tcp_info_fd: None,
        // Ours alone: never at a stock -v level (bloat.sh reads field 10 of
        // every line with "Interim" in it).
        tcp_lines: config.test.tcp_info,
        columns,
        deferred,
    })
}

/// The unit of the interim lines: the output's, but for classic TCP_CC,
/// which netperf never moved to omni: its interim lines rate transactions
/// in -f's unit (10^6bits/s unless -f says otherwise, as if each were a
/// byte), and a script reading them reads that.
fn interim_unit(config: &Config, spec: &TestSpec, omni: Option<&OmniOutput>) -> char {
    match (spec.test, omni) {
        (TestName::TcpCc, None) => config.global.format_units,
        _ => super::omni::resolved_unit(config, spec),
    }
}

/// What to ask our netserver of its TCP_INFO: per -D interval when the
/// interims show it (--tcp-info, -J, a REMOTE_TCP_* column), over the whole test
/// for a REMOTE_TCP_* selector without -D; nothing otherwise, so that the
/// request stays netperf's.
fn remote_tcp_info(config: &Config, spec: &TestSpec, omni: Option<&OmniOutput>) -> Option<u32> {
    let g = &config.global;
    let interval = g
        .interim_interval
        .and_then(|s| Duration::try_from_secs_f64(s.abs()).ok());
    let selected = omni.is_some_and(|o| o.selection.needs(Need::RemoteTcpInfo));
    let json = omni.is_some_and(|o| o.style == Style::Json);
    let shown = selected || (interval.is_some() && (config.test.tcp_info || json));
    netperf_client::control::remote_tcp::ask(spec, interval, shown)
}

/// The classic test whose figures (and confidence rules) an omni test shares.
fn kind_of(spec: &TestSpec) -> ClassicKind {
    use netperf_data::spec::Protocol::{Tcp, Udp};
    match (spec.protocol, spec.xmit(), spec.recv(), spec.connection) {
        (_, _, _, true) if spec.direction == 0 => ClassicKind::TcpCc,
        (_, _, _, true) => ClassicKind::TcpCrr,
        (Tcp, true, true, _) => ClassicKind::TcpRr,
        (Udp, true, true, _) => ClassicKind::UdpRr,
        (Tcp, false, true, _) => ClassicKind::TcpMaerts,
        (Udp, _, _, _) => ClassicKind::UdpStream,
        (Tcp, _, _, _) => ClassicKind::TcpStream,
    }
}

/// A finished test: its output, and with --store the record and the
/// selection whose values are stored (what the output reported).
struct Finished {
    text: String,
    /// `--flow-samples`' rows of the reported iteration.
    flow_samples: Option<String>,
    stored: Option<(OmniRecord, Selection)>,
    /// The reported iteration's latency recording, when one was kept.
    latency: Option<super::latency_file::Recorded>,
    /// What `--report` draws, when asked for.
    report: Option<ReportInput>,
}

/// The last iteration, its figure and its record with every fact.
struct ReportInput {
    last: Iteration,
    result: f64,
    record: OmniRecord,
}

fn run_iterations(
    config: &Config,
    spec: &TestSpec,
    kind: ClassicKind,
    omni: Option<&OmniOutput>,
) -> Result<Finished, ClientError> {
    let g = &config.global;
    let mut chan = open_control(g)?;
    let spec = &in_control_family(spec, chan.as_ref());
    if g.print_headers {
        super::out(&render_banner(&banner(config, spec, kind)?));
        let _ = std::io::stdout().flush();
    }
    let mut opts = classic_options(g);
    if omni.is_some() {
        // Each iteration's figures in the omni output's unit: a
        // request/response test's THROUGHPUT is its transaction rate.
        opts.unit = super::omni::resolved_unit(config, spec);
    }
    let run = run_options(config, spec, omni);
    let explicit_remote = config.test.data_host.is_some();
    let mut rounds = Rounds::new(config, spec);
    while rounds.go_on() {
        let it = client::run_iteration(chan.as_mut(), spec, &run, explicit_remote)?;
        rounds.add(HeadlineFigures::from_outcome(kind, &it.outcome, &opts), it);
    }
    if let Some(chan) = chan {
        chan.shutdown();
    }
    let widths = rounds.summarize(&mut opts);
    let test = Test {
        config,
        spec,
        kind,
        omni,
    };
    Ok(finish(&test, &opts, rounds, widths))
}

/// The test with its data endpoints resolved in the control connection's
/// family when the test names none (-4/-6, or -H/-L name,fam): netperf's
/// complete_addrinfos takes the control connection's family then, so
/// `-H 127.0.0.1 -- -H ::1` is refused there as here rather than run over
/// IPv6.
pub(super) fn in_control_family(spec: &TestSpec, chan: Option<&Channel>) -> TestSpec {
    use netperf_data::net::resolve::Family;
    let mut spec = spec.clone();
    if spec.data_family == Family::Unspec {
        if let Some(peer) = chan.and_then(Channel::peer) {
            spec.data_family = match peer {
                SocketAddr::V4(_) => Family::Inet,
                SocketAddr::V6(_) => Family::Inet6,
            };
        }
    }
    spec
}

/// The control connection, with netperf's -d; none with -N, where only the
/// data connection goes to an inetd service.
pub(super) fn open_control(g: &GlobalOptions) -> Result<Option<Channel>, ClientError> {
    if g.no_control {
        return Ok(None);
    }
    let mut chan = client::establish(g)?;
    chan.set_debug(g.debug);
    Ok(Some(chan))
}

/// The classic result block's options as the command line sets them.
fn classic_options(g: &GlobalOptions) -> ClassicOptions {
    ClassicOptions {
        print_headers: g.print_headers,
        verbosity: g.verbosity,
        unit: g.format_units,
        brand: g.brand.clone(),
        local_cpu: g.local_cpu,
        remote_cpu: g.remote_cpu,
        confidence_warning: None,
        averaged: None,
    }
}

/// What each iteration runs with: the command line's options, the omni
/// output's wants, -D's sampling, and for `--report` both ends' interfaces
/// and drivers.
fn run_options(config: &Config, spec: &TestSpec, omni: Option<&OmniOutput>) -> RunOptions {
    let mut run = RunOptions::from_global(&config.global);
    if let Some(o) = omni {
        o.prepare_run(&mut run, spec);
    }
    run.interim = interim_options(config, spec, omni);
    if config.test.report.is_some() {
        // The page names both ends' interfaces and drivers.
        run.extra_flags |=
            netperf_wire::omni::flag::WANT_IFNAME | netperf_wire::omni::flag::WANT_DRVINFO;
    }
    run
}

/// A run's iterations (-i max,min; one without it): the confidence their
/// figures build, each one's headline figures, and the last iteration.
struct Rounds {
    min: u32,
    max: u32,
    confidence: Confidence,
    /// TCP_CC and TCP_SENDFILE count iterations as netperf's classic loop.
    classic_loop: bool,
    /// Whether -c and -C measured each end's CPU (its figure counts then).
    local_cpu: bool,
    remote_cpu: bool,
    /// The number of the next iteration, from 1.
    iteration: u32,
    figures: Vec<HeadlineFigures>,
    last: Option<Iteration>,
    /// Every iteration's latency samples: netperf keeps one histogram for
    /// the whole run (HIST_purge between iterations forgets only the
    /// requests in flight), so -j's figures and -v 2's histogram cover all
    /// iterations.
    samples: Option<Histogram>,
}

impl Rounds {
    fn new(config: &Config, spec: &TestSpec) -> Rounds {
        let g = &config.global;
        let (min, max) = if g.iterations_max > 1 {
            (g.iterations_min.max(1), g.iterations_max)
        } else {
            (1, 1)
        };
        Rounds {
            min,
            max,
            confidence: Confidence::new(g.confidence_level, g.confidence_width)
                .with_result_only(g.result_confidence_only),
            classic_loop: matches!(spec.test, TestName::TcpCc | TestName::TcpSendfile),
            local_cpu: g.local_cpu,
            remote_cpu: g.remote_cpu,
            iteration: 1,
            figures: Vec::new(),
            last: None,
            samples: None,
        }
    }

    /// Whether another iteration runs: the first always does, the others
    /// until the confidence interval is met or the most have run. A stop
    /// signal ends the run after the iteration it cut short.
    fn go_on(&self) -> bool {
        let (iteration, min, max) = (self.iteration, self.min, self.max);
        let go_on = if self.classic_loop {
            self.confidence.should_continue_classic(iteration, min, max)
        } else {
            self.confidence.should_continue(iteration, min, max)
        };
        !((!go_on || netperf_data::engine::signals::stop_requested()) && self.last.is_some())
    }

    /// Count an iteration and its headline figures `f`.
    fn add(&mut self, f: HeadlineFigures, it: Iteration) {
        let cpu = |measured: bool, v: f64| if measured { v } else { -1.0 };
        self.confidence.add(
            f.throughput,
            cpu(self.local_cpu, f.local_cpu_util),
            cpu(self.remote_cpu, f.remote_cpu_util),
        );
        self.figures.push(f);
        if let Some(h) = &it.histogram {
            match &mut self.samples {
                Some(all) => all.merge(h),
                None => self.samples = Some(h.clone()),
            }
        }
        self.last = Some(it);
        self.iteration += 1;
    }

    /// A confidence run's summary: the mean figures into `opts`, with the
    /// warning when the interval was not met, and the interval widths.
    fn summarize(&self, opts: &mut ClassicOptions) -> Option<(f64, f64, f64)> {
        if self.max <= 1 {
            return None;
        }
        opts.averaged = HeadlineFigures::mean(&self.figures);
        let (t, l, r) = self.confidence.interval_widths();
        if should_warn(self.max, self.confidence.met()) {
            opts.confidence_warning = Some(ConfidenceWidths {
                throughput: t,
                local_cpu: l,
                remote_cpu: r,
            });
        }
        Some((t, l, r))
    }
}

/// `--mptcp`'s line after the classic block: the subflows at each end and
/// what each of ours carried.
fn mptcp_line(o: &Outcome) -> String {
    let count = |side: &netperf_data::measure::outcome::SideStats| {
        side.mptcp
            .as_ref()
            .map_or("unknown".to_string(), |s| s.total.to_string())
    };
    let carried: Vec<String> = o
        .local
        .mptcp
        .iter()
        .flat_map(|s| &s.each)
        .map(|f| format!("{}/{}", f.bytes_acked, f.bytes_received))
        .collect();
    format!(
        "MPTCP subflows: {} here, {} at netserver; bytes acked/received by each of ours: {}\n",
        count(&o.local),
        count(&o.remote),
        carried.join(" ")
    )
}

/// The test a run repeated, and how it is reported.
struct Test<'a> {
    config: &'a Config,
    spec: &'a TestSpec,
    kind: ClassicKind,
    omni: Option<&'a OmniOutput>,
}

/// The finished run: its output from the last iteration and the summary,
/// with what `--store`, `--latency-histogram` and `--report` take.
fn finish(
    test: &Test,
    opts: &ClassicOptions,
    rounds: Rounds,
    widths: Option<(f64, f64, f64)>,
) -> Finished {
    let Rounds {
        figures,
        last,
        samples,
        ..
    } = rounds;
    let Some(mut last) = last else {
        return Finished {
            text: render_classic(test.kind, &Outcome::default(), opts),
            flow_samples: None,
            stored: None,
            latency: None,
            report: None,
        };
    };
    if let (Some(all), true) = (samples, figures.len() > 1) {
        last.outcome.histogram = Some(all.to_outcome());
    }
    let latency = take_latency(&mut last);
    let flow_samples = last.flows.as_ref().map(|f| f.samples_csv());
    let measured = Measured {
        last: &last,
        iterations: figures.len() as u32,
        averaged: opts.averaged,
        widths,
    };
    let (config, spec) = (test.config, test.spec);
    let report_record = config.test.report.is_some().then(|| {
        super::omni::record(
            &netperf_client::report::omni::select::all(),
            config,
            spec,
            &measured,
        )
    });
    let (mut text, stored) = render(test, opts, &measured);
    if spec.extension.mptcp && test.omni.is_none() && config.global.verbosity > 0 {
        text.push_str(&mptcp_line(&last.outcome));
    }
    let report = report_record.map(|record| ReportInput {
        result: figures.last().map_or(0.0, |f| f.throughput),
        last,
        record,
    });
    Finished {
        text,
        flow_samples,
        stored,
        latency,
        report,
    }
}

/// The last iteration's latency recording, for `--latency-histogram`.
fn take_latency(last: &mut Iteration) -> Option<super::latency_file::Recorded> {
    last.histogram
        .take()
        .map(|h| super::latency_file::Recorded {
            recorder: h.into_latency(),
            started: last.data_started,
            elapsed: Duration::try_from_secs_f64(last.outcome.elapsed).unwrap_or_default(),
        })
}

/// The output (the omni output, or the classic block), and with `--store`
/// the record and selection stored: what the output showed, the omni
/// selection or for the classic block the omni default of the same test
/// (its figures).
fn render(
    test: &Test,
    opts: &ClassicOptions,
    measured: &Measured,
) -> (String, Option<(OmniRecord, Selection)>) {
    let (config, spec) = (test.config, test.spec);
    let store_selection = config.test.store.is_some().then(|| match test.omni {
        Some(o) => o.selection.clone(),
        None => super::omni::default_selection(config, spec),
    });
    let (mut text, stored) = match test.omni {
        Some(o) => {
            let record = super::omni::record(&o.selection, config, spec, measured);
            let text = super::omni::render_record(o, config, spec, measured, &record);
            (text, store_selection.map(|s| (record, s)))
        }
        None => {
            let text = render_classic(test.kind, &measured.last.outcome, opts);
            let stored =
                store_selection.map(|s| (super::omni::record(&s, config, spec, measured), s));
            (text, stored)
        }
    };
    if let Some(o) = measured
        .last
        .open_loop
        .as_ref()
        .filter(|_| opts.verbosity > 1)
    {
        use netperf_client::report::omni::record::OpenLoopRecord;
        let record = OpenLoopRecord::of(o, measured.last.outcome.elapsed);
        let lines = netperf_client::report::open_loop::render_open_loop(
            &record,
            o.in_flight_at_end,
            o.max_inflight,
        );
        text.push_str(&lines);
    }
    (text, stored)
}
