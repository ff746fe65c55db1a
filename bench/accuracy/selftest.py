#!/usr/bin/env python3
"""Self-test of the ground-truth side of the accuracy scripts (no tg-extract needed).

usage: python3 bench/accuracy/selftest.py [-v]

Each test writes a small fixture repository into a temp dir and checks what the independent
resolvers consider true, so a change to a rule shows up here before it silently moves a score.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import py_attr_calls  # noqa: E402
import py_calls  # noqa: E402
import py_property_reads  # noqa: E402
import rust_test_code  # noqa: E402
from common import Stream, collect_defs, parse_python  # noqa: E402


def write_tree(root: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(textwrap.dedent(text))


class Fixture(unittest.TestCase):
    def setUp(self) -> None:
        self.root = tempfile.mkdtemp(prefix="tg-acc-")

    def tearDown(self) -> None:
        shutil.rmtree(self.root)


class DefIds(Fixture):
    def test_qualnames_kinds_and_repeats(self) -> None:
        write_tree(self.root, {"a.py": """
            import sys
            if sys.version_info > (3,):
                def f(): pass
            else:
                def f():
                    def inner(): pass
            class C:
                try:
                    def m(self): pass
                except Exception:
                    pass
                @property
                def p(self):
                    class Local:
                        def lm(self): pass
                    return Local
            def f(): pass
            """})
        defs = collect_defs(parse_python(self.root, "a.py"), "a.py")
        got = {d.id: (d.kind, d.node.lineno) for d in defs}
        self.assertEqual(got, {
            "a.py::f": ("function", 4), "a.py::f#2": ("function", 6),
            "a.py::f.inner": ("function", 7), "a.py::C": ("class", 8),
            "a.py::C.m": ("method", 10), "a.py::C.p": ("method", 14),
            "a.py::C.p.Local": ("class", 15), "a.py::C.p.Local.lm": ("method", 16),
            "a.py::f#3": ("function", 18),
        })


class Calls(Fixture):
    FILES = {
        "src/pkg/__init__.py": "from .util import helper\n",
        "src/pkg/util.py": """
            def helper(): return 1
            def twice(): pass
            if True:
                def twice(): pass
            def shadowed(): pass
            shadowed = 3
            """,
        "src/pkg/sub/other.py": "def f(): pass\n",
        "src/pkg/sub/mod.py": """
            from ..util import helper as h, twice, shadowed
            from .. import util
            import pkg.util as u
            from datetime import date
            from pkg.sub import other
            class C:
                def m(self): pass
                def get(self):
                    h(); twice(); shadowed(); util.helper(); u.helper(); other.f(); date()
                    self.m(); get(); self.nope(); super().m()
                    def inner(): self.m()
                if True:
                    def m2(self, x=helper2()): pass
            def get():
                helper2 = 1
                helper2()
            def helper2(): pass
            def f(a):
                @deco(helper2())
                def g(): helper2()
                class L:
                    def m(self): helper2(); get()
                    helper2()
                for get in a: pass
                return lambda h: h()
            def deco(x): return lambda fn: fn
            """,
        "tests/__init__.py": "",
        "tests/helpers.py": "def aid(): pass\n",
        "tests/test_a.py": "from pkg.sub.mod import get\nfrom .helpers import aid\n"
                           "def test_x():\n    get(); aid()\n",
        "star.py": "from os import *\ndef g(): pass\ndef h(): g()\n",
    }

    def test_certain_sites(self) -> None:
        write_tree(self.root, self.FILES)
        corpus = py_calls.Corpus(self.root)
        got = set()
        for m in corpus.modules.values():
            sites, _ = py_calls.call_sites(corpus, m)
            got |= {(s.rule, s.line, s.src.split("::")[1], s.dst) for s in sites}
        mod, util = "src/pkg/sub/mod.py", "src/pkg/util.py"
        self.assertEqual(got, {
            ("import", 10, "C.get", f"{util}::helper"),           # h() via `helper as h`
            ("module", 10, "C.get", f"{util}::helper"),           # util.helper(), u.helper()
            ("module", 10, "C.get", "src/pkg/sub/other.py::f"),   # other.f()
            ("self", 11, "C.get", f"{mod}::C.m"),
            ("local", 11, "C.get", f"{mod}::get"),               # not the method C.get
            ("local", 20, "f", f"{mod}::deco"),                  # decorator: the enclosing def
            ("local", 20, "f", f"{mod}::helper2"),
            ("local", 21, "f.g", f"{mod}::helper2"),
            ("local", 23, "f.L.m", f"{mod}::helper2"),           # get() there: f binds get
            ("import", 4, "test_x", f"{mod}::get"),              # absolute, from src/
            ("import", 4, "test_x", "tests/helpers.py::aid"),    # relative
        })


class FurtherCalls(Fixture):
    """py_calls.py's overload, conditional-definition and shadowed-import checks: what each takes
    as a case, and how a hand-made stream is scored."""
    FILES = {
        "app/__init__.py": "",
        "app/lib.py": """
            import sys
            import typing
            import typing as t
            from typing import overload

            @overload
            def conv(x: int) -> int: ...
            @typing.overload
            def conv(x: str) -> str: ...
            def conv(x): return x

            @t.overload
            def stubs_only(x: int) -> int: ...
            @overload
            def stubs_only(x: str) -> str: ...

            @overload
            def half(x: int) -> int: ...
            def half(x): return x
            def half(x, y=0): return x          # the middle def is no stub: not a group

            if sys.platform == "win32":
                def plat(): return 1
            elif sys.version_info > (3,):
                def plat(): return 2
            else:
                try:
                    def plat(): return 3
                except OSError:
                    def plat(): return 4

            try:
                from _speedups import fast
            except ImportError:
                if sys.maxsize > 2**32:
                    def fast(): return 64
                else:
                    def fast(): return 32

            try:
                from _speedups import slow
            except ValueError:                  # an import not backed by an ImportError fallback
                def slow(): pass
            else:
                def slow(): pass

            def plain(): pass
            if sys.flags.debug:
                def plain(): pass               # one def outside a conditional block: not a group

            with open(__file__):
                def inwith(): pass
            if True:
                def inwith(): pass              # a def under `with`: not a group

            class K:
                @overload
                def m(self, x: int) -> int: ...
                @overload
                def m(self, x: str) -> str: ...
                def m(self, x): return x
                def run(self):
                    self.m(1); conv(2); plat(); fast(); half(1); stubs_only(1); slow(); plain()
                    inwith()
            """,
        "app/use.py": """
            from app.lib import conv, plat as p, fast
            from app import lib
            def go(conv2=None):
                conv(1); p(); fast(); lib.conv(2); lib.plat(); lib.half(3)
            def shadow(plat):
                plat(); lib.fast()
            """,
        # Check 3: app/email/ below the root, stdlib `email` meant.
        "app/email/__init__.py": "def message_from_string(s): pass\ndef send(): pass\n",
        "app/email/utils.py": "def parseaddr(a): pass\n",
        "app/mailer.py": """
            import email
            import email.utils as eu
            from email import message_from_string
            from . import email as local_email
            def send_all():
                email.message_from_string("x"); eu.parseaddr("a"); message_from_string("y")
                local_email.send()
            def clash():
                email.send(); local_email.send()
            def unused(): pass
            class Box:
                parse = eu.parseaddr("b")
            def rebound():
                email = None
                email.send()
            """,
        "app/plain.py": "import email\nfrom email.utils import parseaddr\n"
                        "def f():\n    parseaddr('z')\n",
        "scripts/run.py": "import email\n",              # no __init__.py: a script, not a case
        "lib/pkg/__init__.py": "",
        "lib/pkg/a.py": "import pkg.b\nimport app\n",   # pkg resolves from lib/ (its package root)
        "lib/pkg/b.py": "",
    }

    def setUp(self) -> None:
        super().setUp()
        write_tree(self.root, self.FILES)
        self.corpus = py_calls.Corpus(self.root)
        self.extra = py_calls.Extra()
        self.shadow = {}
        for m in self.corpus.modules.values():
            py_calls.call_sites(self.corpus, m, self.extra)
            self.shadow[m.rel] = py_calls.shadowed(self.corpus, m)

    def test_overload_sites(self) -> None:
        got = {(x.rule, x.line, x.src.split("::")[1], x.impl.split("::")[1], len(x.stubs))
               for x in self.extra.overload}
        self.assertEqual(got, {
            ("self", 64, "K.run", "K.m#3", 2),
            ("local", 64, "K.run", "conv#3", 2),
            ("import", 5, "go", "conv#3", 2),
            ("module", 5, "go", "conv#3", 2),
        })
        self.assertEqual(py_calls.all_overload_stubs(self.corpus.modules["app/lib.py"]),
                         {"app/lib.py::conv", "app/lib.py::conv#2", "app/lib.py::K.m",
                          "app/lib.py::K.m#2"})

    def test_conditional_sites(self) -> None:
        got = {(x.rule, x.line, x.src.split("::")[1], x.defs) for x in self.extra.cond}
        lib = "app/lib.py::"
        plat = tuple(lib + n for n in ("plat", "plat#2", "plat#3", "plat#4"))
        fast = (lib + "fast", lib + "fast#2")
        self.assertEqual(got, {
            ("local", 64, "K.run", plat), ("local", 64, "K.run", fast),
            ("import", 5, "go", plat), ("import", 5, "go", fast), ("module", 5, "go", plat),
            # shadow(plat): the parameter, not the group; lib.fast() is a case
            ("module", 7, "shadow", fast),
        })

    def test_shadowed_sites(self) -> None:
        imports = {(x.file, x.line, x.text) for si, _, _, _ in self.shadow.values() for x in si}
        self.assertEqual(imports, {
            ("app/mailer.py", 2, "import email"), ("app/mailer.py", 3, "import email.utils as eu"),
            ("app/mailer.py", 4, "from email import message_from_string"),
            ("app/plain.py", 1, "import email"), ("app/plain.py", 2, "from email.utils import parseaddr"),
        })
        _, legit, calls, others = self.shadow["app/mailer.py"]
        self.assertIn("app/email/__init__.py", legit)          # through `from . import email`
        self.assertNotIn("app/email/utils.py", legit)
        got = {(c.line, c.src.split("::")[-1], c.name, c.via) for c in calls}
        self.assertEqual(got, {
            (7, "send_all", "message_from_string", "email"), (7, "send_all", "parseaddr", "eu"),
            (7, "send_all", "message_from_string", "message_from_string"),
            (10, "clash", "send", "email"),
            (13, "Box", "parseaddr", "eu"),
        })
        self.assertIn(("app/mailer.py::send_all", "send"), others)      # local_email.send()
        self.assertIn(("app/mailer.py::rebound", "send"), others)       # email rebound locally
        self.assertIn(("app/mailer.py::clash", "send"), others)         # not judged

    def test_scoring(self) -> None:
        lib, use, ml = "app/lib.py::", "app/use.py::", "app/mailer.py::"
        calls = [
            {"kind": "calls", "src": lib + "K.run", "dst": lib + "K.m#3", "resolution": "self"},
            {"kind": "calls", "src": lib + "K.run", "dst": lib + "conv", "resolution": "local"},
            {"kind": "calls", "src": use + "go", "dst": lib + "conv#3", "resolution": "import"},
            {"kind": "calls", "src": use + "shadow", "dst": lib + "conv#2", "resolution": "unique"},
        ] + [{"kind": "calls", "src": lib + "K.run", "dst": lib + d, "resolution": "ambiguous"}
             for d in ("plat", "plat#2", "plat#3", "plat#4", "fast", "fast#2")] + [
            {"kind": "calls", "src": use + "go", "dst": lib + "plat", "resolution": "ambiguous"},
            {"kind": "calls", "src": use + "go", "dst": lib + "plat#2", "resolution": "import"},
            {"kind": "calls", "src": use + "go", "dst": lib + "plat#3", "resolution": "ambiguous"},
            {"kind": "calls", "src": use + "go", "dst": lib + "plat#4", "resolution": "ambiguous"},
            {"kind": "calls", "src": use + "go", "dst": lib + "fast", "resolution": "ambiguous"},
        ]
        stubs = py_calls.all_overload_stubs(self.corpus.modules["app/lib.py"])
        ov = py_calls.score_overloads(self.extra.overload, calls, stubs)
        # pairs: (K.run, K.m#3) hit, (K.run, conv#3) missed, (go, conv#3) hit
        self.assertEqual((ov["pairs_hit"], ov["pairs"], ov["stub_edges"], ov["stub_edges_anywhere"]),
                         (2, 3, 1, 2))
        cd = py_calls.score_conds(self.extra.cond, calls)
        # cases: (K.run, plat) ok, (K.run, fast) ok, (go, plat) all reached but one edge `import`,
        # (go, fast) one def missing, (shadow, fast) no edge
        self.assertEqual((cd["ok"], cd["cases"], cd["reached_all"]), (2, 5, 3))

        s = Stream()
        for rel in self.corpus.modules:
            s.files[rel] = {"path": rel}
        s.edges = [
            {"kind": "imports", "src": "app/mailer.py", "dst": "app/email/__init__.py", "line": 5},
            {"kind": "imports", "src": "app/mailer.py", "dst": "app/email/utils.py", "line": 3},
            {"kind": "imports", "src": "app/plain.py", "dst": "app/email/__init__.py", "line": 1},
            {"kind": "calls", "src": ml + "send_all", "dst": "app/email/__init__.py::send"},
            {"kind": "calls", "src": ml + "send_all", "dst": "app/email/utils.py::parseaddr"},
            {"kind": "calls", "src": ml + "clash", "dst": "app/email/__init__.py::send"},
            {"kind": "calls", "src": ml + "Box", "dst": "app/email/utils.py::parseaddr"},
            {"kind": "calls", "src": "app/plain.py::f", "dst": "app/email/utils.py::parseaddr"},
        ]
        imports, calls_, others = [], [], set()
        legit = {}
        for rel, (si, lg, sc, so) in self.shadow.items():
            imports += si
            calls_ += sc
            others |= so
            legit[rel] = lg
        sh = py_calls.score_shadowed(imports, legit, calls_, others, s)
        # imports: mailer -> email/utils.py and plain -> email/__init__.py (mailer -> email/__init__
        # is excused by `from . import email`); calls: send_all -> parseaddr, Box -> parseaddr,
        # plain.f -> parseaddr (send_all -> send is local_email.send(); clash -> send is not judged,
        # clash calling send both through `email` and through local_email)
        self.assertEqual((sh["import_violations"], sh["call_violations"]), (2, 3))


class AttrCalls(Fixture):
    """py_attr_calls.py: callers (decorators and defaults belong to the scope around the def),
    Jedi's verdicts, and the scoring against a hand-made stream."""
    FILES = {
        "pkg/__init__.py": "",
        "pkg/store.py": """\
            class Store:
                def get(self, key):
                    return key

                def put(self, key, value):
                    pass


            class Service:
                def __init__(self):
                    self.store = Store()

                def run(self):
                    self.store.get(1)
                    Store().put(1, 2)
                    d = {}
                    return d.get(1)


            def make():
                return Store()


            build = make
            """,
        "pkg/app.py": """\
            from pkg import store


            class App:
                def route(self, path):
                    return lambda fn: fn


            app = App()


            @app.route("/")
            def index(x=store.Store().get(0)):
                return store.Service().run()


            class Handler:
                limit = store.Store().get(3)


            store.build()
            """,
    }

    @classmethod
    def setUpClass(cls) -> None:
        # One fixture and one round of Jedi for both tests (Jedi needs no network).
        if py_attr_calls.jedi is None:
            print("note: jedi is not installed (bash bench/accuracy/deps_python.sh); "
                  "the py_attr_calls tests are skipped", file=sys.stderr)
            raise unittest.SkipTest("jedi not installed")
        cls.root = tempfile.mkdtemp(prefix="tg-acc-")
        write_tree(cls.root, cls.FILES)
        cls.corpus = py_attr_calls.Corpus.load(cls.root)
        cls.sample = cls.corpus.sample(1000, 1)
        cls.sib = py_attr_calls.sibling_index(cls.corpus)
        judge = py_attr_calls.Judge(cls.corpus)
        cls.verdicts = py_attr_calls.judge_sample(cls.corpus, cls.sample, judge, cls.sib)

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.root)

    def setUp(self) -> None:            # the class-wide fixture above, not one per test
        pass

    def tearDown(self) -> None:
        pass

    def test_callers_and_verdicts(self) -> None:
        got = set()
        for s in self.sample:
            v = self.verdicts[s]
            target = f"{v.file}:{v.line}:{v.name}" if v.status == "repo" else v.detail
            got.add((s.file, s.line, s.caller, s.name, s.shape, s.decorator, v.status, target))
        st, ap = "pkg/store.py", "pkg/app.py"
        self.assertEqual(got, {
            (st, 14, f"{st}::Service.run", "get", "self.a.m", False, "repo", f"{st}:2:get"),
            (st, 15, f"{st}::Service.run", "put", "call().m", False, "repo", f"{st}:5:put"),
            (st, 17, f"{st}::Service.run", "get", "name.m", False, "outside", "builtins.dict.get"),
            (ap, 12, ap, "route", "name.m", True, "repo", f"{ap}:5:route"),     # decorator
            (ap, 13, ap, "Store", "name.m", False, "repo", f"{st}:1:Store"),    # default value
            (ap, 13, ap, "get", "call().m", False, "repo", f"{st}:2:get"),
            (ap, 14, f"{ap}::index", "Service", "name.m", False, "repo", f"{st}:9:Service"),
            (ap, 14, f"{ap}::index", "run", "call().m", False, "repo", f"{st}:13:run"),
            (ap, 18, f"{ap}::Handler", "Store", "name.m", False, "repo", f"{st}:1:Store"),
            (ap, 18, f"{ap}::Handler", "get", "call().m", False, "repo", f"{st}:2:get"),
            (ap, 21, ap, "build", "name.m", False, "repo", f"{st}:20:make"),    # alias
        })

    def test_scoring(self) -> None:
        s = Stream()
        for rel in ("pkg/__init__.py", "pkg/store.py", "pkg/app.py"):
            s.files[rel] = {"path": rel}
            s.nodes[rel] = {"id": rel, "kind": "module", "file": rel, "name": rel}
            for d in collect_defs(parse_python(self.root, rel), rel):
                # Spans that start at the first decorator line: mapping must not care.
                first = min([d.node.lineno] + [x.lineno for x in d.node.decorator_list])
                s.nodes[d.id] = {"id": d.id, "file": rel, "name": d.node.name,
                                 "line_start": first, "line_end": d.node.end_lineno}
        st, ap = "pkg/store.py", "pkg/app.py"
        s.edges = [{"kind": "calls", "src": f"{st}::Service.run", "dst": f"{st}::Store.get"},
                   {"kind": "calls", "src": f"{st}::Service.run", "dst": f"{ap}::Other.get"},
                   {"kind": "calls", "src": f"{st}::Service.run", "dst": f"{st}::Store.put"},
                   {"kind": "calls", "src": ap, "dst": f"{ap}::App.route"},
                   {"kind": "calls", "src": ap, "dst": f"{st}::Store.__init__"},
                   {"kind": "calls", "src": f"{ap}::index", "dst": f"{st}::Service.run"},
                   {"kind": "calls", "src": f"{ap}::index", "dst": f"{ap}::index.run",
                    "resolution": "closure"}]
        res = py_attr_calls.score_corpus(self.corpus, self.sample, self.verdicts, self.sib, s)
        # 10 repo sites; hits: get, put (Service.run), route, Store via __init__ (module), run.
        self.assertEqual((res["hits"], res["resolved"]), (5, 10))
        # Keys with same-named edges: (Service.run, get) 1 of 2 right (Other.get is wrong, the
        # d.get() site being outside), (Service.run, put), (app, route), (index, run): 4 of 5.
        self.assertEqual((res["prec_good"], res["prec_total"]), (4, 5))


