//! The fixture repositories under the workspace's tests/fixtures/, each with its exact expected
//! nodes and relations written out by hand (not captured from our own output).

mod common;

use common::*;

#[test]
fn python_fixture_nodes_are_exact() {
    let records = records(&extract(&fixture("python"), false));
    let expected = expect_nodes(&[
        ("main.py", "module", 1, 11),
        ("main.py::main", "function", 10, 11),
        ("pkg/__init__.py", "module", 1, 4),
        ("pkg/api.py", "module", 1, 72),
        ("pkg/api.py::get", "function", 10, 12),
        ("pkg/api.py::request", "function", 15, 19),
        // Decorated: the range starts at `def`, like Python's ast.
        ("pkg/api.py::index", "function", 23, 24),
        ("pkg/api.py::Session", "class", 27, 54),
        ("pkg/api.py::Session.name", "method", 31, 32),
        ("pkg/api.py::Session.send", "method", 34, 36),
        ("pkg/api.py::Session.prepare", "method", 38, 39),
        ("pkg/api.py::Session.load", "method", 41, 51),
        ("pkg/api.py::Session.load.inner", "function", 44, 45),
        ("pkg/api.py::Session.load.Local", "class", 47, 49),
        ("pkg/api.py::Session.load.Local.run", "method", 48, 49),
        ("pkg/api.py::Session.fetch", "method", 53, 54),
        ("pkg/api.py::load", "function", 57, 58),
        ("pkg/api.py::platform", "function", 62, 63),
        ("pkg/api.py::platform#2", "function", 65, 66),
        ("pkg/api.py::dumps", "function", 71, 72),
        ("pkg/models.py", "module", 1, 8),
        ("pkg/models.py::Base", "class", 1, 3),
        ("pkg/models.py::Base.save", "method", 2, 3),
        ("pkg/models.py::Model", "class", 6, 8),
        ("pkg/models.py::Model.validate", "method", 7, 8),
        ("pkg/util.py", "module", 1, 7),
        ("pkg/util.py::helper", "function", 1, 2),
        ("pkg/util.py::date", "function", 5, 7),
        ("pkg/web.py", "module", 1, 8),
        ("pkg/web.py::App", "class", 1, 5),
        ("pkg/web.py::App.route", "method", 2, 5),
        ("pkg/web.py::App.route.decorator", "function", 3, 4),
    ]);
    assert_eq!(node_set(&records), expected);

    let nodes = nodes(&records);
    let get = nodes.iter().find(|n| n.id == "pkg/api.py::get").unwrap();
    assert_eq!(get.signature.as_deref(), Some("def get(url)"));
    assert_eq!(get.doc.as_deref(), Some("Fetch a URL."));
    assert_eq!(get.parent.as_deref(), Some("pkg/api.py"));
    let fetch = nodes
        .iter()
        .find(|n| n.id == "pkg/api.py::Session.fetch")
        .unwrap();
    assert_eq!(fetch.signature.as_deref(), Some("async def fetch(self)"));
    let module = nodes.iter().find(|n| n.id == "pkg/api.py").unwrap();
    assert_eq!(module.doc.as_deref(), Some("The API module."));
}

