//! What every stream stage does the same way: the flags they share ([`StageArgs`],
//! [`StreamArgs`]), where its input comes from and its output goes, which records of the stream
//! are its own to replace ([`Owned`]), its summary record, progress lines and `TG_TIMINGS`
//! ([`Progress`]), how it fails (exit code, message, hint), and how it tells a complete stream
//! from one whose producer died (the last record is a `summary`: [`crate::record`]).

use crate::exit;
use crate::ndjson::{Item, NdjsonError, RecordReader};
use crate::record::{Header, Record, Summary};
use crate::store;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};

/// The flags of every stage that works on a repository's store.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StageArgs {
    /// Repository root, where `.tldrgraph/` lives and ids are relative to (default: the git top
    /// level, else the current directory).
    #[arg(long)]
    pub root: Option<PathBuf>,

    /// Print nothing on stderr but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

impl StageArgs {
    /// The working directory and the store ([`workspace`]).
    pub fn workspace(&self) -> Result<(PathBuf, crate::store::Store), Failure> {
        workspace(self.root.as_deref())
    }
}

/// The flags of a stage that reads a stream and writes it on.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StreamArgs {
    /// Read the stream from FILE instead of stdin.
    #[arg(short, long, value_name = "FILE")]
    pub input: Option<PathBuf>,

    /// Write the stream to FILE (only if its content changed) instead of stdout.
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// The records a stage appends to the stream. A stream that already holds them went through an
/// earlier run of the same stage (`tg-plan | tg-plan`, or a saved stream run again): the stage
/// drops them and writes its own, so running it twice gives what running it once does.
#[derive(Debug, Clone, Copy)]
pub struct Owned {
    /// Its summary (`"stage"`).
    pub stage: &'static str,
    /// The contract status it appends when it blocks.
    pub status: &'static str,
    /// Record types only this stage writes (tg-classify's `layer`, tg-plan's `candidate`).
    pub types: &'static [&'static str],
    /// Diagnostic codes only this stage writes.
    pub diagnostics: &'static [&'static str],
}

impl Owned {
    /// Whether `record` is this stage's own, to be dropped and written again.
    pub fn owns(&self, record: Option<&Record>) -> bool {
        match record {
            Some(Record::Summary(summary)) => summary.stage == self.stage,
            Some(Record::Status(status)) => status.status == self.status,
            Some(Record::Diagnostic(diagnostic)) => {
                self.diagnostics.contains(&diagnostic.code.as_str())
            }
            Some(record) => self.types.contains(&record.type_name()),
            None => false,
        }
    }

    /// [`Owned::owns`] for a raw line, parsing only the lines whose type could be owned (the
    /// writer puts `"type"` first, so the tag is read off the line's start).
    pub fn owns_line(&self, line: &str) -> bool {
        let Some(tag) = line
            .strip_prefix("{\"type\":\"")
            .and_then(|rest| rest.split_once('"'))
            .map(|(tag, _)| tag)
        else {
            return false;
        };
        let could = matches!(tag, "summary" | "status" | "diagnostic") || self.types.contains(&tag);
        could
            && crate::ndjson::parse_line(0, line).is_ok_and(|item| self.owns(item.record.as_ref()))
    }
}

/// A stage's summary record, the last of the stream: what it counted.
pub fn summary<K: Into<String>>(
    stage: &str,
    counts: impl IntoIterator<Item = (K, Value)>,
) -> Record {
    Record::Summary(Summary {
        stage: stage.to_string(),
        counts: counts
            .into_iter()
            .map(|(k, v)| (k.into(), v))
            .collect::<BTreeMap<String, Value>>(),
    })
}

/// A stage's progress lines on stderr (none with `--quiet`), and with `TG_TIMINGS` set the
/// time each phase ended at.
pub struct Progress {
    stage: &'static str,
    quiet: bool,
    timings: bool,
    started: std::time::Instant,
}

impl Progress {
    pub fn new(stage: &'static str, quiet: bool) -> Self {
        Progress {
            stage,
            quiet,
            timings: std::env::var_os("TG_TIMINGS").is_some(),
            started: std::time::Instant::now(),
        }
    }

    /// `<stage>: <message>` on stderr, unless quiet.
    pub fn say(&self, message: impl std::fmt::Display) {
        if !self.quiet {
            eprintln!("{}: {message}", self.stage);
        }
    }

    /// `<stage>: <phase> done at <seconds>s` on stderr, when `TG_TIMINGS` is set (quiet or not).
    pub fn phase(&self, name: &str) {
        if self.timings {
            eprintln!(
                "{}: {name} done at {:.3}s",
                self.stage,
                self.started.elapsed().as_secs_f64()
            );
        }
    }