def typescript_missing() -> str | None:
    """Why ts_oracle.mjs cannot run here, or None."""
    node = os.environ.get("NODE", "node")
    if not shutil.which(node):
        return f"{node} not on PATH"
    prefix = os.environ.get("TG_TS_PREFIX") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tldrgraph-accuracy", "ts")
    if not os.path.isfile(os.path.join(prefix, "node_modules", "typescript", "package.json")):
        return f"typescript not installed under {prefix} (bash bench/accuracy/deps_ts.sh)"
    return None


class PropertyReads(unittest.TestCase):
    """py_property_reads.py: which attribute reads are sites, and Jedi's verdicts on them (a
    read Jedi gives as the setter, or as `self.n = ...` in the class, is the getter's)."""

    FILES = {
        "pkg/m.py": """
            class A:
                def __init__(self):
                    self.n = 0

                @property
                def n(self):
                    return self._n

                @n.setter
                def n(self, v):
                    self._n = v

                def use(self):
                    x = self.n
                    self.n = 3
                    self.n += 1
                    self.other()
                    return x


            def f(a: A):
                return a.n
        """,
    }

    def test_sites_and_verdicts(self) -> None:
        if py_attr_calls.jedi is None:
            raise unittest.SkipTest("jedi not installed")
        root = tempfile.mkdtemp(prefix="tg-acc-")
        self.addCleanup(shutil.rmtree, root, True)
        write_tree(root, self.FILES)
        trees, getters, aliases = py_property_reads.corpus_getters(root)
        self.assertEqual(getters, {("pkg/m.py", 7, "n")})
        sites = py_property_reads.sites_of(trees["pkg/m.py"], "pkg/m.py", {"n", "other"})
        # The read, the read of `+=` and `a.n`; not the writes, not the call `self.other()`.
        self.assertEqual([(s[1], s[3], s[4]) for s in sites],
                         [(15, "n", ("use", 14)), (17, "n", ("use", 14)), (23, "n", ("f", 22))])
        verdicts = py_property_reads.judge(os.path.realpath(root), sites, getters, aliases)
        self.assertEqual(verdicts[sites[0]], ("getter", ("pkg/m.py", "n", 7)))
        self.assertEqual(verdicts[sites[2]], ("getter", ("pkg/m.py", "n", 7)))


