//! What is embedded and indexed for a symbol.

use tg_shared::lexical::humanise;
use tg_shared::record::NodeKind;

/// Callers and callees named in a text.
pub const NEIGHBOURS: usize = 8;

/// What a symbol's texts are made of.
pub struct Facts<'a> {
    pub id: &'a str,
    pub kind: NodeKind,
    pub name: &'a str,
    pub file: &'a str,
    pub layer: Option<&'a str>,
    pub signature: Option<&'a str>,
    /// The intent, else the doc line.
    pub about: Option<&'a str>,
    pub calls: &'a [&'a str],
    pub called_by: &'a [&'a str],
}

/// The qualified name: the id without its file (`Session.send`), or the file for a module.
pub fn qualified(id: &str) -> &str {
    id.split_once("::").map_or(id, |(_, q)| q)
}

/// The sentence-like text the embedder reads.
pub fn embedding_text(f: &Facts<'_>) -> String {
    let mut text = format!(
        "{}. {} {}",
        humanise(f.name),
        f.kind.as_str(),
        humanise(qualified(f.id))
    );
    if let Some(layer) = f.layer {
        text.push_str(&format!(" in the {} layer", humanise(layer)));
    }
    text.push_str(&format!(". file {}.", humanise(f.file)));
    if let Some(signature) = f.signature {
        text.push_str(&format!(" {signature}."));
    }
    if let Some(about) = f.about {
        text.push_str(&format!(" {about}"));
    }
    let names = |list: &[&str]| {
        list.iter()
            .take(NEIGHBOURS)
            .map(|n| humanise(n))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !f.calls.is_empty() {
        text.push_str(&format!(" calls {}.", names(f.calls)));
    }
    if !f.called_by.is_empty() {
        text.push_str(&format!(" called by {}.", names(f.called_by)));
    }
    text
}

/// The text BM25 indexes: the names count twice (a symbol is most often found by its name).
pub fn lexical_text(f: &Facts<'_>) -> String {
    let mut text = format!("{0} {0} {1} {2}", f.name, qualified(f.id), f.file);
    for part in [f.signature, f.about].into_iter().flatten() {
        text.push(' ');
        text.push_str(part);
    }
    for name in f.calls.iter().take(NEIGHBOURS) {
        text.push(' ');
        text.push_str(name);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_carry_names_in_words_layer_signature_and_neighbours() {
        let facts = Facts {
            id: "pkg/api.py::Session.getConnection",
            kind: NodeKind::Method,
            name: "getConnection",
            file: "pkg/api.py",
            layer: Some("api"),
            signature: Some("def getConnection(self, url)"),
            about: Some("Opens a pooled connection."),
            calls: &["open_socket"],
            called_by: &["send"],
        };
        assert_eq!(
            embedding_text(&facts),
            "get connection. method session get connection in the api layer. file pkg api py. \
             def getConnection(self, url). Opens a pooled connection. calls open socket. called by send."
        );
        assert!(lexical_text(&facts)
            .starts_with("getConnection getConnection Session.getConnection pkg/api.py"));
    }
}