    /// Seconds since the stage started.
    pub fn elapsed(&self) -> f64 {
        self.started.elapsed().as_secs_f64()
    }

    /// Runs `work`, which counts what it has done in the counter it is given (from any
    /// thread), and while it lasts longer than a second says each second how far it is:
    /// `<stage>: parsing 12,345 of 55,577 files (2,100/s, about 20 s left)`. Nothing when quiet.
    pub fn metered<R>(
        &self,
        (doing, what): (&str, &str),
        total: u64,
        work: impl FnOnce(&std::sync::atomic::AtomicU64) -> R,
    ) -> R {
        use std::sync::atomic::{AtomicU64, Ordering};
        use std::sync::mpsc;
        let done = AtomicU64::new(0);
        if self.quiet || total == 0 {
            return work(&done);
        }
        let (finished, wait) = mpsc::channel::<()>();
        std::thread::scope(|scope| {
            let done = &done;
            scope.spawn(move || {
                let started = std::time::Instant::now();
                // Each second without word from `work`: a line. The word (or its drop) ends it.
                while let Err(mpsc::RecvTimeoutError::Timeout) =
                    wait.recv_timeout(std::time::Duration::from_secs(1))
                {
                    let count = done.load(Ordering::Relaxed);
                    eprintln!(
                        "{}: {}",
                        self.stage,
                        meter_line(doing, what, count, total, started.elapsed())
                    );
                }
            });
            let result = work(done);
            drop(finished);
            result
        })
    }
}

/// Counts the records a stage reads and, while reading lasts longer than a second, says each
/// second in which records came how far it is: `<stage>: read 120,000 records (98,000/s)` (a
/// stream has no total, so no time left). It stops when dropped ([`Input`] drops it at the end
/// of the stream).
pub struct StreamMeter {
    count: std::sync::Arc<std::sync::atomic::AtomicU64>,
    stop: Option<std::sync::mpsc::Sender<()>>,
    ticker: Option<std::thread::JoinHandle<()>>,
}

