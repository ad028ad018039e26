"""Embedded models assembled from PyPI parts: order, checksum, reuse, clear errors; the registry matches the extras."""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

import pytest

from augmenter.config import compose
from augmenter.errors import LLMError
from augmenter.llm import LocalLLM, assets
from augmenter.llm.assets import MODELS, EmbeddedModel, model_path

ROOT = Path(__file__).resolve().parents[1]
CHUNKS = [b"GGUF-first-", b"second-", b"third"]


@pytest.fixture
def parted_model(tmp_path, monkeypatch):
    """Three fake part packages on sys.path and a registry entry whose checksum is their concatenation's."""
    for i, chunk in enumerate(CHUNKS, 1):
        pkg = tmp_path / "site" / f"fakepart{i}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i:02d}.bin").write_bytes(chunk)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.setenv("AUGMENTER_CACHE", str(tmp_path / "cache"))
    entry = EmbeddedModel(
        name="fake-model",
        filename="fake.gguf",
        parts=tuple((f"fakepart{i}", f"data/part{i:02d}.bin") for i in range(1, 4)),
        sha256=hashlib.sha256(b"".join(CHUNKS)).hexdigest()[:8],
        install_hint="pip install fake",
    )
    monkeypatch.setitem(MODELS, "fake-model", entry)
    yield tmp_path
    for i in range(1, 4):
        sys.modules.pop(f"fakepart{i}", None)


def test_parts_are_concatenated_in_order_checked_and_reused(parted_model, monkeypatch):
    path = model_path("fake-model")
    assert path.read_bytes() == b"".join(CHUNKS)
    assert path.with_suffix(".ok").read_text().strip() == hashlib.sha256(b"".join(CHUNKS)).hexdigest()

    def no_copy(*args, **kwargs):
        raise AssertionError("an assembled, stamped model is used as it is")

    monkeypatch.setattr(assets.hashlib, "sha256", no_copy)
    assert model_path("fake-model") == path


def test_a_damaged_part_is_a_clear_error_and_leaves_nothing_behind(parted_model):
    (parted_model / "site" / "fakepart2" / "data" / "part02.bin").write_bytes(b"SECOND-")
    with pytest.raises(LLMError, match="damaged.*pip install fake"):
        model_path("fake-model")
    assert not list((parted_model / "cache" / "models").glob("fake*"))


def test_a_missing_part_package_names_the_install_command(parted_model, monkeypatch):
    monkeypatch.setitem(
        MODELS,
        "fake-model",
        EmbeddedModel(
            name="fake-model",
            filename="fake.gguf",
            parts=(("fakepart_absent", "data/x.bin"),),
            sha256="00",
            install_hint="pip install fake",
        ),
    )
    with pytest.raises(LLMError, match="not installed: pip install fake"):
        model_path("fake-model")
    with pytest.raises(LLMError, match="unknown embedded model 'nope'; known: .*qwen2.5-coder-1.5b-instruct"):
        model_path("nope")


@pytest.mark.parametrize(
    "extra, name", [("local", "qwen2.5-coder-1.5b-instruct"), ("local-small", "qwen2.5-coder-0.5b-instruct")]
)
def test_each_extra_installs_exactly_its_models_parts(extra, name, pyproject):
    packages = [
        r.split("==")[0].replace("-", "_")
        for r in pyproject["project"]["optional-dependencies"][extra]
        if "==" in r and not r.startswith("llama")
    ]
    assert packages == [pkg for pkg, _ in MODELS[name].parts]


@pytest.mark.parametrize(
    "option, name",
    [
        ("local", "qwen2.5-coder-1.5b-instruct"),
        ("local_small", "qwen2.5-coder-0.5b-instruct"),
        ("local_1_5b", "qwen2.5-coder-1.5b-instruct"),
    ],
)
def test_llm_configs_name_registered_models(option, name):
    cfg = compose("chat", [f"llm={option}"]).llm
    assert cfg.model == name and len(MODELS[name].sha256) == 64


def test_the_default_model_is_the_1_5b_and_the_papers_experiments_keep_the_0_5b(pyproject):
    """Chat, serve and the API default to the 1.5B model; every experiment of the paper pins the
    model its figures were measured with, and a command-line llm= still wins over it."""
    assert compose("chat", []).llm.model == "qwen2.5-coder-1.5b-instruct"
    assert compose("serve", []).llm.model == "qwen2.5-coder-1.5b-instruct"
    assert LocalLLM().model == "qwen2.5-coder-1.5b-instruct"
    for path in sorted((ROOT / "configs" / "experiment").glob("*.yaml")):
        if path.stem.startswith("grounded"):  # the checked system: measured with both models
            continue
        cfg = compose("eval", [f"experiment={path.stem}"])
        assert cfg.llm.model == "qwen2.5-coder-0.5b-instruct", path.name
    assert compose("eval", ["experiment=table2_bm25", "llm=local"]).llm.model == "qwen2.5-coder-1.5b-instruct"
    assert pyproject["project"]["optional-dependencies"]["local-1-5b"] == ["augmenter[local]"]
