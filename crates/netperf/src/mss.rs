//! netperf's TCP_MSS test: the maximum segment size of a TCP data
//! connection to netserver, found by opening one (as a TCP_STREAM's) and
//! closing it at once; printed as netperf 2.7.1's nettest_bsd.c prints it,
//! so that scripts sizing their tests from `-P 0 -v 0` read the same
//! "32741 " line.

use super::classic;
use netperf_client::cli::config::Config;
use netperf_client::control::client::{self, RunOptions};
use netperf_client::report::banner::render_banner;
use netperf_data::spec::TestSpec;

/// netperf's title block, printed at -v 1 and 2 with headers.
const TITLE: &str = "Maximum\nSegment\nSize (bytes)\n\n";

/// Run TCP_MSS; returns the exit status.
pub fn run(config: &Config) -> i32 {
    // The test is a TCP_STREAM's setup: its request, its data socket.
    let mut stream = config.clone();
    stream.global.test_name = "TCP_STREAM".to_string();
    let spec = match stream.test_spec() {
        Ok(spec) => spec,
        Err(e) => {
            eprintln!("{e}");
            return 1;
        }
    };
    let g = &config.global;
    if g.no_control && spec.remote_data_port == 0 {
        // No inetd service answers a TCP_MSS: netperf asks for a port.
        super::out(&format!(
            "No default port known for the {} test, please set one yourself\n",
            g.test_name
        ));
        return super::EXIT_FAILURE;
    }
    match measure(config, &spec) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("{e}");
            e.exit_status(super::EXIT_FAILURE)
        }
    }
}

fn measure(config: &Config, spec: &TestSpec) -> Result<(), client::ClientError> {
    let g = &config.global;
    let mut chan = classic::open_control(g)?;
    let spec = classic::in_control_family(spec, chan.as_ref());
    if g.print_headers {
        let mut banner = classic::banner(
            config,
            &spec,
            netperf_client::report::ClassicKind::TcpStream,
        )?;
        banner.title = "TCP MSS TEST".to_string();
        super::out(&render_banner(&banner));
    }
    let run = RunOptions::from_global(g);
    let explicit_remote = config.test.data_host.is_some();
    let mss = client::segment_size(chan.as_mut(), &spec, &run, explicit_remote)?;
    if let Some(chan) = chan {
        chan.shutdown();
    }
    super::out(&render(
        mss,
        g.verbosity,
        g.print_headers,
        g.brand.as_deref(),
    ));
    Ok(())
}

/// What netperf prints: `"%d %s\n"` (the brand only without headers), under
/// the title at -v 1 and 2 with headers; nothing at all above -v 2.
pub fn render(mss: i32, verbosity: i32, headers: bool, brand: Option<&str>) -> String {
    let brand = if headers { "" } else { brand.unwrap_or("") };
    let line = format!("{mss} {brand}\n");
    match verbosity {
        0 => line,
        1 | 2 if headers => format!("{TITLE}{line}"),
        1 | 2 => line,
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_as_netperf_at_each_level() {
        assert_eq!(render(32741, 0, false, None), "32741 \n");
        assert_eq!(render(32741, 0, false, Some("b")), "32741 b\n");
        assert_eq!(render(32741, 0, true, Some("b")), "32741 \n");
        assert_eq!(
            render(1448, 1, true, None),
            "Maximum\nSegment\nSize (bytes)\n\n1448 \n"
        );
        assert_eq!(render(1448, 2, false, None), "1448 \n");
        assert_eq!(render(1448, 3, true, None), "");
    }
}
