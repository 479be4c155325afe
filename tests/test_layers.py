"""The house rules of docs/architecture.md, checked on the package's source (deferred imports counted).

* each module imports only its own layer or the layers below it (the table LAYERS), and nothing
  imports the package root ``exactdp`` (it only re-exports);
* no import cycle, even through function-level imports;
* no private name (``_x``) imported from another module;
* no module over 700 lines;
* every float in the package is marked ``# float ok: why``, and no mark sits on a certified return
  path (a ``return`` of a function that answers with an Enclosure or a decision, or a line that
  builds an Enclosure).

Each rule is also run on a small synthetic package that breaks it, so the checks can fail.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "exactdp"

#: (module prefix, layer): a module may import modules of its own layer or of a lower one.  The
#: first matching prefix wins; docs/architecture.md explains each room.
LAYERS: tuple[tuple[str, int], ...] = (
    ("exactdp.core", 0),
    ("exactdp.model", 1),
    ("exactdp.engines", 2),
    ("exactdp.route", 3),
    ("exactdp.api", 4),
    ("exactdp.calibrate", 5),
    ("exactdp.query", 6),
    ("exactdp.plots", 7),
    ("exactdp.golden", 7),
    ("exactdp.testing", 7),
    ("exactdp.crosscheck", 7),
    ("exactdp.cli", 8),
    ("exactdp.__main__", 9),
)
LAYER_NAMES = {0: "core", 1: "model", 2: "engines", 3: "route", 4: "api", 5: "calibrate", 6: "query",
               7: "golden/testing/crosscheck/plots", 8: "cli", 9: "__main__"}
MAX_LINES = 700
FLOAT_USE = re.compile(r"\bfloat\(|math\.(exp|log|log1p|log2|sqrt|expm1)\(")
FLOAT_MARK = re.compile(r"#.*float ok")
#: where floats are the point (peer libraries' answers, plots): outside the certified engines
FLOAT_FREE_ZONES_EXEMPT = ("exactdp.testing", "exactdp.crosscheck", "exactdp.plots")
CERTIFIED_RETURNS = re.compile(r"\b(Enclosure|bool)\b")


@dataclass
class Graph:
    modules: dict[str, Path] = field(default_factory=dict)
    edges: dict[str, set[str]] = field(default_factory=dict)
    private: list[str] = field(default_factory=list)


def layer_of(module: str) -> int | None:
    for prefix, layer in LAYERS:
        if module == prefix or module.startswith(prefix + "."):
            return layer
    return None


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(current: str, is_pkg: bool, level: int, module: str | None) -> str:
    if level == 0:
        return module or ""
    parts = current.split(".")
    if not is_pkg:
        parts = parts[:-1]
    parts = parts[: len(parts) - (level - 1)]
    return ".".join(parts + ([module] if module else []))


def import_graph(root: Path) -> Graph:
    """Every import of the package's modules, at any depth in the file (deferred ones counted)."""
    g = Graph()
    pkg = root.name
    for path in sorted(root.rglob("*.py")):
        g.modules[_module_name(path, root)] = path

    def owner(name: str) -> str | None:
        while name and name not in g.modules:
            name = name.rpartition(".")[0]
        return name or None

    for mod, path in g.modules.items():
        is_pkg = path.name == "__init__.py"
        out: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                for a in node.names:
                    if a.name.split(".")[0] == pkg:
                        t = owner(a.name)
                        if t and t != mod:
                            out.add(t)
            elif isinstance(node, ast.ImportFrom):
                src = _resolve(mod, is_pkg, node.level, node.module)
                if src.split(".")[0] != pkg:
                    continue
                for a in node.names:
                    sub = f"{src}.{a.name}"
                    if sub in g.modules:
                        t: str | None = sub
                    else:
                        t = owner(src)
                        if a.name.startswith("_") and not a.name.startswith("__") and t != mod:
                            g.private.append(f"{mod} imports {a.name} from {t}")
                    if t and t != mod:
                        out.add(t)
        g.edges[mod] = out
    return g


