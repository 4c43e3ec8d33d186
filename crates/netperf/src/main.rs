//! netperf: run one test against a netserver and print netperf 2.7.1's output.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(netperf::main(&args));
}