#[test]
fn python_fixture_relations_follow_python_scoping_and_imports() {
    let records = records(&extract(&fixture("python"), false));
    let expected = expect_relations(&[
        // `pkg.api.get()` through `import pkg.api`, `u.helper()` through `import pkg.util as u`.
        "calls main.py -> pkg/api.py::get (import)",
        "calls main.py -> pkg/util.py::helper (import)",
        "calls main.py -> pkg/models.py::Model (import)",
        // `models.Model().validate()`: the receiver is an instance of the class it calls.
        "calls main.py -> pkg/models.py::Model.validate (typed)",
        "calls main.py::main -> pkg/api.py::load (import)",
        "imports main.py -> pkg/api.py (import)",
        "imports main.py -> pkg/util.py (import)",
        "imports main.py -> pkg/models.py (import)",
        "imports pkg/__init__.py -> pkg/api.py (import)",
        "imports pkg/api.py -> pkg/util.py (import)",
        "imports pkg/api.py -> pkg/models.py (import)",
        "imports pkg/api.py -> pkg/web.py (import)",
        // The decorator `@app.route("/")` is a call made by the module at definition time.
        "calls pkg/api.py -> pkg/web.py::App.route (typed)",
        "calls pkg/web.py::App.route -> pkg/web.py::App.route.decorator (closure)",
        "calls pkg/api.py::get -> pkg/api.py::request (local)",
        // `util.helper()` (from . import util) and `h()` (from .util import helper as h);
        // `date()` is datetime.date: no edge to the repository's own `date`.
        "calls pkg/api.py::request -> pkg/util.py::helper (import)",
        "calls pkg/api.py::request -> pkg/api.py::Session (local)",
        // `Session().send()`: an instance of the class just called.
        "calls pkg/api.py::request -> pkg/api.py::Session.send (typed)",
        "calls pkg/api.py::index -> pkg/api.py::get (local)",
        "calls pkg/api.py::load -> pkg/api.py::index (local)",
        // `super().save()` and `self.prepare()`; `self.save()` found on a base class.
        "calls pkg/api.py::Session.send -> pkg/models.py::Base.save (self)",
        "calls pkg/api.py::Session.send -> pkg/api.py::Session.prepare (self)",
        "calls pkg/api.py::Session.prepare -> pkg/models.py::Base.save (self)",
        // A bare `load()` in method `load` is the module function, not the method itself.
        "calls pkg/api.py::Session.load -> pkg/api.py::load (local)",
        "calls pkg/api.py::Session.load -> pkg/api.py::Session.load.inner (local)",
        "calls pkg/api.py::Session.load.inner -> pkg/api.py::get (local)",
        // A method of a class nested in a function sees the function's names.
        "calls pkg/api.py::Session.load.Local.run -> pkg/api.py::Session.load.inner (local)",
        "calls pkg/api.py::Session.fetch -> pkg/api.py::Session.send (self)",
        "inherits pkg/api.py::Session -> pkg/models.py::Model (import)",
        "inherits pkg/models.py::Model -> pkg/models.py::Base (local)",
        "calls pkg/models.py::Model.validate -> pkg/models.py::Base.save (self)",
        "calls pkg/util.py::helper -> pkg/util.py::date (local)",
        "calls pkg/web.py -> pkg/web.py::App (local)",
    ]);
    assert_eq!(relation_set(&records), expected);
    assert_eq!(summary_count(&records, "imports_external"), 3);
}