def cycles(g: Graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = 0
    for start in g.edges:
        if start in index:
            continue
        work = [(start, iter(sorted(g.edges[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on.add(start)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(g.edges.get(w, ())))))
                    break
                if w in on:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        out.append(sorted(comp))
    return out


def upward_imports(g: Graph) -> list[str]:
    """Imports of a higher layer, of the package root, or from a module no layer claims."""
    bad = []
    pkg = PACKAGE.name
    for mod, targets in sorted(g.edges.items()):
        if mod == pkg:
            continue
        lm = layer_of(mod)
        if lm is None:
            bad.append(f"{mod} is in no layer (add it to LAYERS and docs/architecture.md)")
            continue
        for t in sorted(targets):
            if t == pkg:
                bad.append(f"{mod} imports the package root {pkg} (import the module that defines the name)")
                continue
            lt = layer_of(t)
            if lt is not None and lt > lm:
                bad.append(f"{mod} ({LAYER_NAMES[lm]}) imports {t} ({LAYER_NAMES[lt]})")
    return bad


def long_modules(g: Graph) -> list[str]:
    return [f"{m} ({n} lines)" for m, p in sorted(g.modules.items())
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES]


def float_findings(g: Graph) -> list[str]:
    """Unmarked floats, and marks on a certified return path."""
    bad = []
    for mod, path in sorted(g.modules.items()):
        if mod.startswith(FLOAT_FREE_ZONES_EXEMPT):
            continue
        text = path.read_text(encoding="utf-8")
        lines = text.splitlines()
        for i, line in enumerate(lines, 1):
            code = line.split("#", 1)[0]
            if FLOAT_USE.search(code) and not FLOAT_MARK.search(line) and ">>>" not in line:
                bad.append(f"{mod}:{i}: a float without a '# float ok: why' mark: {line.strip()}")
        marked = {i for i, line in enumerate(lines, 1) if FLOAT_MARK.search(line)}
        if not marked:
            continue
        for fn in ast.walk(ast.parse(text)):
            if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            certified = fn.returns is not None and CERTIFIED_RETURNS.search(ast.unparse(fn.returns)) is not None
            for node in ast.walk(fn):
                span = set(range(node.lineno, (node.end_lineno or node.lineno) + 1)) if hasattr(node, "lineno") else set()
                if certified and isinstance(node, ast.Return) and span & marked:
                    bad.append(f"{mod}:{min(span & marked)}: a float mark on a return of {fn.name} "
                               f"(which answers {ast.unparse(fn.returns)})")  # type: ignore[arg-type]
                if (isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[0] in ("Enclosure", "certify")
                        and span & marked):
                    bad.append(f"{mod}:{min(span & marked)}: a float mark on a line that builds an Enclosure")
    return sorted(set(bad))


@pytest.fixture(scope="module")
def graph() -> Graph:
    return import_graph(PACKAGE)


def test_no_import_cycle(graph: Graph) -> None:
    assert cycles(graph) == []


def test_no_private_name_imported_across_modules(graph: Graph) -> None:
    assert graph.private == []


def test_each_layer_imports_only_itself_and_below(graph: Graph) -> None:
    assert upward_imports(graph) == []


def test_no_module_over_700_lines(graph: Graph) -> None:
    assert long_modules(graph) == []


def test_floats_are_marked_and_off_the_certified_return_paths(graph: Graph) -> None:
    assert float_findings(graph) == []


def imports_of_the_derivations(root: Path) -> list[str]:
    """Import statements of the symbolic derivations (``proofs``, shipped as ``exactdp.proofs``).

    They sit outside the layers (docs/architecture.md): a client of the public functions, loaded by
    name only when ``exactdp proofs`` runs, so no module of the package may import them."""
    pkg = root.name
    shipped = (f"{pkg}.proofs", "proofs")
    bad = []
    for path in sorted(root.rglob("*.py")):
        mod = _module_name(path, root)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                src = _resolve(mod, path.name == "__init__.py", node.level, node.module)
                names = [src] + [f"{src}.{a.name}" for a in node.names]
            else:
                continue
            if any(n == s or n.startswith(s + ".") for n in names for s in shipped):
                bad.append(f"{mod} imports the derivations (line {node.lineno})")
    return bad


def test_no_module_imports_the_derivations() -> None:
    assert imports_of_the_derivations(PACKAGE) == []


# -- the checks can fail: a small package that breaks each rule ------------------------------------

def _write(root: Path, files: dict[str, str]) -> Path:
    pkg = root / "exactdp"
    for name, text in files.items():
        p = pkg / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text, encoding="utf-8")
    return pkg


def test_the_checks_catch_a_broken_package(tmp_path: Path) -> None:
    pkg = _write(tmp_path, {
        "__init__.py": "",
        "core/__init__.py": "",
        "core/a.py": "def f():\n    from exactdp.api.b import g\n    return g\n",      # upward, deferred
        "api/__init__.py": "",
        "api/b.py": "from exactdp.core.a import f\nfrom exactdp.core.c import _hidden\n",  # cycle, private
        "core/c.py": "import math\n_hidden = 1\n" + "x = 1\n" * 701                      # too long
                     + "def e() -> Enclosure:\n    return Enclosure(math.exp(1))  # float ok\n"
                     + "def h():\n    return math.log(2)\n",                               # unmarked
        "stray.py": "",
    })
    g = import_graph(pkg)
    assert cycles(g) == [["exactdp.api.b", "exactdp.core.a"]]
    assert g.private == ["exactdp.api.b imports _hidden from exactdp.core.c"]
    up = upward_imports(g)
    assert "exactdp.core.a (core) imports exactdp.api.b (api)" in up
    assert any("exactdp.stray is in no layer" in u for u in up)
    assert long_modules(g) == ["exactdp.core.c (707 lines)"]
    fl = float_findings(g)
    assert any("a float without a '# float ok: why' mark: return math.log(2)" in f for f in fl)
    assert any("a float mark on a return of e" in f for f in fl)
    assert any("builds an Enclosure" in f for f in fl)


def test_the_derivations_check_catches_an_import(tmp_path: Path) -> None:
    pkg = _write(tmp_path, {
        "__init__.py": "",
        "cli/__init__.py": "",
        "cli/a.py": "def f():\n    import exactdp.proofs.cli\n",
        "cli/b.py": "from exactdp import proofs\n",
        "cli/c.py": "from .. import proofs\nimport proofs\nimport importlib\nimportlib.import_module('exactdp.proofs')\n",
    })
    assert imports_of_the_derivations(pkg) == [
        "exactdp.cli.a imports the derivations (line 2)",
        "exactdp.cli.b imports the derivations (line 1)",
        "exactdp.cli.c imports the derivations (line 1)",
        "exactdp.cli.c imports the derivations (line 2)",
    ]
