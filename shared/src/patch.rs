//! Patches as the stages after tg-extract read and write them.
//!
//! A patch (`tg-extract --patch`, [`crate::record::PatchSection`]) is a header whose `patch`
//! names the whole streams it leads from and to, then three sections, each opened by a
//! `{"type":"patch","section":...}` record: the `removed` file, node and edge lines as the base
//! stream holds them, the `added` lines in their place, and the `tail` (every line after the
//! edges). A stage that keeps state of the last whole stream it read applies the patch to that
//! state and writes a patch of its own output, with the same header, so that the stage after
//! it can do the same.

use crate::exit;
use crate::ndjson::Item;
use crate::record::{Header, PatchMarker, PatchOf, PatchSection, Record};
use crate::stage::{Failure, Input, Output, StreamCheck};

/// A patch, read whole (a patch is the records of the files an edit touched: megabytes where
/// the stream is a gigabyte).
pub struct Patch {
    /// The header line as read, written again at the head of the stage's own patch.
    pub header: String,
    pub of: PatchOf,
    pub removed: Vec<Item>,
    pub added: Vec<Item>,
    pub tail: Vec<Item>,
}

/// The header line `raw` with the stream it names folded with `key`: a stage whose records
/// depend on settings of its own (a layers config, the intents) names its output as another
/// stream than its input, so that a later stage never takes its state of an output made with
/// other settings for this one. A whole stream's `fingerprint` and a patch's `base` and `result`
/// are folded alike; a header without them is left as it is.
pub fn folded_header(raw: &str, key: &str) -> String {
    let Ok(mut header) = serde_json::from_str::<serde_json::Map<String, serde_json::Value>>(raw)
    else {
        return raw.to_string();
    };
    let fold = |value: &mut serde_json::Value| {
        if let Some(name) = value.as_str() {
            *value = serde_json::Value::String(crate::hash::content_hash(
                format!("{name}\n{key}").as_bytes(),
            ));
        }
    };
    if let Some(fingerprint) = header.get_mut("fingerprint") {
        fold(fingerprint);
    }
    if let Some(serde_json::Value::Object(ends)) = header.get_mut("patch") {
        for end in ["base", "result"] {
            if let Some(value) = ends.get_mut(end) {
                fold(value);
            }
        }
    }
    serde_json::Value::Object(header).to_string()
}

/// The `patch` of a header item, when it opens a patch.
fn patch_of(item: &Item) -> Option<&PatchOf> {
    match &item.record {
        Some(Record::Header(Header {
            patch: Some(of), ..
        })) => Some(of),
        _ => None,
    }
}

/// How the input of a stage that applies patches begins.
pub enum Opened {
    /// A whole stream: its header (read, not yet written), the check of the records to come,
    /// and the stream the header names (its `fingerprint`, when it has one).
    Whole {
        header: Box<Item>,
        check: StreamCheck,
        stream: Option<String>,
    },
    /// A patch, read to its end.
    Patch(Patch),
}

/// Reads the first record of `input`, and the rest when it opens a patch. An empty input is
/// the error [`StreamCheck::finish`] gives it.
pub fn open(input: &mut Input) -> Result<Opened, Failure> {
    let mut check = StreamCheck::accepting_patches();
    let header = match input.next_item(&mut check) {
        Some(item) => item?,
        None => {
            check.finish(&input.name)?;
            return Err(Failure::new(
                exit::DATA,
                format!("{}: empty input", input.name),
            ));
        }
    };
    if patch_of(&header).is_some() {
        return read(header, input, &mut check).map(Opened::Patch);
    }
    let stream = match &header.record {
        Some(Record::Header(header)) => header.fingerprint.clone(),
        _ => None,
    };
    Ok(Opened::Whole {
        header: Box::new(header),
        check,
        stream,
    })
}

/// Reads the sections of the patch whose header is `header` (an item for which [`patch_of`]
/// is `Some`) to the end of `input`. A section out of order, a record in a section it cannot be
/// in, or a patch cut short is an error naming the input and the line.
fn read(header: Item, input: &mut Input, check: &mut StreamCheck) -> Result<Patch, Failure> {
    let Some(of) = patch_of(&header).cloned() else {
        return Err(Failure::new(
            exit::SOFTWARE,
            "patch::read was given a header without a patch",
        ));
    };
    let mut patch = Patch {
        header: header.raw,
        of,
        removed: Vec::new(),
        added: Vec::new(),
        tail: Vec::new(),
    };
    let mut section: Option<PatchSection> = None;
    while let Some(item) = input.next_item(check) {
        let item = item?;
        let misplaced = |what: &str| {
            Failure::new(
                exit::DATA,
                format!("{}: line {}: {what}", input.name, item.line),
            )
            .with_hint(
                "give the stage a patch as `tg-extract --patch` writes it, or a whole stream",
            )
        };
        if let Some(Record::Patch(PatchMarker { section: next })) = &item.record {
            if section.map_or(Some(PatchSection::Removed), following) != Some(*next) {
                return Err(misplaced(&format!(
                    "the patch's sections are not removed, added, tail in that order (found `{}`)",
                    section_name(*next)
                )));
            }
            section = Some(*next);
            continue;
        }
        let graph_line = matches!(
            item.record,
            Some(Record::File(_) | Record::Node(_) | Record::Edge(_))
        );
        match section {
            None => return Err(misplaced("a record before the patch's first section")),
            Some(PatchSection::Removed | PatchSection::Added) if !graph_line => {
                return Err(misplaced(
                    "only file, node and edge records belong to a patch's removed and added sections",
                ))
            }
            Some(PatchSection::Tail) if graph_line || matches!(item.record, Some(Record::Header(_))) => {
                return Err(misplaced("a header, file, node or edge record in a patch's tail"))
            }
            Some(PatchSection::Removed) => patch.removed.push(item),
            Some(PatchSection::Added) => patch.added.push(item),
            Some(PatchSection::Tail) => patch.tail.push(item),
        }
    }
    check.finish(&input.name)?;
    if section != Some(PatchSection::Tail) {
        return Err(Failure::new(
            exit::DATA,
            format!("{}: the patch ends before its tail section", input.name),
        )
        .with_hint("run the pipeline again; the error of the first stage tells what failed"));
    }
    Ok(patch)
}

