//! tg-fuzz: a mutational fuzzer for the stable toolchain (cargo-fuzz needs nightly flags).
//!
//! ```text
//! tg-fuzz TARGET --seconds N [--seed S] [--corpus DIR] [--artifacts DIR] [--runs N]
//!                [--timeout S] [--max-len BYTES] [--stack-kib K] [--keep-going]
//! tg-fuzz TARGET --replay PATH...
//! ```
//!
//! It runs every file of the corpus (`corpus/TARGET/` by default), then mutates them for N
//! seconds with a seeded PRNG: bit flips, byte edits, inserted and deleted ranges, splices of
//! two entries, tokens of the target's grammar, deep nesting runs, indentation ladders, invalid
//! UTF-8, line-ending changes and interesting numbers. The same seed gives the same inputs in
//! the same order. There is no coverage feedback: it is blind, but fast and dictionary-driven.
//!
//! Each input is written to `ARTIFACTS/TARGET/current` before it runs, in a worker process
//! that a supervisor (this same executable) watches: a panic is saved as `crash-<hash>` by the
//! worker, an abort or stack overflow (the worker dies) by the supervisor, an input running
//! longer than `--timeout` as `hang-<hash>`. Then it exits 1 (with `--keep-going`, it starts
//! a new worker with the next seed until the time is up, and exits 1 at the end). On success
//! it prints one line: target, executions, executions per second, corpus size, seed.
//!
//! The worker runs inputs on a thread with a 2 MiB stack (`--stack-kib`), as tg-extract's
//! rayon workers do, so a recursion that would overflow there overflows here.
#![forbid(unsafe_code)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tg_fuzz::{target, Grammar, Target, TARGETS};

const USAGE: &str =
    "usage: tg-fuzz TARGET --seconds N [--seed S] [--corpus DIR] [--artifacts DIR] [--runs N]
                [--timeout S] [--max-len BYTES] [--stack-kib K] [--keep-going]
       tg-fuzz TARGET --replay PATH...";

struct Options {
    target: &'static Target,
    seconds: f64,
    seed: u64,
    corpus: PathBuf,
    /// `ARTIFACTS/TARGET`.
    artifacts: PathBuf,
    /// Stop after this many executions (0: only the time bounds the run).
    runs: u64,
    timeout: Duration,
    max_len: usize,
    stack_kib: usize,
    keep_going: bool,
    /// Internal: this process is the worker.
    worker: bool,
    /// Internal: skip the corpus pass (a worker restarted after a crash).
    no_replay: bool,
    replay: Vec<PathBuf>,
}

fn parse_args() -> Result<Options, String> {
    let mut args = std::env::args().skip(1);
    let name = args.next().ok_or("no target")?;
    if name == "-h" || name == "--help" {
        return Err(String::new());
    }
    let target = target(&name).ok_or_else(|| {
        let names: Vec<&str> = TARGETS.iter().map(|t| t.name).collect();
        format!("unknown target `{name}` (targets: {})", names.join(", "))
    })?;
    let here = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut options = Options {
        target,
        seconds: 0.0,
        seed: SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64 % 1_000_000_007),
        corpus: here.join("corpus").join(name.as_str()),
        artifacts: here.join("artifacts"),
        runs: 0,
        timeout: Duration::from_secs(10),
        max_len: 256 << 10,
        stack_kib: 2048,
        keep_going: false,
        worker: false,
        no_replay: false,
        replay: Vec::new(),
    };
    let mut seconds = None;
    while let Some(arg) = args.next() {
        let mut value = |what: &str| args.next().ok_or(format!("{arg} needs {what}"));
        let number = |text: String| {
            text.parse::<u64>()
                .map_err(|_| format!("{arg}: not a number: {text}"))
        };
        match arg.as_str() {
            "--seconds" => {
                let text = value("a number of seconds")?;
                seconds = Some(
                    text.parse::<f64>()
                        .map_err(|_| format!("--seconds: not a number: {text}"))?,
                );
            }
            "--seed" => options.seed = number(value("a number")?)?,
            "--corpus" => options.corpus = PathBuf::from(value("a directory")?),
            "--artifacts" => options.artifacts = PathBuf::from(value("a directory")?),
            "--runs" => options.runs = number(value("a number")?)?,
            "--timeout" => options.timeout = Duration::from_secs(number(value("seconds")?)?),
            "--max-len" => options.max_len = number(value("bytes")?)? as usize,
            "--stack-kib" => options.stack_kib = number(value("KiB")?)? as usize,
            "--keep-going" => options.keep_going = true,
            "--worker" => options.worker = true,
            "--no-replay" => options.no_replay = true,
            "--replay" => {
                options.replay.extend(args.by_ref().map(PathBuf::from));
                if options.replay.is_empty() {
                    return Err("--replay needs files or directories".into());
                }
            }
            _ => return Err(format!("unknown argument `{arg}`")),
        }
    }
    options.artifacts = options.artifacts.join(name.as_str());
    match seconds {
        Some(s) if s >= 0.0 => options.seconds = s,
        Some(_) => return Err("--seconds must not be negative".into()),
        None if options.replay.is_empty() => return Err("--seconds is required".into()),
        None => {}
    }
    Ok(options)
}