class RustTestCode(Fixture):
    """rust_test_code.py: rustc's dep-info tells a file only the test build compiles, and libtest
    lists the `#[test]` functions, not their helpers (a crate without dependencies builds offline)."""

    def test_test_only_files_and_listed_tests(self) -> None:
        if shutil.which("cargo") is None:
            raise unittest.SkipTest("cargo not installed")
        write_tree(self.root, {
            "Cargo.toml": """
                [package]
                name = "tiny-crate"
                version = "0.1.0"
                edition = "2021"
            """,
            "src/lib.rs": """
                mod helper;
                #[cfg(test)]
                mod tests;
                pub fn f() -> u32 { helper::h() }
            """,
            "src/helper.rs": "pub fn h() -> u32 { 1 }\n",
            "src/tests.rs": """
                fn aid() -> u32 { super::f() }
                #[test]
                fn works() { assert_eq!(aid(), 1); }
            """,
        })
        product, test_only, tests = rust_test_code.build_truth(self.root, "")
        self.assertEqual(product, {"src/lib.rs", "src/helper.rs"})
        self.assertEqual(test_only, {"src/tests.rs"})
        self.assertEqual(tests, {"tests::works"})


class TypeScript(unittest.TestCase):
    """ts_oracle.mjs on a hand-written tree (expected declarations and calls written by hand), and
    ts_defs.py / ts_calls.py scoring a hand-made stream against it."""
    FILES = {
        "package.json": '{"name": "fix", "private": true, "workspaces": ["packages/*"]}\n',
        "packages/a/package.json": '{"name": "@x/a", "main": "dist/index.js"}\n',
        "packages/a/src/index.ts": "export function fa() {}\n",
        "packages/b/package.json": '{"name": "@x/b", "main": "dist/index.js"}\n',
        "packages/b/src/index.ts": "import { fa } from '@x/a';\nexport function fb() {\n  fa();\n}\n",
        "src/util.ts": """\
            /** doc */
            export function add(a: number, b: number): number {
              return a + b;
            }
            export function over(x: string): string;
            export function over(x: number): number;
            export function over(x: any): any {
              return x;
            }
            export const twice = (f: () => void) => {
              f();
              f();
            };
            export const helpers = {
              hello() {
                return add(1, 2);
              },
              bye: () => over(1),
              value: 3,
            } as const;
            export default function () {
              return twice(() => add(0, 0));
            }
            """,
        "src/model.ts": """\
            import def, { add, over as ov, helpers } from './util';

            function deco(_t: unknown, _c: unknown) {}

            export abstract class Base {
              constructor(public n: number) {}
              abstract run(): void;
              get v(): number { return this.n; }
              set v(x: number) { this.n = x; }
            }

            @deco
            export class Model extends Base {
              handler = () => add(1, 2);
              count = add(3, 4);
              run(): void {
                const inner = function () { return ov('a'); };
                inner();
                this.handler();
                helpers.hello();
              }
            }

            export namespace A.B {
              export function f() { return def(); }
            }
            export interface Shape { area(): number }
            export type Id = string;
            export enum Color { Red, Green }
            const Anon = class {
              m() { return 1; }
            };
            export function make() {
              const m = new Model(1);
              new Anon();
              A.B.f();
              return m;
            }
            make();
            """,
        "src/edge.ts": """\
            type Fn = (n: number) => number;
            export const typed: Fn = (n) => n;
            class P { constructor(readonly a: number) {} }
            class Q extends P {
              constructor() { super(1); }
            }
            class R extends P {}
            class S { go() { return 1; } }
            class T { go() { return 2; } }
            export function edge(x: S | T) {
              typed(1);
              new R(2);
              new Q();
              x.go();
            }
            declare module "ext" {
              export interface Ext { a: number }
            }
            declare global {
              interface Window { x: number }
            }
            const local = { m() { return edge; } };
            export const viaSat = { k: function () { return local.m(); } } satisfies Record<string, () => unknown>;
            """,
        "src/view.tsx": "import { add } from './util';\nexport const App = () => <div>{add(1, 2)}</div>;\n",
        "lib/b.js": """\
            class Greeter {
              greet(name) {
                return helper(name);
              }
            }
            function helper(n) {
              return 'hi ' + n;
            }
            module.exports = { Greeter, helper };
            """,
        "lib/a.js": "const { Greeter } = require('./b');\nconst g = new Greeter();\ng.greet('x');\n",
        "node_modules/dep/index.ts": "export function hidden() {}\n",
        ".cache/x.ts": "export function hidden() {}\n",
    }

    @classmethod
    def setUpClass(cls) -> None:
        why = typescript_missing()
        if why:
            print(f"SKIPPED: the TypeScript oracle tests: {why}", file=sys.stderr)
            raise unittest.SkipTest(why)
        cls.root = tempfile.mkdtemp(prefix="tg-acc-ts-")
        write_tree(cls.root, cls.FILES)
        out = subprocess.run([os.environ.get("NODE", "node"), os.path.join(HERE, "ts_oracle.mjs"),
                              cls.root], capture_output=True, text=True, check=True)
        cls.doc = json.loads(out.stdout)
        cls.truth_file = os.path.join(cls.root, ".truth.json")   # a dot-file: not walked
        with open(cls.truth_file, "w", encoding="utf-8") as fh:
            fh.write(out.stdout)

    @classmethod
    def tearDownClass(cls) -> None:
        shutil.rmtree(cls.root)

    def test_files(self) -> None:
        self.assertEqual([(f["path"], f["lang"]) for f in self.doc["files"]], [
            ("lib/a.js", "javascript"), ("lib/b.js", "javascript"),
            ("packages/a/src/index.ts", "typescript"), ("packages/b/src/index.ts", "typescript"),
            ("src/edge.ts", "typescript"), ("src/model.ts", "typescript"),
            ("src/util.ts", "typescript"), ("src/view.tsx", "typescript")])

    def test_declarations(self) -> None:
        got = {(d["file"], d["qualname"], d["kind"], d["line_start"], d["line_end"], d["name_line"])
               for d in self.doc["declarations"]}
        u, m, e = "src/util.ts", "src/model.ts", "src/edge.ts"
        self.assertEqual(got, {
            ("lib/b.js", "Greeter", "class", 1, 5, 1), ("lib/b.js", "Greeter.greet", "method", 2, 4, 2),
            ("lib/b.js", "helper", "function", 6, 8, 6),
            ("packages/a/src/index.ts", "fa", "function", 1, 1, 1),
            ("packages/b/src/index.ts", "fb", "function", 2, 4, 2),
            (u, "add", "function", 2, 4, 2),                  # the JSDoc line is not part of it
            (u, "over", "function", 7, 9, 7),                 # overload signatures are not counted
            (u, "twice", "function", 10, 13, 10),             # the whole VariableStatement
            (u, "helpers.hello", "function", 15, 17, 15), (u, "helpers.bye", "function", 18, 18, 18),
            (u, "default", "function", 21, 23, 21),
            (m, "deco", "function", 3, 3, 3), (m, "Base", "class", 5, 10, 5),
            (m, "Base.constructor", "method", 6, 6, 6), (m, "Base.run", "method", 7, 7, 7),
            (m, "Base.v", "method", 8, 8, 8), (m, "Base.v#2", "method", 9, 9, 9),
            (m, "Model", "class", 12, 22, 13),                # from the decorator
            (m, "Model.handler", "method", 14, 14, 14), (m, "Model.run", "method", 16, 21, 16),
            (m, "Model.run.inner", "function", 17, 17, 17),
            (m, "A", "mod", 24, 26, 24), (m, "A.B", "mod", 24, 26, 24), (m, "A.B.f", "function", 25, 25, 25),
            (m, "Shape", "trait", 27, 27, 27), (m, "Id", "typedef", 28, 28, 28),
            (m, "Color", "enum", 29, 29, 29), (m, "Anon", "class", 30, 32, 30),
            (m, "Anon.m", "method", 31, 31, 31), (m, "make", "function", 33, 38, 33),
            (e, "Fn", "typedef", 1, 1, 1), (e, "typed", "function", 2, 2, 2),
            (e, "P", "class", 3, 3, 3), (e, "P.constructor", "method", 3, 3, 3),
            (e, "Q", "class", 4, 6, 4), (e, "Q.constructor", "method", 5, 5, 5),
            (e, "R", "class", 7, 7, 7), (e, "S", "class", 8, 8, 8), (e, "S.go", "method", 8, 8, 8),
            (e, "T", "class", 9, 9, 9), (e, "T.go", "method", 9, 9, 9),
            (e, "edge", "function", 10, 15, 10),
            (e, "Ext", "trait", 17, 17, 17),                  # `declare module "ext"` is transparent
            (e, "Window", "trait", 20, 20, 20),               # so is `declare global`
            (e, "viaSat.k", "function", 23, 23, 23),          # `local` is not exported: not counted
            ("src/view.tsx", "App", "function", 2, 2, 2),
        })

    def test_calls(self) -> None:
        got = {(c["file"], c["line"], c["caller"], c["callee_file"], c["callee_qualname"], c["via"])
               for c in self.doc["calls"]}
        u, m, e = "src/util.ts", "src/model.ts", "src/edge.ts"
        self.assertEqual(got, {
            ("lib/a.js", 2, "<module>", "lib/b.js", "Greeter", "new"),
            ("lib/a.js", 3, "<module>", "lib/b.js", "Greeter.greet", "call"),
            ("lib/b.js", 3, "Greeter.greet", "lib/b.js", "helper", "call"),
            ("packages/b/src/index.ts", 3, "fb", "packages/a/src/index.ts", "fa", "call"),  # workspace
            (u, 16, "helpers.hello", u, "add", "call"),
            (u, 18, "helpers.bye", u, "over", "call"),         # an overload: the implementation
            (u, 22, "default", u, "twice", "call"),
            (u, 22, "default", u, "add", "call"),              # in an anonymous arrow: its function
            (m, 12, "Model", m, "deco", "call"),               # a decorator: the class it decorates
            (m, 14, "Model.handler", u, "add", "call"),
            (m, 15, "Model", u, "add", "call"),                # a field initializer: the class
            (m, 17, "Model.run.inner", u, "over", "call"),     # through `over as ov`
            (m, 18, "Model.run", m, "Model.run.inner", "call"),
            (m, 19, "Model.run", m, "Model.handler", "call"),
            (m, 20, "Model.run", u, "helpers.hello", "call"),
            (m, 25, "A.B.f", u, "default", "call"),
            (m, 34, "make", m, "Model", "new"), (m, 35, "make", m, "Anon", "new"),
            (m, 36, "make", m, "A.B.f", "call"), (m, 39, "<module>", m, "make", "call"),
            (e, 5, "Q.constructor", e, "P", "super"),
            (e, 11, "edge", e, "typed", "call"),               # declared type: the variable's arrow
            (e, 12, "edge", e, "R", "new"),                    # not P's constructor
            (e, 13, "edge", e, "Q", "new"),
            ("src/view.tsx", 2, "App", u, "add", "call"),
        })
        self.assertEqual({(x["file"], x["line"], x["caller"], x["name"], x["reason"])
                          for x in self.doc["unjudged"]}, {
            (e, 14, "edge", "go", "ambiguous"),                # (S | T).go()
            (e, 23, "viaSat.k", "m", "uncounted MethodDeclaration"),
            (u, 11, "twice", "f", "uncounted FunctionType"), (u, 12, "twice", "f", "uncounted FunctionType"),
        })
        self.assertEqual(self.doc["summary"]["dropped"]["module_loads"], 1)      # require('./b')

    def stream(self) -> list[dict]:
        """The oracle's declarations as nodes, with changes: src/model.ts::Base.v#2 missing, a wrong
        line, an extra node; calls: all truth but one, `new Q()` as Q.constructor, a wrong edge, a
        wrong edge at an unjudged site, a closure edge."""
        recs = [{"type": "header", "schema": "1.0", "producer": "test", "root": "."}]
        for f in self.doc["files"]:
            recs.append({"type": "file", "path": f["path"], "lang": f["lang"]})
            recs.append({"type": "node", "id": f["path"], "kind": "module", "name": f["path"],
                         "file": f["path"], "line_start": 1, "line_end": 1})
        for d in self.doc["declarations"]:
            if d["qualname"] == "Base.v#2":
                continue
            end = d["line_end"] + (1 if d["qualname"] == "Model.run" else 0)
            recs.append({"type": "node", "id": f"{d['file']}::{d['qualname']}", "kind": d["kind"],
                         "name": d["name"], "file": d["file"], "line_start": d["line_start"], "line_end": end})
        recs.append({"type": "node", "id": "src/model.ts::Model.count", "kind": "method", "name": "count",
                     "file": "src/model.ts", "line_start": 15, "line_end": 15})
        e = "src/edge.ts::"
        for c in self.doc["calls"]:
            src = c["file"] if c["caller"] == "<module>" else f"{c['file']}::{c['caller']}"
            dst = f"{c['callee_file']}::{c['callee_qualname']}"
            if dst == "src/util.ts::twice":
                continue
            if dst == e + "Q":
                dst = e + "Q.constructor"
            recs.append({"type": "edge", "kind": "calls", "src": src, "dst": dst, "line": c["line"],
                         "resolution": "import"})
        recs += [{"type": "edge", "kind": "calls", "src": e + "edge", "dst": e + "S.go", "line": 14,
                  "resolution": "unique"},
                 {"type": "edge", "kind": "calls", "src": e + "edge", "dst": e + "P", "line": 12,
                  "resolution": "local"},
                 {"type": "edge", "kind": "calls", "src": e + "edge", "dst": e + "T.go", "line": 14,
                  "resolution": "closure"},
                 {"type": "summary", "stage": "test"}]
        return recs

    def test_scoring(self) -> None:
        path = os.path.join(self.root, ".stream.ndjson")
        with open(path, "w", encoding="utf-8") as fh:
            fh.writelines(json.dumps(r) + "\n" for r in self.stream())
        out = subprocess.run([sys.executable, os.path.join(HERE, "ts_defs.py"), self.root, path,
                              "--truth", self.truth_file], capture_output=True, text=True)
        r = json.loads(out.stdout)
        self.assertEqual((r["truth"], r["stream"], r["matched"]), (46, 46, 45))
        self.assertEqual(round(r["lines"] * 45), 44)
        self.assertEqual(out.returncode, 1)
        out = subprocess.run([sys.executable, os.path.join(HERE, "ts_calls.py"), self.root, path,
                              "--truth", self.truth_file, "--min-pairs", "1"],
                             capture_output=True, text=True)
        c = json.loads(out.stdout)["corpora"][0]
        # 25 truth pairs, 24 hit (twice missing; Q via its constructor counts); 26 edges judged
        # (the closure edge is not), 24 right; one wrong edge (edge -> S.go) is at an unjudged site.
        self.assertEqual((c["pairs"], round(c["recall"] * 25), c["edges_in_scope"]), (25, 24, 26))
        self.assertEqual((round(c["precision"] * 26), round(c["precision_judged"] * 25)), (24, 24))


@unittest.skipUnless(shutil.which("ctags"), "universal-ctags not on PATH")
class CTags(Fixture):
    def test_definitions_only(self) -> None:
        write_tree(self.root, {"x.h": """
            struct point { int x, y; };
            typedef struct { int a; } anon_t;
            union u { int i; float f; };
            enum color { RED, GREEN };
            int proto(int a);
            #define SQUARE(x) ((x) * (x))
            """, "x.c": """
            #include "x.h"
            static int
            helper(int a)
            {
                return a;
            }
            int proto(int a) { return helper(a); }
            """})
        out = subprocess.run([sys.executable, os.path.join(HERE, "c_defs.py"), self.root,
                              "--truth-only"], capture_output=True, text=True, check=True)
        counts = json.loads(out.stdout)["truth_by_kind"]
        self.assertEqual(counts, {"struct": 1, "union": 1, "enum": 1, "function": 2})


if __name__ == "__main__":
    unittest.main()