impl StreamMeter {
    fn tick(&self) {
        self.count
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Drop for StreamMeter {
    fn drop(&mut self) {
        // Closing the channel wakes the ticker, which ends.
        self.stop.take();
        if let Some(ticker) = self.ticker.take() {
            let _ = ticker.join();
        }
    }
}

impl Progress {
    /// A meter of the records read (none when quiet).
    pub fn stream_meter(&self) -> Option<StreamMeter> {
        use std::sync::atomic::{AtomicU64, Ordering};
        use std::sync::mpsc;
        if self.quiet {
            return None;
        }
        let count = std::sync::Arc::new(AtomicU64::new(0));
        let (stop, wait) = mpsc::channel::<()>();
        let (stage, seen) = (self.stage, std::sync::Arc::clone(&count));
        let ticker = std::thread::spawn(move || {
            // A stage waiting on the stage before it stays quiet; the rate is the last line's.
            let (mut last, mut last_at) = (0u64, std::time::Instant::now());
            while let Err(mpsc::RecvTimeoutError::Timeout) =
                wait.recv_timeout(std::time::Duration::from_secs(1))
            {
                let done = seen.load(Ordering::Relaxed);
                if done == last {
                    continue;
                }
                let rate = (done - last) as f64 / last_at.elapsed().as_secs_f64().max(1e-3);
                eprintln!(
                    "{stage}: read {} records ({}/s)",
                    thousands(done),
                    thousands(rate.round() as u64)
                );
                (last, last_at) = (done, std::time::Instant::now());
            }
        });
        Some(StreamMeter {
            count,
            stop: Some(stop),
            ticker: Some(ticker),
        })
    }
}

/// `parsing 12,345 of 55,577 files (2,100/s, about 20 s left)`.
fn meter_line(
    doing: &str,
    what: &str,
    done: u64,
    total: u64,
    elapsed: std::time::Duration,
) -> String {
    let rate = done as f64 / elapsed.as_secs_f64().max(1e-3);
    let left = if rate > 0.0 {
        format!(
            "about {:.0} s left",
            total.saturating_sub(done) as f64 / rate
        )
    } else {
        "starting".to_string()
    };
    format!(
        "{doing} {} of {} {what} ({}/s, {left})",
        thousands(done),
        thousands(total),
        thousands(rate.round() as u64)
    )
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod meter_tests {
    #[test]
    fn the_line_gives_count_total_rate_and_time_left() {
        let line = super::meter_line(
            "parsing",
            "files",
            12_345,
            55_577,
            std::time::Duration::from_secs(5),
        );
        assert_eq!(
            line,
            "parsing 12,345 of 55,577 files (2,469/s, about 18 s left)"
        );
        assert_eq!(super::thousands(999), "999");
        assert_eq!(super::thousands(1_000_000), "1,000,000");
    }

    #[test]
    fn metered_work_returns_its_result() {
        let progress = super::Progress::new("tg-test", false);
        let got = progress.metered(("counting", "items"), 3, |done| {
            done.fetch_add(3, std::sync::atomic::Ordering::Relaxed);
            7
        });
        assert_eq!(got, 7);
    }
}

/// A failure that ends a stage, with its exit code and, where one helps, what to do about it.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub code: i32,
    pub message: String,
    pub hint: Option<String>,
}

impl Failure {
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        Failure {
            code,
            message: message.into(),
            hint: None,
        }
    }

    pub fn with_hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Prints the failure on stderr as `<stage>: error: <message>` and `<stage>: hint: <hint>`;
    /// `tldrgraph` reads these two lines back into its error payload.
    pub fn report(&self, stage: &str) {
        eprintln!("{stage}: error: {}", self.message);
        if let Some(hint) = &self.hint {
            eprintln!("{stage}: hint: {hint}");
        }
    }

    /// An artifact or output file that cannot be written.
    pub fn cant_write(path: &Path, err: &io::Error) -> Self {
        Failure::new(
            exit::CANT_CREATE,
            format!("cannot write {}: {err}", path.display()),
        )
    }

    /// A malformed line of the input stream.
    pub fn bad_stream(source: &str, err: &NdjsonError) -> Self {
        Failure::new(exit::DATA, format!("{source}: {err}"))
            .with_hint("the input must be a tldrgraph NDJSON stream, as tg-extract writes it")
    }

    /// An error writing the output (a closed pipe is handled by [`Output`] before this).
    pub fn write(err: io::Error) -> Self {
        Failure::new(exit::IO, format!("cannot write the output: {err}"))
    }
}

/// The working directory and the store of the repository a stage works on (`--root`, else
/// the git top level above the working directory, else the working directory).
pub fn workspace(root: Option<&Path>) -> Result<(PathBuf, crate::store::Store), Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| Failure::new(exit::IO, format!("cannot read the current directory: {e}")))?;
    let root = store::find_root(&cwd, root).map_err(|e| Failure::new(exit::NO_INPUT, e))?;
    let store =
        crate::store::Store::open_checked(&root).map_err(|e| Failure::new(exit::NO_PERM, e))?;
    Ok((cwd, store))
}

/// Ends a stage's process: exit 0, or the failure reported on stderr and its exit code. The one
/// place a stream stage exits, so `main` stays a line long.
pub fn exit_with(stage: &str, result: Result<(), Failure>) -> ! {
    let code = match result {
        Ok(()) => exit::OK,
        Err(failure) => {
            failure.report(stage);
            failure.code
        }
    };
    #[allow(clippy::exit)]
    std::process::exit(code)
}

/// The stream a stage reads: `--input FILE`, else stdin.
pub struct Input {
    /// How messages name it: the file's path, or `stdin`.
    pub name: String,
    pub reader: RecordReader<Box<dyn BufRead>>,
    meter: Option<StreamMeter>,
}

impl Input {
    pub fn open(path: Option<&Path>) -> Result<Self, Failure> {
        let (name, reader): (String, Box<dyn BufRead>) = match path {
            Some(path) => {
                let file = File::open(path).map_err(|e| {
                    Failure::new(
                        exit::NO_INPUT,
                        format!("cannot open {}: {e}", path.display()),
                    )
                })?;
                (
                    path.display().to_string(),
                    Box::new(BufReader::with_capacity(1 << 16, file)),
                )
            }
            None => (
                "stdin".to_string(),
                Box::new(BufReader::with_capacity(1 << 16, io::stdin())),
            ),
        };
        Ok(Input {
            name,
            reader: RecordReader::new(reader),
            meter: None,
        })
    }

    /// Says how far the reading is each second while it lasts ([`Progress::stream_meter`]).
    pub fn metered(mut self, progress: &Progress) -> Self {
        self.meter = progress.stream_meter();
        self
    }

