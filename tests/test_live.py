"""Live-model tests: real llama.cpp inference, run in CI on the embedded models (no network, no API key)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from augmenter.agent import Session
from augmenter.config import build_agent, compose
from augmenter.llm import LocalLLM, OpenAICompatLLM, SamplingParams
from augmenter.llm.assets import model_path
from conftest import DATA

pytestmark = pytest.mark.live


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """llama-cpp-python's OpenAI-compatible server on 127.0.0.1, serving SmolLM2-135M."""
    port = _free_port()
    log = open(tmp_path_factory.mktemp("server") / "server.log", "w+")  # a pipe would fill up and block it
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "llama_cpp.server",
            "--model",
            str(model_path("smollm2-135m-instruct")),
            "--model_alias",
            "smollm2",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--n_ctx",
            "2048",
            "--n_threads",
            "2",
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    base = f"http://127.0.0.1:{port}/v1"
    deadline = time.time() + 120
    while time.time() < deadline:
        if proc.poll() is not None:
            log.seek(0)
            pytest.fail(f"llama_cpp.server exited: {log.read()[-2000:]}")
        try:
            urllib.request.urlopen(base + "/models", timeout=2)
            break
        except OSError:
            time.sleep(0.5)
    else:
        proc.kill()
        pytest.fail("llama_cpp.server did not start in 120 s")
    yield base
    proc.terminate()
    proc.wait(timeout=30)
    log.close()


def test_openai_backend_against_a_real_server(llama_server, monkeypatch):
    monkeypatch.setenv("TEST_SECRET_KEY", "sk-very-secret-value")
    llm = OpenAICompatLLM(model="smollm2", base_url=llama_server, api_key_env="TEST_SECRET_KEY")
    out = llm.complete([{"role": "user", "content": "Say hello in one word."}], SamplingParams(max_tokens=8))
    assert out.text and out.prompt_tokens > 0 and 0 < out.completion_tokens <= 8
    assert "very-secret" not in repr(llm)


def test_chat_session_over_openai_backend(llama_server, tmp_path):
    cfg = compose(
        "chat",
        [
            "llm=openai",
            f"llm.base_url={llama_server}",
            "llm.model=smollm2",
            "policy=llm_augmenter",
            "consolidator.opinions=false",  # a draft, whatever the reviews say
            "sampling.max_tokens=40",
            f"llm_cache.dir={tmp_path}",
            "llm_cache.enabled=true",
        ],
    )
    mem = Session(build_agent(cfg)).say("Does the Grand Meridian Hotel have a pool?")
    assert mem.response and mem.u and mem.prompt_tokens > 0
    assert any("pool" in s.text for s in mem.e)


def test_unreachable_server_is_a_clear_error():
    from augmenter.errors import LLMError

    llm = OpenAICompatLLM(model="m", base_url=f"http://127.0.0.1:{_free_port()}/v1", max_retries=0, timeout=5)
    with pytest.raises(LLMError, match="127.0.0.1"):
        llm.complete([{"role": "user", "content": "hi"}], SamplingParams(max_tokens=4))


def test_local_backend_fits_overlong_prompts():
    llm = LocalLLM(model="smollm2-135m-instruct", n_ctx=512, n_threads=2)
    long_history = [{"role": "user", "content": "word " * 300}, {"role": "assistant", "content": "ok " * 300}]
    messages = [{"role": "system", "content": "Be brief."}, *long_history, {"role": "user", "content": "hi " * 2000}]
    out = llm.complete(messages, SamplingParams(max_tokens=16))
    assert out.prompt_tokens <= 512 - 16 and out.completion_tokens <= 16


def test_two_turn_dstc11_session_with_the_embedded_model(tmp_path):
    """The default system (the checked one, Qwen2.5-Coder-1.5B-Instruct) on DSTC11's knowledge base: each turn's
    evidence is the Gonville Hotel's; a draft is scored before anything is sent; the reply is the checked draft or
    the knowledge's own words, and the wifi question is answered about wifi."""
    out = tmp_path / "session.jsonl"
    script = tmp_path / "script.txt"
    script.write_text(
        "I am looking for a place to stay. What can you tell me about the Gonville Hotel?\nDo they offer free wifi?\n"
    )
    from augmenter.cli.main import main

    assert (
        main(
            [
                "chat",
                "--script",
                str(script),
                "--output",
                str(out),
                "task=dstc11",
                f"data_root={DATA}",
                "sampling.max_tokens=80",
            ]
        )
        == 0
    )
    turns = [json.loads(line)["memory"] for line in out.read_text().splitlines()]
    assert len(turns) == 2
    for mem in turns:
        assert mem["e"] and all(s["entity_name"] == "GONVILLE HOTEL" for s in mem["e"])
        assert len(mem["u"]) == len(mem["o"]) and mem["trace"][-1]["action"] == "send"  # every candidate scored
        assert (
            mem["response"] in mem["o"]
            if mem["outcome"] == "answered"
            else mem["outcome"] in ("quoted", "partial", "abstained")
        )
    assert any("wifi" in s["text"].lower() for s in turns[1]["e"])
    assert "wifi" in turns[1]["response"].lower()
    assert not turns[1]["entities"][0]["in_query"]  # "they" linked through the history