#[test]
fn c_fixture_nodes_are_exact() {
    let records = records(&extract(&fixture("c"), false));
    let expected = expect_nodes(&[
        ("include/util.h", "module", 1, 27),
        ("include/util.h::MAX", "macro", 5, 5),
        ("include/util.h::struct point", "struct", 8, 11),
        ("include/util.h::point_t", "typedef", 13, 13),
        ("include/util.h::union value", "union", 15, 18),
        ("include/util.h::value_t", "typedef", 15, 18),
        ("include/util.h::enum color", "enum", 20, 20),
        ("include/util.h::callback_t", "typedef", 22, 22),
        ("src/broken.c", "module", 1, 16),
        ("src/broken.c::before", "function", 3, 6),
        ("src/broken.c::broken", "function", 8, 11),
        // After the syntax error: still found.
        ("src/broken.c::after", "function", 13, 16),
        // Recovered from behind macros tree-sitter cannot parse.
        ("src/macros.c", "module", 1, 30),
        ("src/macros.c::after_macros", "function", 7, 10),
        ("src/macros.c::decorated_name", "function", 12, 16),
        ("src/macros.c::export_me", "function", 18, 21),
        // Alternative headers under #if/#else: the first branch, as ctags reads it.
        ("src/macros.c::config", "function", 24, 30),
        // Build variants (issue 16): the function, and the alias macro that replaces it where
        // memcpy exists (recorded after the walk, so `#2`); two #ifdef alternatives.
        ("src/shadow.c", "module", 1, 23),
        ("src/shadow.c::xmemcpy", "function", 7, 10),
        ("src/shadow.c::xmemcpy#2", "macro", 5, 5),
        ("src/shadow.c::pick", "function", 14, 14),
        ("src/shadow.c::pick#2", "function", 16, 16),
        ("src/shadow.c::copy_all", "function", 19, 23),
        ("src/main.c", "module", 1, 14),
        ("src/main.c::twice", "function", 4, 7),
        ("src/main.c::main", "function", 9, 14),
        // `int BZ_API(wrapped_open)(int x)`: the macro wraps the name.
        ("src/wrapped.c", "module", 1, 10),
        ("src/wrapped.c::wrapped_open", "function", 2, 5),
        ("src/wrapped.c::use_wrapped", "function", 7, 10),
        ("src/util.c", "module", 1, 24),
        ("src/util.c::util_add", "function", 5, 8),
        ("src/util.c::util_add_", "function", 11, 14),
        ("src/util.c::twice", "function", 16, 19),
        ("src/util.c::make_buffer", "function", 21, 24),
    ]);
    assert_eq!(node_set(&records), expected);
    let nodes = nodes(&records);
    let add = nodes
        .iter()
        .find(|n| n.id == "src/util.c::util_add")
        .unwrap();
    assert_eq!(add.doc.as_deref(), Some("Adds two numbers."));
    assert_eq!(add.signature.as_deref(), Some("int util_add(int a, int b)"));
    let max = nodes
        .iter()
        .find(|n| n.id == "include/util.h::MAX")
        .unwrap();
    assert_eq!(max.doc.as_deref(), Some("Largest of two values."));
    let diagnostics: Vec<_> = records
        .iter()
        .filter_map(|r| match r {
            tg_shared::record::Record::Diagnostic(d) => Some(d),
            _ => None,
        })
        .collect();
    let located: Vec<(Option<&str>, Option<u32>, &str)> = diagnostics
        .iter()
        .map(|d| (d.file.as_deref(), d.line, d.code.as_str()))
        .collect();
    assert_eq!(
        located,
        vec![
            (Some("src/broken.c"), Some(10), "syntax_error"),
            (Some("src/macros.c"), Some(4), "syntax_error"),
        ]
    );
}

#[test]
fn c_fixture_relations() {
    let records = records(&extract(&fixture("c"), false));
    let expected = expect_relations(&[
        // `"../include/util.h"` relative to the file, `"util.h"` by path suffix.
        "includes src/util.c -> include/util.h (import)",
        "includes src/main.c -> include/util.h (import)",
        "includes src/broken.c -> include/util.h (import)",
        "includes src/macros.c -> include/util.h (import)",
        "calls src/macros.c::decorated_name -> src/macros.c::after_macros (local)",
        "calls src/util.c::util_add_ -> src/util.c::util_add (local)",
        "calls src/util.c::twice -> include/util.h::MAX (import)",
        "calls src/util.c::make_buffer -> src/util.c::twice (local)",
        // The static `twice` of main.c, not util.c's.
        "calls src/main.c::main -> src/main.c::twice (local)",
        "calls src/main.c::main -> src/util.c::util_add (unique)",
        "calls src/main.c::main -> src/util.c::util_add_ (unique)",
        "calls src/broken.c::after -> src/broken.c::before (local)",
        "calls src/broken.c::after -> src/util.c::util_add (unique)",
        "calls src/wrapped.c::use_wrapped -> src/wrapped.c::wrapped_open (local)",
        // Which one runs depends on the build: never certain.
        "calls src/shadow.c::copy_all -> src/shadow.c::xmemcpy (ambiguous)",
        "calls src/shadow.c::copy_all -> src/shadow.c::xmemcpy#2 (ambiguous)",
        "calls src/shadow.c::copy_all -> src/shadow.c::pick (ambiguous)",
        "calls src/shadow.c::copy_all -> src/shadow.c::pick#2 (ambiguous)",
    ]);
    assert_eq!(relation_set(&records), expected);
    // <stdio.h> and <string.h> are outside the repository.
    assert_eq!(summary_count(&records, "imports_external"), 2);
}

