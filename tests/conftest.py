"""Shared fixtures. DSTC11 data comes from ../shared/data (or $AUGMENTER_DATA); the cache goes to a temp dir
unless AUGMENTER_CACHE is set, except for the assembled model, which is reused across runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("AUGMENTER_DATA", ROOT.parent / "shared" / "data"))
DSTC11 = DATA / "dstc11-track5"


def stop(process, timeout: float = 30) -> None:
    """Stop a server started with subprocess as Ctrl-C would, killing it if it does not end in `timeout` s."""
    import signal
    import subprocess

    process.send_signal(signal.SIGINT)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@pytest.fixture(scope="session")
def pyproject() -> dict:
    """pyproject.toml, parsed: Python 3.11's tomllib, or its backport tomli on 3.10 (the test is skipped without)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # Python 3.10
        tomllib = pytest.importorskip("tomli", reason="reading pyproject.toml on Python 3.10 needs tomli")
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def dstc11_kb():
    from augmenter.knowledge import load_dstc11

    if not (DSTC11 / "knowledge.json").exists():
        pytest.fail(f"DSTC11 data not found under {DSTC11}: set AUGMENTER_DATA")
    return load_dstc11(DSTC11 / "knowledge.json", DSTC11 / "entity_mapping.json")


@pytest.fixture(scope="session")
def hotel_snippets(dstc11_kb):
    """The snippet texts of the first 40 hotels of DSTC11's knowledge base: a small real corpus."""
    hotels = [e for e in dstc11_kb.entities if e.domain == "hotel"][:40]
    rows = sorted(r for e in hotels for r in dstc11_kb.rows_of(e.domain, e.entity_id))
    return [dstc11_kb.snippets[r].text for r in rows]


@pytest.fixture(scope="session")
def demo_kb(tmp_path_factory):
    from augmenter.knowledge.demo import load_demo_knowledge

    return load_demo_knowledge(tmp_path_factory.mktemp("demo"))


@pytest.fixture
def make_agent(demo_kb):
    """Build an agent on the demo knowledge base around a FakeLLM."""
    from augmenter.agent import Agent, Executor
    from augmenter.knowledge import BM25sRetriever, KnowledgeConsolidator
    from augmenter.llm import MeteredLLM
    from augmenter.prompts import PromptEngine
    from augmenter.utilities import KF1Utility

    def build(fake, policy, utility=None, kb=None, **agent_kwargs):
        llm = MeteredLLM(fake)
        consolidator = KnowledgeConsolidator(kb or demo_kb, BM25sRetriever(), k=3, opinions=False)
        executor = Executor(
            llm, PromptEngine(response="customer_service"), utility or KF1Utility(threshold=0.3), consolidator
        )
        agent_kwargs.setdefault("max_llm_calls", 3)  # the paper's budget, which these tests were written for
        return Agent(policy, executor, **agent_kwargs)

    return build


@pytest.fixture(scope="session")
def untrained_policy_file(tmp_path_factory):
    """A small T5 policy straight from its random init, saved as `augmenter train` saves one."""
    import torch

    from augmenter.policies.t5 import ActionNetwork, T5Policy, Tokenizer

    lines = [
        f"user: is there {w} at the hotel? evidence: {n} snippets candidate 1 (utility 0.{n}): yes"
        for n in range(10)
        for w in ("parking", "wifi", "a pool", "breakfast", "room service")
    ]
    tokenizer = Tokenizer.train(lines, vocab_size=120)
    torch.manual_seed(3)  # an init whose greedy choices hit the step budget (12 consolidations, then forced call, send)
    policy = T5Policy(
        ActionNetwork(len(tokenizer), d_model=32, d_ff=64, num_layers=1, num_heads=2), tokenizer, max_tokens=64
    )
    path = tmp_path_factory.mktemp("policy") / "policy.pt"
    torch.save({"policy": policy.state()}, path)
    return path


from fault_server import FaultServer  # noqa: E402


@pytest.fixture
def fault_server():
    """A fault-injecting OpenAI-compatible server (see tests/fault_server.py), mode "ok"; set `.mode` to break it."""
    with FaultServer() as srv:
        yield srv
