//! What `impact` and `check` read from git, through the `git` command line: it is on every
//! machine that has a repository to compare, it reads every repository format git itself
//! writes, and it adds no dependency (a library such as gix would bring a large tree of crates
//! for the three commands used here). Every failure names the command and what git said.

use std::path::Path;
use std::process::{Command, Stdio};
use tg_shared::exit;
use tg_shared::stage::Failure;

/// Runs `git -C root ARGS`; its stdout, or a failure with git's own message.
fn git(root: &Path, args: &[&str]) -> Result<Vec<u8>, Failure> {
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| {
            Failure::new(exit::UNAVAILABLE, format!("cannot run git: {e}"))
                .with_hint("install git, or give the changed files with --files")
        })?;
    if !output.status.success() {
        let said = String::from_utf8_lossy(&output.stderr);
        return Err(Failure::new(
            exit::NO_INPUT,
            format!("`git {}` failed: {}", args.join(" "), said.trim()),
        ));
    }
    Ok(output.stdout)
}

/// Whether `root` is inside a git work tree.
pub fn is_repository(root: &Path) -> bool {
    git(root, &["rev-parse", "--is-inside-work-tree"]).is_ok_and(|out| out.starts_with(b"true"))
}

/// The commit `rev` names (a branch, tag, `HEAD~3`, a sha), or a failure saying it is unknown.
pub fn commit(root: &Path, rev: &str) -> Result<String, Failure> {
    let spec = format!("{rev}^{{commit}}");
    let out = git(root, &["rev-parse", "--verify", "--quiet", "--end-of-options", &spec]).map_err(|_| {
        Failure::new(
            exit::NO_INPUT,
            format!("`{rev}` names no commit in {}", root.display()),
        )
        .with_hint("give a branch, tag or commit that exists here (a shallow clone may lack it: fetch more history)")
    })?;
    Ok(String::from_utf8_lossy(&out).trim().to_string())
}

/// Writes the tree of `commit` under `dest` (files only, as `git archive` gives them).
pub fn export_commit(root: &Path, commit: &str, dest: &Path) -> Result<(), Failure> {
    let tar = git(root, &["archive", "--format=tar", commit])?;
    untar(&tar, dest)
}

/// Writes the files staged in the index under `dest`.
pub fn export_index(root: &Path, dest: &Path) -> Result<(), Failure> {
    let prefix = format!("{}/", dest.display());
    git(
        root,
        &[
            "checkout-index",
            "--all",
            "--force",
            &format!("--prefix={prefix}"),
        ],
    )
    .map(|_| ())
}

/// Unpacks a tar archive with the system `tar`, fed on stdin.
fn untar(archive: &[u8], dest: &Path) -> Result<(), Failure> {
    use std::io::Write;
    let mut child = Command::new("tar")
        .arg("-x")
        .arg("-C")
        .arg(dest)
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Failure::new(exit::UNAVAILABLE, format!("cannot run tar: {e}")))?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(archive)
            .map_err(|e| Failure::new(exit::IO, format!("cannot feed tar: {e}")))?;
    }
    let output = child
        .wait_with_output()
        .map_err(|e| Failure::new(exit::IO, format!("tar failed: {e}")))?;
    if !output.status.success() {
        return Err(Failure::new(
            exit::IO,
            format!(
                "tar could not unpack the tree: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ),
        ));
    }
    Ok(())
}