#[test]
fn rust_fixture_nodes_and_relations() {
    let records = records(&extract(&fixture("rust"), false));
    let expected = expect_nodes(&[
        ("src/lib.rs", "module", 1, 23),
        ("src/lib.rs::open_default", "function", 9, 13),
        ("src/lib.rs::tests", "mod", 16, 23),
        ("src/lib.rs::tests::opens", "function", 20, 22),
        ("src/store.rs", "module", 1, 46),
        ("src/store.rs::Store", "struct", 5, 7),
        ("src/store.rs::Mode", "enum", 9, 12),
        ("src/store.rs::Named", "trait", 14, 21),
        ("src/store.rs::Named::name", "method", 15, 15),
        ("src/store.rs::Named::shout", "method", 18, 20),
        ("src/store.rs::Store::open", "method", 25, 31),
        ("src/store.rs::Store::touch", "method", 33, 35),
        ("src/store.rs::Store::flush_all", "method", 37, 37),
        ("src/store.rs::Store::validate", "method", 39, 39),
        ("src/store.rs::Store::name", "method", 43, 45),
        ("src/util.rs", "module", 1, 4),
        ("src/util.rs::log", "function", 2, 4),
    ]);
    assert_eq!(node_set(&records), expected);
    let nodes = nodes(&records);
    let store = nodes
        .iter()
        .find(|n| n.id == "src/store.rs::Store")
        .unwrap();
    // The doc comment above `#[derive]` still documents the struct.
    assert_eq!(store.doc.as_deref(), Some("A key-value store."));
    let expected = expect_relations(&[
        "imports src/lib.rs -> src/store.rs (import)",
        "imports src/lib.rs -> src/util.rs (import)",
        "imports src/store.rs -> src/util.rs (import)",
        "calls src/lib.rs::open_default -> src/store.rs::Store::open (import)",
        "calls src/lib.rs::open_default -> src/util.rs::log (import)",
        "calls src/lib.rs::tests::opens -> src/lib.rs::open_default (local)",
        "calls src/store.rs::Store::open -> src/util.rs::log (import)",
        // `let mut store = Store { .. }; store.touch()`.
        "calls src/store.rs::Store::open -> src/store.rs::Store::touch (typed)",
        "calls src/store.rs::Store::open -> src/store.rs::Store::validate (self)",
        "calls src/store.rs::Store::touch -> src/store.rs::Store::flush_all (self)",
        "calls src/store.rs::Named::shout -> src/store.rs::Named::name (self)",
    ]);
    assert_eq!(relation_set(&records), expected);
}