    /// The next line, checked: a malformed line is a [`Failure`] naming the input and the line.
    pub fn next_item(&mut self, check: &mut StreamCheck) -> Option<Result<Item, Failure>> {
        let Some(next) = self.reader.next_item() else {
            // The end of the stream: what the stage does next is not reading.
            self.meter = None;
            return None;
        };
        if let Some(meter) = &self.meter {
            meter.tick();
        }
        let item = match next {
            Ok(item) => item,
            Err(err) => return Some(Err(Failure::bad_stream(&self.name, &err))),
        };
        Some(check.observe(&self.name, &item).map(|()| item))
    }
}

/// Where a stage writes: stdout, or `--output FILE`, which is replaced (atomically) only when
/// its content changed, so Make's timestamps stay meaningful.
pub enum Output {
    Stdout {
        out: BufWriter<io::Stdout>,
        /// The reader closed the pipe: a success (`tg-classify | head`), writing stops.
        closed: bool,
    },
    /// Written as it comes to a temporary file beside `path` (a stream of a gigabyte is never
    /// held); an error opening it is told at the first write.
    File {
        path: PathBuf,
        file: Result<store::AtomicFile, io::Error>,
    },
}

impl Output {
    pub fn new(path: Option<&Path>) -> Self {
        match path {
            Some(path) => Output::File {
                path: path.to_path_buf(),
                file: store::AtomicFile::create(path),
            },
            None => Output::Stdout {
                out: BufWriter::with_capacity(1 << 16, io::stdout()),
                closed: false,
            },
        }
    }

    /// Whether the reader went away; a stage may stop reading early then.
    pub fn is_closed(&self) -> bool {
        matches!(self, Output::Stdout { closed: true, .. })
    }

    /// Writes one line (a newline is appended).
    pub fn line(&mut self, text: &str) -> Result<(), Failure> {
        match self {
            Output::Stdout { closed: true, .. } => Ok(()),
            Output::Stdout { out, closed } => {
                let result = out
                    .write_all(text.as_bytes())
                    .and_then(|()| out.write_all(b"\n"));
                match result {
                    Ok(()) => Ok(()),
                    Err(err) if err.kind() == io::ErrorKind::BrokenPipe => {
                        *closed = true;
                        Ok(())
                    }
                    Err(err) => Err(Failure::write(err)),
                }
            }
            Output::File { path, file } => file
                .as_mut()
                .map_err(|e| io::Error::new(e.kind(), e.to_string()))
                .and_then(|file| {
                    file.write_all(text.as_bytes())
                        .and_then(|()| file.write_all(b"\n"))
                })
                .map_err(|e| Failure::cant_write(path, &e)),
        }
    }

    /// Serialises and writes one record.
    pub fn record(&mut self, record: &Record) -> Result<(), Failure> {
        let text = serde_json::to_string(record)
            .map_err(|e| Failure::new(exit::SOFTWARE, format!("cannot serialise a record: {e}")))?;
        self.line(&text)
    }

    /// Flushes stdout, or writes the file if its content changed.
    pub fn finish(self) -> Result<(), Failure> {
        match self {
            Output::Stdout { closed: true, .. } => Ok(()),
            Output::Stdout { mut out, .. } => match out.flush() {
                Ok(()) => Ok(()),
                Err(err) if err.kind() == io::ErrorKind::BrokenPipe => Ok(()),
                Err(err) => Err(Failure::write(err)),
            },
            Output::File { path, file } => file
                .and_then(store::AtomicFile::commit_if_changed)
                .map(|_| ())
                .map_err(|e| Failure::cant_write(&path, &e)),
        }
    }
}

/// Checks the shape of a stream as it goes by: a `header` first, a `summary` last.
#[derive(Debug, Default)]
pub struct StreamCheck {
    /// A stage that applies patches reads them ([`crate::patch::open`]); others refuse them.
    accept_patches: bool,
    records: u64,
    last_was_summary: bool,
    summaries: u64,
}

impl StreamCheck {
    /// The check of a stage that applies patches as well as reading whole streams.
    pub fn accepting_patches() -> Self {
        StreamCheck {
            accept_patches: true,
            ..StreamCheck::default()
        }
    }

    fn observe(&mut self, source: &str, item: &Item) -> Result<(), Failure> {
        if self.records == 0 && !matches!(item.record, Some(Record::Header(_))) {
            return Err(Failure::new(
                exit::DATA,
                format!(
                    "{source}: line {}: the stream does not start with a header record",
                    item.line
                ),
            )
            .with_hint("pipe a tldrgraph stream in, e.g. `tg-extract . | tg-classify`"));
        }
        // A patch is a few records of a stream this stage never saw whole: read as a stream it
        // would become artifacts of one file's records.
        let patch_header = matches!(
            &item.record,
            Some(Record::Header(Header { patch: Some(_), .. }))
        );
        if patch_header && !self.accept_patches {
            return Err(Failure::new(
                exit::DATA,
                format!(
                    "{source}: line {}: this is a patch (`tg-extract --patch`: what changed since \
                     the last run), and this stage reads whole streams",
                    item.line
                ),
            )
            .with_hint("run tg-extract without --patch"));
        }
        self.records += 1;
        self.last_was_summary = matches!(item.record, Some(Record::Summary(_)));
        if self.last_was_summary {
            self.summaries += 1;
        }
        Ok(())
    }