def test_short_eval_with_the_embedded_model(tmp_path):
    """`augmenter eval` end to end on three DSTC11 dev turns with the model the paper's experiments pin (0.5B)."""
    from augmenter.cli.main import main

    args = [
        "eval",
        f"data_root={DATA}",
        "eval.limit=3",
        f"eval.out_dir={tmp_path}",
        "eval.progress=false",
        f"llm_cache.dir={tmp_path / 'cache'}",
        "sampling.max_tokens=60",
    ]
    assert main(args) == 0
    run = tmp_path / "dstc11-dev-n3-seed0" / "table2_bm25_feedback"
    records = [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()]
    assert len(records) == 3
    for r in records:
        assert r["response"] and r["memory"]["e"] and r["cost"]["llm_calls"] >= 1
        assert r["memory"]["trace"][-1]["action"] == "send"
    summary = json.loads((run / "summary.json").read_text())
    assert summary["turns"] == 3 and summary["metrics"]["KF1"] > 0 and summary["metrics"]["BERTScore"] > 0
    assert main(args) == 0  # resumed: nothing left to do, the records stay as they were
    assert [json.loads(line) for line in (run / "records.jsonl").read_text().splitlines()] == records


def test_the_checked_system_with_the_embedded_model_sends_only_what_the_knowledge_says(tmp_path, dstc11_kb):
    """The checked system (experiment grounded_bm25, the default 1.5B model, its opinion judge included) on
    three DSTC11 dev turns of the development sample: every reply is a quote of the knowledge (each quoted sentence
    is, word for word, a review sentence or FAQ answer of the places in the turn) or a draft whose claims were all
    supported, or says the knowledge does not answer."""
    import re

    from augmenter.cli.main import main

    dev = "eval.exclude=[{limit:200,seed:0},{limit:60,seed:1,exclude:{limit:200,seed:0}}]"
    assert (
        main(
            [
                "eval",
                "experiment=grounded_bm25",
                f"data_root={DATA}",
                "eval.limit=3",
                "eval.seed=2",
                dev,
                f"eval.out_dir={tmp_path}",
                "eval.progress=false",
                f"llm_cache.dir={tmp_path / 'cache'}",
            ]
        )
        == 0
    )
    records_path = next(tmp_path.glob("*/grounded_bm25/records.jsonl"))
    records = [json.loads(line) for line in records_path.read_text().splitlines()]
    assert len(records) == 3 and all(r["status"] == "ok" for r in records)
    assert any(r["outcome"] in ("quoted", "answered") for r in records)  # the knowledge answers these turns
    for r in records:
        mem = r["memory"]
        places = {(m["domain"], m["entity_id"]) for m in mem["entities"]}
        texts = [s.text for s in dstc11_kb.snippets if (s.domain, s.entity_id) in places]
        texts += [part for t in texts if t.startswith("Q: ") for part in t[3:].split(" A: ", 1)]  # a FAQ's Q and A
        if r["outcome"] == "quoted":  # each quote is the start of a sentence of theirs (a long one is cut with …)
            quotes = [q.rstrip(".!…") for q in re.findall(r'"([^"]+)"', r["response"])]
            assert all(any(t.startswith(q) for t in texts) for q in quotes), r["response"]
        elif r["outcome"] == "answered":
            sent = mem["checks"][mem["sent_index"]]
            assert all(c["verdict"] == "supported" for c in sent), r["response"]
        else:
            assert r["outcome"] == "abstained" and "does not answer" in r["response"]