/// Issue 16: typed receivers (annotations, constructor assignments, class-body annotations,
/// return annotations, module-level instances behind decorators), returned closures, overload
/// stubs, conditional definitions, absolute imports shadowed by a subpackage, and no edge for a
/// receiver of unknown type. Written from reading the fixture, before running the tool.
#[test]
fn python_typed_fixture_relations() {
    let records = records(&extract(&fixture("python_typed"), false));
    // The two `@overload` signatures say so, and the implementation does not.
    let stubs: Vec<(&str, bool)> = records
        .iter()
        .filter_map(|r| match r {
            tg_shared::record::Record::Node(n) if n.name == "parse" => {
                Some((n.id.as_str(), n.stub))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        stubs,
        [
            ("app/routing.py::parse", true),
            ("app/routing.py::parse#2", true),
            ("app/routing.py::parse#3", false)
        ]
    );
    let expected = expect_relations(&[
        "imports app/__init__.py -> app/routing.py (import)",
        "imports app/__init__.py -> app/main.py (import)",
        "imports app/main.py -> app/routing.py (import)",
        "imports app/server.py -> app/main.py (import)",
        "imports app/server.py -> app/routing.py (import)",
        // routing.py
        "calls app/routing.py::Router.__init__ -> app/routing.py::Route (local)",
        "calls app/routing.py::Router.add -> app/routing.py::Route (local)",
        "calls app/routing.py::Router.get.decorator -> app/routing.py::Router.add (self)",
        "calls app/routing.py::Router.get -> app/routing.py::Router.get.decorator (closure)",
        // `self.default = Route()` in __init__, then `self.default.handle()`.
        "calls app/routing.py::Router.dispatch -> app/routing.py::Route.handle (typed)",
        // `router: Optional[\"Router\"]`.
        "calls app/routing.py::build -> app/routing.py::Router.add (typed)",
        "calls app/routing.py::build -> app/routing.py::Router (local)",
        // main.py
        "calls app/main.py::App.__init__ -> app/routing.py::Router (import)",
        // Calling a class runs its __init__: an edge to each, so traces pass constructors.
        "calls app/main.py::App.__init__ -> app/routing.py::Router.__init__ (import)",
        "calls app/routing.py::build -> app/routing.py::Router.__init__ (local)",
        "calls app/server.py -> app/main.py::App.__init__ (import)",
        "calls app/server.py::setup -> app/routing.py::Router.__init__ (import)",
        // `async with AsyncSession() as s`: what `__aenter__` returns.
        "calls app/server.py::use_async -> app/server.py::AsyncSession (local)",
        "calls app/server.py::use_async -> app/server.py::AsyncSession.fetch (typed)",
        // `router: Router` in the class body.
        "calls app/main.py::App.get -> app/routing.py::Router.get (typed)",
        // Two definitions under if/else: either may run.
        "calls app/main.py::App.serve -> app/main.py::connect (ambiguous)",
        "calls app/main.py::App.serve -> app/main.py::connect#2 (ambiguous)",
        // The fallback def of a try/except ImportError: json's dumps, or this one.
        "calls app/main.py::App.serve -> app/main.py::dumps (ambiguous)",
        // The implementation, never the two @overload stubs.
        "calls app/main.py::App.serve -> app/routing.py::parse#3 (import)",
        // `routing.build().dispatch()`: build's return annotation types the receiver.
        "calls app/main.py::App.serve -> app/routing.py::build (import)",
        "calls app/main.py::App.serve -> app/routing.py::Router.dispatch (typed)",
        // server.py: `app = App()` at module level, then `@app.get("/")`.
        "calls app/server.py -> app/main.py::App (import)",
        "calls app/server.py -> app/main.py::App.get (typed)",
        "calls app/server.py::index -> app/routing.py::Route (import)",
        "calls app/server.py::index -> app/routing.py::Route.handle (typed)",
        // A closure's receiver typed by the enclosing function's parameter.
        "calls app/server.py::make_handler.handler -> app/routing.py::Route.handle (typed)",
        "calls app/server.py::make_handler -> app/server.py::make_handler.handler (closure)",
        "calls app/server.py::setup -> app/routing.py::Router (import)",
        "calls app/server.py::setup -> app/routing.py::Router.add (typed)",
        // `with Session() as s`: `__enter__` returns self; `make_route = Route` is an alias.
        "calls app/server.py::use_session -> app/routing.py::Session (import)",
        "calls app/server.py::use_session -> app/routing.py::Session.close (typed)",
        "calls app/server.py::use_session -> app/routing.py::Route (import)",
        // `for route in self.routes` with `routes: list[Route]`.
        "calls app/routing.py::Table.run_all -> app/routing.py::Route.handle (typed)",
        // app/email/sender.py: `import email` is the standard library's, not app/email/.
    ]);
    assert_eq!(relation_set(&records), expected);
    // typing (twice), typing as t, sys, email, json, and email twice in sender.py.
    assert_eq!(summary_count(&records, "imports_external"), 8);
}

/// Issue 16, Rust: field types, `let` bindings, parameters, `T::new().m()`, `-> Self`; a method
/// of an impl for a slice keeps its impl; receivers of unknown type bind nothing.
#[test]
fn rust_typed_fixture_relations() {
    let records = records(&extract(&fixture("rust_typed"), false));
    let ids: Vec<String> = nodes(&records).iter().map(|n| n.id.clone()).collect();
    assert!(
        ids.contains(&"src/buf.rs::[u8]::index".to_string()),
        "{ids:?}"
    );
    let expected = expect_relations(&[
        "imports src/lib.rs -> src/buf.rs (import)",
        "imports src/lib.rs -> src/walk.rs (import)",
        "imports src/walk.rs -> src/buf.rs (import)",
        "calls src/walk.rs::Walker::new -> src/buf.rs::LineBuf::new (import)",
        // `buf: LineBuf`; never Other::buffer, and `node.kind()` (an outside type) nothing.
        "calls src/walk.rs::Walker::step -> src/buf.rs::LineBuf::buffer (typed)",
        "calls src/walk.rs::run -> src/walk.rs::Walker::deep (typed)",
        // `if let Some(s) = &self.stack` with `stack: Option<Box<LineBuf>>`.
        "calls src/walk.rs::Walker::deep -> src/buf.rs::LineBuf::buffer (typed)",
        // A tuple struct's field `self.0`, and a derived `Wrap::default()`.
        "calls src/buf.rs::Wrap::get -> src/buf.rs::LineBuf::buffer (typed)",
        "calls src/buf.rs::defaults -> src/buf.rs::Wrap::get (typed)",
        // A match arm's variant data, and loops over a slice and over `Vec::iter()`.
        "calls src/buf.rs::Source::bytes -> src/buf.rs::LineBuf::buffer (typed)",
        "calls src/buf.rs::all -> src/buf.rs::LineBuf::buffer (typed)",
        "calls src/buf.rs::all -> src/buf.rs::Wrap::get (typed)",
        // One element of a typed collection: `stack.pop().unwrap()`, `stack.first()`.
        "calls src/buf.rs::top -> src/buf.rs::Wrap::get (typed)",
        // Each arm's `c` is its own variant's: no guess between the two `paint`s.
        "calls src/buf.rs::Colour::paint -> src/buf.rs::Red::paint (typed)",
        "calls src/buf.rs::Colour::paint -> src/buf.rs::Blue::paint (typed)",
        // Generic bounds (`<S: Sink>`, `where W: Sink`), `&dyn Sink`, `impl Sink`: the
        // trait's method.
        "calls src/buf.rs::feed -> src/buf.rs::Sink::put (typed)",
        "calls src/walk.rs::start -> src/walk.rs::Walker::new (local)",
        "calls src/walk.rs::start -> src/walk.rs::Walker::deep (typed)",
        "calls src/walk.rs::start -> src/buf.rs::LineBuf::new (import)",
        "calls src/walk.rs::start -> src/buf.rs::LineBuf::buffer (typed)",
        // Inside a macro's arguments.
        "calls src/walk.rs::checks -> src/walk.rs::Walker::ready (typed)",
        "calls src/walk.rs::checks -> src/walk.rs::label (local)",
        // `#[cfg(unix)]` and `#[cfg(not(unix))]` variants: either one is compiled.
        "calls src/walk.rs::checks -> src/walk.rs::plat (ambiguous)",
        "calls src/walk.rs::checks -> src/walk.rs::plat#2 (ambiguous)",
        // `filter()` calls its parameter, never the #[cfg(test)] `tests::filter`.
    ]);
    assert_eq!(relation_set(&records), expected);
    // All four forms, each its own call site.
    let feed = records.iter().find_map(|r| match r {
        tg_shared::record::Record::Edge(e)
            if e.src == "src/buf.rs::feed" && e.dst == "src/buf.rs::Sink::put" =>
        {
            Some(e.count)
        }
        _ => None,
    });
    assert_eq!(feed, Some(4));
}

/// A two-package TypeScript monorepo with one JavaScript file: every construct of the
/// language's walker, and its import resolution (relative, index files, re-exports, default
/// exports, a workspace package by its package.json name, `require`, tsconfig `paths` and
/// `baseUrl` through `extends`). Written from reading the
/// fixture, before running the tool.
#[test]
fn typescript_fixture_nodes_are_exact() {
    let records = records(&extract(&fixture("typescript"), false));
    let core = "packages/core/src";
    let app = "packages/app/src";
    let owned: Vec<(String, &str, u32, u32)> = vec![
        (format!("{core}/index.ts"), "module", 1, 3),
        (format!("{core}/route.ts"), "module", 1, 18),
        (format!("{core}/route.ts::Route"), "class", 2, 7),
        (
            format!("{core}/route.ts::Route.constructor"),
            "method",
            3,
            3,
        ),
        (format!("{core}/route.ts::Route.handle"), "method", 4, 6),
        (format!("{core}/route.ts::Handler"), "trait", 9, 11),
        (format!("{core}/route.ts::Path"), "typedef", 13, 13),
        (format!("{core}/route.ts::Method"), "enum", 15, 18),
        (format!("{core}/router.ts"), "module", 1, 27),
        (format!("{core}/router.ts::Router"), "class", 3, 27),
        (
            format!("{core}/router.ts::Router.constructor"),
            "method",
            7,
            9,
        ),
        (format!("{core}/router.ts::Router.add"), "method", 11, 15),
        (format!("{core}/router.ts::Router.run"), "method", 17, 20),
        (format!("{core}/router.ts::Router.size"), "method", 22, 24),
        (format!("{core}/router.ts::Router.size#2"), "method", 26, 26),
        (format!("{core}/factory.ts"), "module", 1, 12),
        (format!("{core}/factory.ts::makeRouter"), "function", 3, 5),
        (
            format!("{core}/factory.ts::helpers.build"),
            "function",
            8,
            10,
        ),
        (
            format!("{core}/factory.ts::helpers.named"),
            "function",
            11,
            11,
        ),
        (format!("{app}/main.ts"), "module", 1, 24),
        (format!("{app}/main.ts::Server"), "mod", 5, 9),
        (format!("{app}/main.ts::Server.listen"), "function", 6, 8),
        (format!("{app}/main.ts::App"), "class", 11, 18),
        (format!("{app}/main.ts::App.constructor"), "method", 12, 12),
        (format!("{app}/main.ts::App.serve"), "method", 14, 17),
        (format!("{app}/start.js"), "module", 1, 13),
        (format!("{app}/start.js::start"), "function", 7, 10),
        (format!("{app}/start.js::first"), "function", 13, 13),
        (format!("{app}/paths.ts"), "module", 1, 7),
        (format!("{app}/paths.ts::viaPaths"), "function", 4, 7),
    ];
    let borrowed: Vec<(&str, &str, u32, u32)> = owned
        .iter()
        .map(|(id, kind, a, b)| (id.as_str(), *kind, *a, *b))
        .collect();
    assert_eq!(node_set(&records), expect_nodes(&borrowed));
    let route = nodes(&records)
        .into_iter()
        .find(|n| n.id == format!("{core}/route.ts::Route"))
        .expect("Route");
    assert_eq!(route.doc.as_deref(), Some("One route."));
    assert_eq!(route.signature.as_deref(), Some("export class Route"));
    let start = nodes(&records)
        .into_iter()
        .find(|n| n.id == format!("{app}/start.js::start"))
        .expect("start");
    assert_eq!(start.doc.as_deref(), Some("Starts serving."));
}

#[test]
fn typescript_fixture_relations() {
    let records = records(&extract(&fixture("typescript"), false));
    let expected: Vec<String> = [
        "imports C/index.ts -> C/router.ts (import)",
        "imports C/index.ts -> C/route.ts (import)",
        "imports C/index.ts -> C/factory.ts (import)",
        "imports C/router.ts -> C/route.ts (import)",
        "imports C/factory.ts -> C/router.ts (import)",
        "imports A/main.ts -> C/index.ts (import)",
        "imports A/main.ts -> A/start.js (import)",
        "imports A/start.js -> C/index.ts (import)",
        "inherits C/router.ts::Router -> C/route.ts::Handler (import)",
        // `new C()` reaches the class and its constructor.
        "calls C/router.ts::Router.constructor -> C/route.ts::Route (import)",
        "calls C/router.ts::Router.constructor -> C/route.ts::Route.constructor (import)",
        "calls C/router.ts::Router.add -> C/route.ts::Route (import)",
        "calls C/router.ts::Router.add -> C/route.ts::Route.constructor (import)",
        // A typed parameter, and a field assigned in the constructor.
        "calls C/router.ts::Router.run -> C/route.ts::Route.handle (typed)",
        "calls C/factory.ts::makeRouter -> C/router.ts::Router (import)",
        "calls C/factory.ts::makeRouter -> C/router.ts::Router.constructor (import)",
        "calls C/factory.ts::helpers.build -> C/factory.ts::makeRouter (local)",
        "calls C/factory.ts::helpers.named -> C/router.ts::Router (import)",
        "calls C/factory.ts::helpers.named -> C/router.ts::Router.constructor (import)",
        // Through the workspace package's name and its index's re-exports.
        "calls A/main.ts::Server.listen -> C/router.ts::Router.add (typed)",
        "calls A/main.ts::Server.listen -> C/route.ts::Route.handle (typed)",
        // A constructor's parameter property types `this.router`.
        "calls A/main.ts::App.serve -> C/router.ts::Router.run (typed)",
        "calls A/main.ts::App.serve -> C/router.ts::Router.add (typed)",
        "calls A/main.ts::App.serve -> A/main.ts::Server.listen (local)",
        "calls A/main.ts -> A/main.ts::App (local)",
        "calls A/main.ts -> A/main.ts::App.constructor (local)",
        // `export { default as makeRouter } from './factory'`, named and through `core.`.
        "calls A/main.ts -> C/factory.ts::makeRouter (import)",
        "calls A/main.ts -> A/main.ts::App.serve (typed)",
        "calls A/main.ts -> A/start.js::start (import)",
        // JavaScript: a JSDoc `@param {Router}` types the parameter.
        "calls A/start.js::start -> C/router.ts::Router.add (typed)",
        "calls A/start.js::start -> C/router.ts::Router (import)",
        "calls A/start.js::start -> C/router.ts::Router.constructor (import)",
        "calls A/start.js::first -> C/route.ts::Route (import)",
        "calls A/start.js::first -> C/route.ts::Route.constructor (import)",
        // tsconfig: `paths` from the extended base config, `baseUrl` from the package's own.
        "imports A/paths.ts -> C/router.ts (import)",
        "imports A/paths.ts -> A/start.js (import)",
        "calls A/paths.ts::viaPaths -> C/router.ts::Router (import)",
        "calls A/paths.ts::viaPaths -> C/router.ts::Router.constructor (import)",
        "calls A/paths.ts::viaPaths -> C/router.ts::Router.add (typed)",
        "calls A/paths.ts::viaPaths -> A/start.js::first (import)",
    ]
    .iter()
    .map(|r| {
        r.replace("C/", "packages/core/src/")
            .replace("A/", "packages/app/src/")
    })
    .collect();
    let expected: std::collections::BTreeSet<String> = expected.into_iter().collect();
    assert_eq!(relation_set(&records), expected);
}