    /// At end of input: the stream was complete, or why not. A stage commits no artifact from
    /// an incomplete stream.
    pub fn finish(&self, source: &str) -> Result<(), Failure> {
        if self.records == 0 {
            return Err(Failure::new(exit::DATA, format!("{source}: empty input"))
                .with_hint("pipe a tldrgraph stream in, e.g. `tg-extract . | tg-classify`"));
        }
        if !self.last_was_summary {
            return Err(Failure::new(
                exit::DATA,
                format!(
                    "{source}: the stream ends without a summary record: the stage before this one \
                     died or the stream was cut; no artifact was written"
                ),
            )
            .with_hint("run the pipeline again; the error of the first stage tells what failed"));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ndjson::parse_line;

    fn check(lines: &[&str]) -> Result<(), Failure> {
        let mut check = StreamCheck::default();
        for (i, line) in lines.iter().enumerate() {
            let item = parse_line(i as u64 + 1, line).expect("valid line");
            check.observe("test", &item)?;
        }
        check.finish("test")
    }

    const HEADER: &str = r#"{"type":"header","schema":"1.0","producer":"t","root":"."}"#;
    const SUMMARY: &str = r#"{"type":"summary","stage":"t"}"#;
    const FILE: &str =
        r#"{"type":"file","path":"a.py","lang":"python","hash":"0","bytes":1,"lines":1}"#;

    #[test]
    fn a_stage_owns_its_summary_status_and_record_types_and_nothing_else() {
        let owned = Owned {
            stage: "tg-plan",
            status: "needs_confirmation",
            types: &["candidate"],
            diagnostics: &["bad_approval"],
        };
        assert!(owned.owns_line(r#"{"type":"summary","stage":"tg-plan","ranked":true}"#));
        assert!(!owned.owns_line(r#"{"type":"summary","stage":"tg-extract"}"#));
        assert!(owned.owns_line(r#"{"type":"status","status":"needs_confirmation"}"#));
        assert!(!owned.owns_line(r#"{"type":"status","status":"needs_layers"}"#));
        let candidate = r#"{"type":"candidate","id":"a.py::f","rank":1,"score":0.5,"reasons":[],"metrics":{"fan_in":0,"fan_out":0,"cross_layer_degree":0,"calling_layers":0,"betweenness":0.0,"pagerank":0.0}}"#;
        assert!(owned.owns_line(candidate));
        assert!(owned.owns_line(
            r#"{"type":"diagnostic","level":"warning","code":"bad_approval","message":"m"}"#
        ));
        assert!(!owned.owns_line(FILE));
        assert!(!owned.owns_line("not json"));
    }

    #[test]
    fn a_stream_needs_a_header_first_and_a_summary_last() {
        assert_eq!(check(&[HEADER, FILE, SUMMARY]), Ok(()));
        let cut = check(&[HEADER, FILE]).unwrap_err();
        assert_eq!(cut.code, exit::DATA);
        assert!(cut.message.contains("without a summary"), "{}", cut.message);
        let headless = check(&[FILE, SUMMARY]).unwrap_err();
        assert!(headless.message.contains("line 1"), "{}", headless.message);
        assert!(check(&[]).unwrap_err().message.contains("empty input"));
    }

    /// A stage reading whole streams is never fed the few records of a patch as if they were
    /// the graph: it stops at the header, naming the line, with a hint.
    #[test]
    fn a_patch_is_refused_where_a_whole_stream_is_read() {
        let patch_header = r#"{"type":"header","schema":"1.0","producer":"t","root":".","patch":{"base":"a","result":"b"}}"#;
        let marker = r#"{"type":"patch","section":"tail"}"#;
        let refused = check(&[patch_header, marker, SUMMARY]).unwrap_err();
        assert_eq!(refused.code, exit::DATA);
        assert!(
            refused.message.contains("test: line 1: this is a patch"),
            "{}",
            refused.message
        );
        assert_eq!(
            refused.hint.as_deref(),
            Some("run tg-extract without --patch")
        );
        assert_eq!(check(&[HEADER, marker, SUMMARY]), Ok(()));
    }
}