fn main() -> ExitCode {
    let options = match parse_args() {
        Ok(options) => options,
        Err(message) => {
            if !message.is_empty() {
                eprintln!("tg-fuzz: {message}");
            }
            eprintln!("{USAGE}");
            return ExitCode::from(2);
        }
    };
    if let Err(err) = fs::create_dir_all(&options.artifacts) {
        eprintln!(
            "tg-fuzz: cannot create {}: {err}",
            options.artifacts.display()
        );
        return ExitCode::from(2);
    }
    if !options.replay.is_empty() {
        replay(&options)
    } else if options.worker {
        worker(&options)
    } else {
        supervise(&options)
    }
}

/// FNV-1a, for artifact names.
fn fnv(data: &[u8]) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in data {
        hash ^= u64::from(b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// Saves `data` as `ARTIFACTS/TARGET/<kind>-<hash>` and returns its path.
fn save(options: &Options, kind: &str, data: &[u8]) -> PathBuf {
    let path = options.artifacts.join(format!("{kind}-{}", fnv(data)));
    if let Err(err) = fs::write(&path, data) {
        eprintln!("tg-fuzz: cannot write {}: {err}", path.display());
    }
    path
}

fn current(options: &Options) -> PathBuf {
    options.artifacts.join("current")
}

fn progress(options: &Options) -> PathBuf {
    options.artifacts.join("progress")
}

/// Runs workers until the time is up (or the first crash without `--keep-going`), then prints
/// the figures.
fn supervise(options: &Options) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(err) => {
            eprintln!("tg-fuzz: cannot find my own executable: {err}");
            return ExitCode::from(2);
        }
    };
    let start = Instant::now();
    let corpus_size = load_corpus(&options.corpus).len();
    let (mut execs, mut crashes, mut seed) = (0u64, 0u32, options.seed);
    for round in 0.. {
        let left = options.seconds - start.elapsed().as_secs_f64();
        if round > 0 && left <= 0.0 {
            break;
        }
        let _ = fs::remove_file(progress(options));
        let mut command = Command::new(&exe);
        command
            .arg(options.target.name)
            .args(["--worker", "--seconds", &format!("{:.3}", left.max(0.0))])
            .args(["--seed", &seed.to_string()])
            .arg("--corpus")
            .arg(&options.corpus)
            .arg("--artifacts")
            .arg(options.artifacts.parent().unwrap_or(Path::new(".")))
            .args(["--runs", &options.runs.saturating_sub(execs).to_string()])
            .args(["--timeout", &options.timeout.as_secs().to_string()])
            .args(["--max-len", &options.max_len.to_string()])
            .args(["--stack-kib", &options.stack_kib.to_string()])
            .stdin(Stdio::null());
        if round > 0 {
            command.arg("--no-replay");
        }
        let status = match command.status() {
            Ok(status) => status,
            Err(err) => {
                eprintln!("tg-fuzz: cannot start a worker: {err}");
                return ExitCode::from(2);
            }
        };
        execs += fs::read_to_string(progress(options))
            .ok()
            .and_then(|t| t.trim().parse::<u64>().ok())
            .unwrap_or(0);
        match status.code() {
            Some(0) => break,
            // The worker saved the input (a panic, or a hang) and said why.
            Some(1) | Some(3) => crashes += 1,
            _ => {
                crashes += 1;
                let input = fs::read(current(options)).unwrap_or_default();
                let path = save(options, "crash", &input);
                eprintln!(
                    "tg-fuzz: {}: the worker died ({status}) on an input of {} bytes, saved as {} (seed {seed})",
                    options.target.name,
                    input.len(),
                    path.display()
                );
            }
        }
        if !options.keep_going || (options.runs > 0 && execs >= options.runs) {
            break;
        }
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
    }
    let elapsed = start.elapsed().as_secs_f64();
    println!(
        "{}: {execs} executions in {elapsed:.1} s ({:.0} execs/s), corpus {corpus_size}, seed {}, crashes {crashes}",
        options.target.name,
        execs as f64 / elapsed.max(1e-9),
        options.seed
    );
    if crashes == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// The files of a corpus directory, by name (missing: empty).
fn load_corpus(dir: &Path) -> Vec<Vec<u8>> {
    let mut paths: Vec<PathBuf> = fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    paths.sort();
    paths.iter().filter_map(|p| fs::read(p).ok()).collect()
}

struct Shared {
    execs: AtomicU64,
    /// Milliseconds since `start` at which the running input started, plus one; 0 when idle.
    running_since: AtomicU64,
    start: Instant,
}

impl Shared {
    fn now_ms(&self) -> u64 {
        self.start.elapsed().as_millis() as u64 + 1
    }
}

fn write_progress(options: &Options, shared: &Shared) {
    let _ = fs::write(
        progress(options),
        shared.execs.load(Ordering::Relaxed).to_string(),
    );
}

/// Runs one input; `Err` if it panicked.
fn execute(options: &Options, shared: &Shared, input: &[u8]) -> Result<(), ()> {
    if let Err(err) = fs::write(current(options), input) {
        eprintln!("tg-fuzz: cannot write the current input: {err}");
    }
    shared
        .running_since
        .store(shared.now_ms(), Ordering::SeqCst);
    let run = options.target.run;
    let outcome = std::panic::catch_unwind(|| run(input));
    shared.running_since.store(0, Ordering::SeqCst);
    shared.execs.fetch_add(1, Ordering::Relaxed);
    outcome.map_err(|_| ())
}

fn worker(options: &Options) -> ExitCode {
    let shared = Arc::new(Shared {
        execs: AtomicU64::new(0),
        running_since: AtomicU64::new(0),
        start: Instant::now(),
    });
    // The watchdog: progress for the supervisor, and hangs.
    {
        let shared = Arc::clone(&shared);
        let options = Options {
            replay: Vec::new(),
            corpus: options.corpus.clone(),
            artifacts: options.artifacts.clone(),
            ..*options
        };
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_millis(100));
            write_progress(&options, &shared);
            let since = shared.running_since.load(Ordering::SeqCst);
            if since != 0 && shared.now_ms() - since > options.timeout.as_millis() as u64 {
                let input = fs::read(current(&options)).unwrap_or_default();
                let path = save(&options, "hang", &input);
                eprintln!(
                    "tg-fuzz: {}: an input of {} bytes ran longer than {} s, saved as {} (seed {})",
                    options.target.name,
                    input.len(),
                    options.timeout.as_secs(),
                    path.display(),
                    options.seed
                );
                std::process::exit(3);
            }
        });
    }
    let corpus = load_corpus(&options.corpus);
    let outcome = std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .name(format!("fuzz-{}", options.target.name))
            .stack_size(options.stack_kib << 10)
            .spawn_scoped(scope, || fuzz_loop(options, &shared, &corpus));
        match handle {
            Ok(handle) => handle.join().unwrap_or(Err(Vec::new())),
            Err(err) => {
                eprintln!("tg-fuzz: cannot start the fuzzing thread: {err}");
                Err(Vec::new())
            }
        }
    });
    write_progress(options, &shared);
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(input) => {
            let path = save(options, "crash", &input);
            eprintln!(
                "tg-fuzz: {}: panic on an input of {} bytes, saved as {} (seed {})",
                options.target.name,
                input.len(),
                path.display(),
                options.seed
            );
            ExitCode::from(1)
        }
    }
}

