#![no_main]
//! cargo-fuzz target; the checks live in `tg_fuzz::rust` (shared with the stable runner).

libfuzzer_sys::fuzz_target!(|data: &[u8]| tg_fuzz::rust(data));
