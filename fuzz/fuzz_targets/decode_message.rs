//! Any bytes as one control message through every decoder, encoder and the
//! server's omni validation (netperf_ng::fuzzing::decode).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    netperf_ng::fuzzing::decode::check_message(data);
});