/// The corpus, then mutations until the time or the run count is up; `Err(input)` on a panic.
fn fuzz_loop(options: &Options, shared: &Shared, corpus: &[Vec<u8>]) -> Result<(), Vec<u8>> {
    let deadline = Duration::from_secs_f64(options.seconds);
    let done = |shared: &Shared| {
        shared.start.elapsed() >= deadline
            || (options.runs > 0 && shared.execs.load(Ordering::Relaxed) >= options.runs)
    };
    if !options.no_replay {
        for input in corpus {
            execute(options, shared, input).map_err(|()| input.clone())?;
        }
    }
    let empty = [Vec::new()];
    let pool = if corpus.is_empty() {
        &empty[..]
    } else {
        corpus
    };
    let mut rng = Rng::new(options.seed);
    while !done(shared) {
        let input = mutate(&mut rng, pool, &options.target.grammar, options.max_len);
        execute(options, shared, &input).map_err(|()| input)?;
    }
    Ok(())
}

fn replay(options: &Options) -> ExitCode {
    let mut files = Vec::new();
    for path in &options.replay {
        if path.is_dir() {
            let mut inside: Vec<PathBuf> = fs::read_dir(path)
                .map(|e| e.filter_map(|e| e.ok().map(|e| e.path())).collect())
                .unwrap_or_default();
            inside.sort();
            files.extend(inside.into_iter().filter(|p| p.is_file()));
        } else {
            files.push(path.clone());
        }
    }
    let shared = Shared {
        execs: AtomicU64::new(0),
        running_since: AtomicU64::new(0),
        start: Instant::now(),
    };
    let failed = std::thread::scope(|scope| {
        let handle = std::thread::Builder::new()
            .stack_size(options.stack_kib << 10)
            .spawn_scoped(scope, || {
                let mut failed = 0;
                for file in &files {
                    let Ok(input) = fs::read(file) else {
                        eprintln!("tg-fuzz: cannot read {}", file.display());
                        failed += 1;
                        continue;
                    };
                    eprintln!("tg-fuzz: {}: {}", options.target.name, file.display());
                    if execute(options, &shared, &input).is_err() {
                        eprintln!("tg-fuzz: FAILED {}", file.display());
                        failed += 1;
                    }
                }
                failed
            });
        handle.map_or(1, |h| h.join().unwrap_or(1))
    });
    println!(
        "{}: replayed {} inputs, {failed} failed",
        options.target.name,
        files.len()
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// xorshift64*: small, fast and deterministic.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        let mut rng = Rng((seed ^ 0x9e37_79b9_7f4a_7c15) | 1);
        for _ in 0..4 {
            rng.next();
        }
        rng
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// Uniform in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    /// `1..=max`, small numbers far more often (log-uniform).
    fn size(&mut self, max: usize) -> usize {
        let bits = usize::BITS - max.leading_zeros();
        let limit = 1usize << self.below(bits as usize + 1);
        1 + self.below(limit.min(max))
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> Option<&'a T> {
        items.get(self.below(items.len()))
    }
}

const INTERESTING_BYTES: &[u8] = &[
    0, 1, 0x7f, 0x80, 0xff, b'\n', b'\r', b'\t', b' ', b'"', b'\'', b'\\', b'{', b'}', b'(', b')',
    b'[', b']', b':', b'#', b'*', b'/',
];
const INVALID_UTF8: &[&[u8]] = &[
    b"\xff",
    b"\xc3",
    b"\xc0\x80",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
    b"\xe2\x82",
    b"\xef\xbb\xbf",
];
const NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1",
    "255",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "18446744073709551615",
    "18446744073709551616",
    "1e999",
    "-0.0",
    "9007199254740993",
    "0.23265695946913206",
];

