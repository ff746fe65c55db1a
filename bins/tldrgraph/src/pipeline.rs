//! Running stages as real processes connected by real pipes, as a shell would.

use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread::JoinHandle;

/// One stage to run: its name, executable and arguments.
#[derive(Debug, Clone)]
pub struct Stage {
    pub name: &'static str,
    pub exe: PathBuf,
    pub args: Vec<OsString>,
}

/// How one stage ended.
#[derive(Debug)]
pub struct Outcome {
    pub name: &'static str,
    pub status: ExitStatus,
    pub stderr: Vec<String>,
}

impl Outcome {
    /// `<stage>: error: ...` as the stage reported it, else clap's `error: ...`, else the last
    /// line it wrote, else how it ended.
    pub fn error_message(&self) -> String {
        let ours = format!("{}: error: ", self.name);
        self.stderr
            .iter()
            .find_map(|l| l.strip_prefix(&ours).map(str::to_string))
            .or_else(|| {
                self.stderr
                    .iter()
                    .find_map(|l| l.strip_prefix("error: ").map(str::to_string))
            })
            .or_else(|| {
                // "thread 'main' panicked at src/x.rs:1:2:" then the message on the next line.
                let at = self.stderr.iter().position(|l| l.contains("panicked at"))?;
                let message = self.stderr.get(at + 1).map_or("", String::as_str);
                Some(format!("{} {message}", self.stderr[at].trim()))
            })
            .or_else(|| {
                self.stderr
                    .iter()
                    .rev()
                    .find(|l| !l.trim().is_empty())
                    .cloned()
            })
            .unwrap_or_else(|| describe(&self.status))
    }

    /// `<stage>: hint: ...` if the stage gave one.
    pub fn hint(&self) -> Option<String> {
        let prefix = format!("{}: hint: ", self.name);
        self.stderr
            .iter()
            .find_map(|l| l.strip_prefix(&prefix).map(str::to_string))
    }
}

/// "exit code 65" or "killed by signal 9".
pub fn describe(status: &ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit code {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    "ended abnormally".to_string()
}

/// What a pipeline did: each stage's outcome, in pipeline order.
#[derive(Debug)]
pub struct Finished {
    pub outcomes: Vec<Outcome>,
}

impl Finished {
    /// The first stage, in pipeline order, that did not succeed.
    pub fn first_failure(&self) -> Option<&Outcome> {
        self.outcomes.iter().find(|o| !o.status.success())
    }
}

/// Finds `name` next to `beside` (the wrapper's own executable), then on `PATH`.
pub fn locate(name: &str, beside: Option<&Path>) -> Option<PathBuf> {
    let file = format!("{name}{}", std::env::consts::EXE_SUFFIX);
    if let Some(dir) = beside {
        let candidate = dir.join(&file);
        if is_executable(&candidate) {
            return Some(candidate);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(&file))
        .find(|candidate| is_executable(candidate))
}

fn is_executable(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.is_file() && meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        meta.is_file()
    }
}

/// A stage that could not be started (or waited for).
#[derive(Debug)]
pub struct SpawnError {
    pub stage: &'static str,
    pub error: io::Error,
}

/// The thread collecting one stage's stderr.
type StderrLines = JoinHandle<Vec<String>>;

fn collect_stderr(child: &mut Child, forward: bool) -> Option<StderrLines> {
    let stderr = child.stderr.take()?;
    Some(std::thread::spawn(move || {
        let mut lines = Vec::new();
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            // Warnings (a damaged cache being rebuilt, an answer that failed) reach the user
            // even when progress lines are kept quiet; stderr is never the JSON channel.
            if forward || line.contains(": warning: ") {
                eprintln!("{line}");
            }
            lines.push(line);
        }
        lines
    }))
}

/// Runs `stages` as `a | b | c`, with `envs` set for each, handing the last stage's stdout to
/// `read_stdout` as it comes (a reader that stops early ends the pipeline by a broken pipe);
/// stderr of each stage is collected (and forwarded as it comes when `forward_stderr`). The
/// first stage reads our stdin when `inherit_stdin`, else nothing.
pub fn run(
    stages: &[Stage],
    envs: &[(&str, &str)],
    forward_stderr: bool,
    inherit_stdin: bool,
    read_stdout: &mut dyn FnMut(&mut dyn Read),
) -> Result<Finished, SpawnError> {
    let mut children: Vec<(&'static str, Child, Option<StderrLines>)> = Vec::new();
    let mut previous: Option<Stdio> = inherit_stdin.then(Stdio::inherit);
    for (index, stage) in stages.iter().enumerate() {
        let mut command = Command::new(&stage.exe);
        command
            .args(&stage.args)
            .stdin(previous.take().unwrap_or_else(Stdio::null))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in envs {
            command.env(key, value);
        }
        let mut child = match command.spawn() {
            Ok(child) => child,
            Err(error) => {
                for (_, mut started, _) in children {
                    let _ = started.kill();
                    let _ = started.wait();
                }
                return Err(SpawnError {
                    stage: stage.name,
                    error,
                });
            }
        };
        let stderr = collect_stderr(&mut child, forward_stderr);
        if index + 1 < stages.len() {
            previous = child.stdout.take().map(Stdio::from);
        }
        children.push((stage.name, child, stderr));
    }
    if let Some((_, last, _)) = children.last_mut() {
        if let Some(mut out) = last.stdout.take() {
            read_stdout(&mut out);
        }
    }
    let mut outcomes = Vec::with_capacity(children.len());
    for (name, mut child, stderr) in children {
        let status = child
            .wait()
            .map_err(|error| SpawnError { stage: name, error })?;
        let stderr = stderr.and_then(|h| h.join().ok()).unwrap_or_default();
        outcomes.push(Outcome {
            name,
            status,
            stderr,
        });
    }
    Ok(Finished { outcomes })
}