def test_llm_user_simulator_with_the_embedded_model(tmp_path):
    """The BotChat-seeded user simulator writes user messages with Qwen2.5-Coder-0.5B, two turns of a dialogue."""
    import gymnasium

    import augmenter.envs  # registers the environments
    from augmenter.memory import Action

    env = gymnasium.make(
        "augmenter/Dialogue-v0",
        overrides=[
            f"data_root={DATA}",
            "env.users=chat_seeds",
            "env.max_turns=2",
            f"llm_cache.dir={tmp_path}",
            "sampling.max_tokens=40",
        ],
    ).unwrapped
    env.reset(seed=0)
    first = env.turn
    assert first.q and len(first.q) < 400 and not first.q.lower().startswith(("user:", "assistant:"))
    done, turns = False, [first]
    send = augmenter.envs.ACTIONS.index(Action.SEND)
    while not done:
        _, _, done, _, info = env.step(send)
        if info.get("turn_over"):
            turns.append(env.turn)
    assert len(turns) == 2 and turns[1].q and turns[1].q != first.q
    assert turns[1].history[-1].speaker == "S" and turns[1].history[-2].text == first.q


def test_label_logprobs_from_the_embedded_model_keep_generation_intact():
    """One scoring forward pass gives the first token's distribution, and generation afterwards is unchanged."""
    llm = LocalLLM()
    ask = [{"role": "user", "content": "Is Paris the capital of France? Answer YES or NO."}]
    params = SamplingParams(max_tokens=12, temperature=0.0)
    before = llm.complete(ask, params).text
    scored = llm.complete(ask, SamplingParams(max_tokens=4, logprobs=8))
    again = llm.complete(ask, SamplingParams(max_tokens=4, logprobs=8))
    assert scored.top_logprobs == again.top_logprobs and len(scored.top_logprobs[0]) >= 5
    assert max(scored.top_logprobs[0].values()) <= 0.0 and scored.text.strip() == before.split()[0].strip(".,!")
    assert llm.complete(ask, params).text == before


def test_claims_utility_with_the_embedded_model(tmp_path):
    """The LLM splits the candidate and the LLM verifier judges each claim from label log-probabilities."""
    cfg = compose(
        "chat",
        [
            "policy=llm_augmenter",
            "consolidator.opinions=false",
            "utility=claims",
            "verifier=llm",
            "utility.splitter=llm",
            "sampling.max_tokens=60",
            "agent.max_llm_calls=2",
            f"llm_cache.dir={tmp_path}",
        ],
    )
    mem = Session(build_agent(cfg)).say("Does the Grand Meridian Hotel have free parking?")
    verify = [r for r in mem.trace if r.action.value == "verify_utility"]
    assert verify and verify[0].llm_calls >= 2  # the split and at least one verification
    assert mem.checks[0], "the first candidate was split into claims"
    assert all(0.0 <= c.p_supported <= 1.0 for c in mem.checks[0])
    assert any(0.0 < c.p_supported < 1.0 for checks in mem.checks for c in checks)  # from log-probs, not a word
    assert mem.outcome in ("answered", "partial", "abstained")
    if mem.sent_index is not None:
        assert not mem.contradicts(mem.sent_index)


def test_exact_kv_reuse_answers_as_an_empty_cache_does_and_evaluates_less():
    """llm.kv_reuse=exact keeps whole n_batch blocks of the previous call's prefix: greedy
    replies equal those from an empty cache, with fewer prompt tokens evaluated."""
    from augmenter.memory import Snippet, Utterance, WorkingMemory
    from augmenter.prompts import PromptEngine

    engine = PromptEngine(response="customer_service")
    mem = WorkingMemory(q="Do they allow pets?", h_q=[Utterance(speaker="U", text="I need a hotel in the north.")])
    prompts = [engine.self_ask(mem)]
    mem.e = [Snippet(id="1", text="[ALPHA HOTEL] Pets are welcome for a fee of 10 pounds a night.")]
    prompts.append(engine.respond(mem))
    mem.o, mem.u, mem.f = ["Yes."], [0.1], ["Say what the knowledge says about the fee."]
    prompts.append(engine.respond(mem))
    params = SamplingParams(max_tokens=24)
    replies, evaluated = {}, {}
    for mode in ("exact", "off"):
        llm = LocalLLM(kv_reuse=mode, n_batch=64, n_threads=2)
        replies[mode] = [llm.complete(m, params).text for m in prompts]
        evaluated[mode] = llm.prompt_tokens_evaluated
    assert replies["exact"] == replies["off"]
    assert evaluated["exact"] < evaluated["off"]
    with pytest.raises(Exception, match="kv_reuse"):
        LocalLLM(kv_reuse="sometimes")