/// A mutated copy of a corpus entry: one to eight edits.
fn mutate(rng: &mut Rng, corpus: &[Vec<u8>], grammar: &Grammar, max_len: usize) -> Vec<u8> {
    let mut data = corpus[rng.below(corpus.len())].clone();
    let steps = rng.size(8);
    for _ in 0..steps {
        edit(rng, &mut data, corpus, grammar);
        data.truncate(max_len);
    }
    data
}

fn insert(data: &mut Vec<u8>, at: usize, what: &[u8]) {
    data.splice(at..at, what.iter().copied());
}

fn edit(rng: &mut Rng, data: &mut Vec<u8>, corpus: &[Vec<u8>], grammar: &Grammar) {
    let len = data.len();
    let at = rng.below(len + 1);
    match rng.below(16) {
        0 if len > 0 => {
            let i = rng.below(len);
            data[i] ^= 1 << rng.below(8);
        }
        1 if len > 0 => {
            let i = rng.below(len);
            data[i] = match rng.pick(INTERESTING_BYTES) {
                Some(&b) if rng.one_in(2) => b,
                _ => rng.next() as u8,
            };
        }
        2 => {
            let bytes: Vec<u8> = (0..rng.size(8)).map(|_| rng.next() as u8).collect();
            insert(data, at, &bytes);
        }
        3 if len > 0 => {
            let end = (at + rng.size(64)).min(len);
            data.drain(at.min(end)..end);
        }
        4 if len > 0 => {
            let from = rng.below(len);
            let chunk = data[from..(from + rng.size(256)).min(len)].to_vec();
            insert(data, at, &chunk);
        }
        5 => {
            if let Some(other) = rng.pick(corpus) {
                let from = rng.below(other.len() + 1);
                data.truncate(at);
                data.extend_from_slice(&other[from..]);
            }
        }
        6..=8 => {
            let token: &[u8] = if !grammar.raw.is_empty() && rng.one_in(2) {
                rng.pick(grammar.raw).copied().unwrap_or_default()
            } else {
                rng.pick(grammar.tokens).map_or(&[][..], |t| t.as_bytes())
            };
            let times = if rng.one_in(8) { rng.size(64) } else { 1 };
            insert(data, at, &token.repeat(times));
        }
        9 => {
            // Deep nesting: `open` k times then `close` k times (or unbalanced).
            if let Some((open, close)) = rng.pick(grammar.pairs) {
                let most = if rng.one_in(4) { 20_000 } else { 2_000 };
                let depth = rng.size(most);
                let mut run = open.repeat(depth);
                if !rng.one_in(3) {
                    run.push_str(&close.repeat(depth));
                }
                insert(data, at, run.as_bytes());
            }
        }
        10 => {
            // An indentation ladder (Python blocks), or a newline and indentation run.
            let mut run = String::from("\n");
            match rng.pick(grammar.ladders) {
                Some(line) if rng.one_in(2) => {
                    let indent = if rng.one_in(4) { "\t" } else { "    " };
                    for i in 0..rng.size(200) {
                        run.push_str(&indent.repeat(i));
                        run.push_str(line);
                        run.push('\n');
                    }
                }
                _ => {
                    let unit = ["\n", " ", "\t", "\r\n", "\\\n"][rng.below(5)];
                    run.push_str(&unit.repeat(rng.size(4096)));
                }
            }
            insert(data, at, run.as_bytes());
        }
        11 => {
            let bad = rng.pick(INVALID_UTF8).copied().unwrap_or_default();
            insert(data, at, bad);
        }
        12 => {
            // Line endings: LF to CRLF or CR, or CRLF to LF.
            let text = std::mem::take(data);
            let mut out = Vec::with_capacity(text.len() + text.len() / 8);
            let mode = rng.below(3);
            let mut i = 0;
            while i < text.len() {
                match (mode, text[i]) {
                    (0, b'\n') => out.extend_from_slice(b"\r\n"),
                    (1, b'\n') => out.push(b'\r'),
                    (2, b'\r') if text.get(i + 1) == Some(&b'\n') => {}
                    (_, b) => out.push(b),
                }
                i += 1;
            }
            *data = out;
        }
        13 => {
            // An interesting number in place of a run of digits (or anywhere).
            let number = rng.pick(NUMBERS).copied().unwrap_or("0").as_bytes();
            let digits: Vec<usize> = data
                .iter()
                .enumerate()
                .filter(|(_, b)| b.is_ascii_digit())
                .map(|(i, _)| i)
                .collect();
            match rng.pick(&digits) {
                Some(&start) => {
                    let end = data[start..]
                        .iter()
                        .position(|b| !b.is_ascii_digit() && *b != b'.')
                        .map_or(len, |n| start + n);
                    data.splice(start..end, number.iter().copied());
                }
                None => insert(data, at, number),
            }
        }
        14 if len > 0 => {
            // A whole line copied to the start of another.
            let starts: Vec<usize> = std::iter::once(0)
                .chain(
                    data.iter()
                        .enumerate()
                        .filter(|(_, &b)| b == b'\n')
                        .map(|(i, _)| i + 1),
                )
                .filter(|&i| i <= len)
                .collect();
            let from = *rng.pick(&starts).unwrap_or(&0);
            let end = data[from..]
                .iter()
                .position(|&b| b == b'\n')
                .map_or(len, |n| from + n + 1);
            let line = data[from..end].to_vec();
            let to = *rng.pick(&starts).unwrap_or(&0);
            insert(data, to, &line);
        }
        15 => data.truncate(at),
        _ => {
            let b = rng.next() as u8;
            insert(data, at, &[b]);
        }
    }
}