fn following(section: PatchSection) -> Option<PatchSection> {
    match section {
        PatchSection::Removed => Some(PatchSection::Added),
        PatchSection::Added => Some(PatchSection::Tail),
        PatchSection::Tail => None,
    }
}

fn section_name(section: PatchSection) -> &'static str {
    match section {
        PatchSection::Removed => "removed",
        PatchSection::Added => "added",
        PatchSection::Tail => "tail",
    }
}

/// Writes a patch up to its tail: `header`, the removed and added sections, and the tail's
/// marker; the caller writes the tail's lines.
pub fn write_head(
    output: &mut Output,
    header: &str,
    [removed, added]: [Vec<&str>; 2],
) -> Result<(), Failure> {
    output.line(header)?;
    for (section, lines) in [
        (PatchSection::Removed, removed),
        (PatchSection::Added, added),
    ] {
        output.record(&Record::Patch(PatchMarker { section }))?;
        for line in lines {
            output.line(line)?;
        }
    }
    output.record(&Record::Patch(PatchMarker {
        section: PatchSection::Tail,
    }))
}

/// What every stage's kept state begins with: the revision of its layout, the stream it is of
/// (a header's `fingerprint`, or the `result` of the patch last applied), and the key of the
/// settings it was made with.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct StateHead {
    pub revision: u32,
    pub stream: String,
    pub settings: String,
}

/// The state a stage keeps for patches, at `path`.
pub struct KeptState<'a> {
    pub stage: &'static str,
    pub path: std::path::PathBuf,
    pub store: &'a crate::store::Store,
}

impl KeptState<'_> {
    /// Keeps `state` (sealed, under the store's lock), or, given none (a stream without a
    /// fingerprint, or one the state could not describe), removes the state so that no patch
    /// is applied to an older one. A state that cannot be written is only a lost shortcut: it
    /// is removed, and the next patch is refused.
    pub fn save<T: serde::Serialize>(&self, state: Option<&T>) {
        let lock = self.store.lock();
        let written = match (&lock, state) {
            (Ok(_), Some(state)) => {
                crate::store::AtomicFile::create(&self.path).and_then(|mut file| {
                    crate::codec::encode_sealed_into(state, &mut file)
                        .map_err(std::io::Error::other)?;
                    file.commit()
                })
            }
            _ => Err(std::io::Error::other("no state to keep")),
        };
        if written.is_err() {
            let _ = std::fs::remove_file(&self.path);
        }
    }

    /// The kept state, when its head says it is of the stream `base` made with `settings` at
    /// layout `revision`; else why not ([`crate::exit::NO_BASE`]), `changed` saying what a
    /// change of settings means for this stage.
    pub fn load<T: serde::de::DeserializeOwned>(
        &self,
        head_of: impl Fn(&T) -> &StateHead,
        (revision, base, settings): (u32, &str, &str),
        changed: &str,
    ) -> Result<T, Failure> {
        let path = self.path.display();
        let state: T = crate::codec::decode_sealed_file(&self.path)
            .map_err(|e| self.no_base(&format!("{path}: {e}")))?;
        let head = head_of(&state);
        if head.revision != revision {
            return Err(self.no_base(&format!("{path} was written by another version")));
        }
        if head.stream != base {
            return Err(self.no_base(&format!(
                "the last stream {} read is {}, the patch's base {base}",
                self.stage, head.stream
            )));
        }
        if head.settings != settings {
            return Err(self.no_base(&format!("{changed} since the last stream")));
        }
        Ok(state)
    }

    /// [`no_base`] of this stage.
    pub fn no_base(&self, why: &str) -> Failure {
        no_base(self.stage, why)
    }
}

/// A patch `stage` cannot apply, and `why`: exit 76, and the whole stream is the way on.
pub fn no_base(stage: &str, why: &str) -> Failure {
    Failure::new(exit::NO_BASE, format!("cannot apply the patch: {why}")).with_hint(format!(
        "run the whole stream through {stage} (tg-extract without --patch)"
    ))
}
