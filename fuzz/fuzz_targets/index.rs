#![no_main]
//! cargo-fuzz target; the checks live in `tg_fuzz::index` (shared with the stable runner).

libfuzzer_sys::fuzz_target!(|data: &[u8]| tg_fuzz::index(data));
