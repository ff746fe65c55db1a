//! What the property tests share (the core's in shared/tests/properties.rs, the id scheme's in
//! parse/tests/ids.rs): the runner's configuration and text that breaks naive JSON or line
//! handling.

use proptest::collection::vec;
use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence, RngSeed};

/// `PROPTEST_CASES=N` raises the cases per property; a failure's seed is saved beside the test
/// file (`<test>.proptest-regressions`, to be committed).
pub fn config(default_cases: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default_cases);
    let base = ProptestConfig::default();
    // A fixed seed unless PROPTEST_RNG_SEED says otherwise (a number, or `random`): CI runs the
    // same cases every time, and exploring is one variable away.
    let rng_seed = match std::env::var_os("PROPTEST_RNG_SEED") {
        Some(_) => base.rng_seed,
        None => RngSeed::Fixed(0x7467_7072_6f70),
    };
    ProptestConfig {
        cases,
        rng_seed,
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..base
    }
}

/// Characters that break naive JSON or line handling, mixed with any character at all.
pub fn tricky_char() -> impl Strategy<Value = char> {
    prop_oneof![
        3 => any::<char>(),
        2 => prop::sample::select(vec![
            '\n', '\r', '\t', '\0', '"', '\\', '/', '\u{7f}', '\u{85}', '\u{2028}', '\u{2029}',
            '\u{feff}', '\u{fffd}', '\u{10ffff}', 'é', '{', '}', ':', ',', '#',
        ]),
        5 => prop::char::range('a', 'z'),
    ]
}

pub fn text() -> impl Strategy<Value = String> {
    vec(tricky_char(), 0..24).prop_map(String::from_iter)
}
