"""One-way layers, checked on the import graph of the source (imports inside functions count
too): each module imports only from layers below its own, no two modules import each other (directly or through
others), and `import augmenter.policies` needs neither gymnasium nor torch."""

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = {"augmenter": ROOT / "augmenter", "augmenter.envs": ROOT / "envs", "augmenter.policies": ROOT / "policies"}
# top to bottom; packages on one line are siblings and may import each other. Only the CLI and the public API
# (with augmenter.config, which turns Hydra configs into objects) build objects from config.
LAYERS = [
    {"augmenter.cli", "augmenter.api", "augmenter.serve"},
    {"augmenter.config", "augmenter.config_schema"},
    {"augmenter.eval", "augmenter.envs", "augmenter.policies", "augmenter.judges", "augmenter.audit"},
    {"augmenter.agent", "augmenter.fingerprint", "augmenter.documents"},
    # reviews as knowledge (opinions, their judge, replies) sit beside the consolidator and the checks that use them
    {
        "augmenter.knowledge",
        "augmenter.prompts",
        "augmenter.utilities",
        "augmenter.verification",
        "augmenter.llm",
        "augmenter.tasks",
        "augmenter.reviews",
    },
    {"augmenter.memory"},
    {"augmenter.text"},
    {
        "augmenter.errors",
        "augmenter.extras",
        "augmenter.paths",
        "augmenter.redact",
        "augmenter.settings",
        "augmenter.storage",
        "augmenter",
    },
]


def _modules() -> dict[str, Path]:
    found = {}
    for package, folder in SOURCES.items():
        for path in folder.rglob("*.py"):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            name = ".".join([package, *parts])
            if not any(name.startswith(p + ".") for p in SOURCES if p != package and p.startswith(package + ".")):
                found[name] = path
    return found


def _imports(name: str, path: Path, known: set[str]) -> set[str]:
    """The project modules `name` imports (the longest known prefix of each imported name)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
            names = [f"{base}.{a.name}" for a in node.names] + [base]
        else:
            continue
        for full in names:
            while full and full not in known:
                full = full.rpartition(".")[0]
            if full and full != name:
                targets.add(full)
    return targets


def _graph() -> dict[str, set[str]]:
    modules = _modules()
    return {name: _imports(name, path, set(modules)) for name, path in modules.items()}


def _layer(module: str) -> int:
    for depth in range(module.count(".") + 1, 0, -1):
        prefix = ".".join(module.split(".")[:depth])
        for i, layer in enumerate(LAYERS):
            if prefix in layer:
                return i
    raise AssertionError(f"{module} is in no layer: add it to LAYERS")


def test_every_import_goes_down_the_layers():
    graph = _graph()
    upward = sorted((a, b) for a, targets in graph.items() for b in targets if _layer(b) < _layer(a))
    assert upward == []


def _reaches(edges: dict, start: str, goal: str, follow=lambda node, target: True) -> bool:
    """Whether `goal` is reachable from `start` along `edges` (only the edges `follow` accepts)."""
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo += [t for t in edges.get(node, ()) if follow(node, t)]
    return False


def test_no_import_cycles():
    graph = _graph()

    def own(node, target):
        return not _is_package_of(target, node)

    cycles = sorted(
        {
            tuple(sorted((a, b)))
            for a, targets in graph.items()
            for b in targets
            if not _is_package_of(b, a) and not _is_package_of(a, b) and _reaches(graph, b, a, own)
        }
    )
    assert cycles == []


def test_no_import_cycles_between_sub_packages():
    """Siblings of one layer may import each other, but never both ways, not even through a third."""

    def package(module: str) -> str:
        return ".".join(module.split(".")[:2])

    edges: dict[str, set[str]] = {}
    for a, targets in _graph().items():
        for b in targets:
            if package(a) != package(b):
                edges.setdefault(package(a), set()).add(package(b))

    cycles = sorted({tuple(sorted((a, b))) for a, targets in edges.items() for b in targets if _reaches(edges, b, a)})
    assert cycles == []


def _is_package_of(package: str, module: str) -> bool:
    """Importing a package's own __init__ (its re-exports) from inside it is not a cycle of interest."""
    return module.startswith(package + ".")


def test_the_generic_state_policies_and_loop_import_nothing_of_the_reviews_room():
    """What a kind of knowledge means (its label, its answer) its room declares through augmenter.memory's KINDS."""
    graph = _graph()
    generic = ("augmenter.memory", "augmenter.policies", "augmenter.agent")
    found = sorted((a, b) for a, targets in graph.items() for b in targets if a.startswith(generic) and "reviews" in b)
    assert found == []


def test_rule_policies_need_neither_gymnasium_nor_torch():
    code = (
        "import sys, augmenter.policies; from augmenter.policies import LLMAugmenterPolicy; "
        "assert 'gymnasium' not in sys.modules and 'torch' not in sys.modules, "
        "sorted(m for m in sys.modules if m.split('.')[0] in ('gymnasium', 'torch'))[:5]"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]


def test_the_generic_core_imports_no_knowledge_kind():
    """The agent (loop, executor, protocols) and the Working Memory know no kind of knowledge: reviews and documents
    reach the agent only through the protocols the builder injects (Composer, ReplyComposer, Check)."""
    kinds = ("augmenter.reviews", "augmenter.documents")
    leaks = sorted(
        (a, b)
        for a, targets in _graph().items()
        for b in targets
        if a.startswith(("augmenter.agent", "augmenter.memory")) and b.startswith(kinds)
    )
    assert leaks == []


def test_the_reviews_room_needs_none_of_its_users():
    """Reviews import neither the consolidator, the checks, the agent nor the documents that use them."""
    users = ("augmenter.knowledge", "augmenter.utilities", "augmenter.agent", "augmenter.documents")
    found = sorted(
        (a, b)
        for a, targets in _graph().items()
        if a.startswith("augmenter.reviews")
        for b in targets
        if b.startswith(users)
    )
    assert found == []
