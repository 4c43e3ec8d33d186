//! A scripted client against a live netserver session over loopback TCP
//! (netperf_ng::fuzzing::session has the script format).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    netperf_ng::fuzzing::session::run_input(data);
});
