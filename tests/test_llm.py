import pytest

from augmenter.llm import CachedLLM, FakeLLM, MeteredLLM, SamplingParams
from augmenter.llm.cache import cache_key


def test_disk_cache_replays_and_keys_on_everything(tmp_path):
    fake = FakeLLM(responses=["one", "two", "three", "four"])
    llm = CachedLLM(fake, tmp_path)
    msgs = [{"role": "user", "content": "hi"}]
    p = SamplingParams()
    assert llm.complete(msgs, p).text == "one"
    again = llm.complete(msgs, p)
    assert again.text == "one" and again.cached and len(fake.calls) == 1
    assert llm.complete(msgs, SamplingParams(temperature=0.7)).text == "two"
    assert llm.complete([{"role": "user", "content": "hello"}], p).text == "three"
    # a new process (new object) on the same directory still hits
    assert CachedLLM(FakeLLM(responses=[]), tmp_path).complete(msgs, p).text == "one"
    assert cache_key("a", "m", msgs, p) != cache_key("b", "m", msgs, p) != cache_key("a", "m2", msgs, p)


def test_meter_counts_calls_and_tokens():
    llm = MeteredLLM(FakeLLM(default="two words"))
    llm.complete([{"role": "user", "content": "three words here"}])
    llm.complete([{"role": "user", "content": "x"}])
    assert llm.usage.calls == 2 and llm.usage.prompt_tokens == 4 and llm.usage.completion_tokens == 4


def test_turn_cost_counts_cache_hits(make_agent, tmp_path):
    from policies import LLMAugmenterPolicy

    agent = make_agent(CachedLLM(FakeLLM(default="Alpha Hotel has free parking."), tmp_path), LLMAugmenterPolicy())
    first = agent.respond("Does Alpha Hotel have free parking?").summary()
    again = agent.respond("Does Alpha Hotel have free parking?").summary()
    assert first["llm_calls"] >= 1 and first["cached_llm_calls"] == 0
    assert again["cached_llm_calls"] == again["llm_calls"] == first["llm_calls"]


def test_kv_reuse_modes_are_checked_and_cached_apart():
    """Replies with exact or no KV reuse depend on the prompt alone, so they are cached apart from "any"'s."""
    from augmenter.errors import ConfigError
    from augmenter.llm import LocalLLM

    any_, exact, off = LocalLLM(), LocalLLM(kv_reuse="exact"), LocalLLM(kv_reuse="off", n_batch=64)
    assert exact.n_batch == 64 and any_.n_batch == 512
    assert len({any_.identity, exact.identity, off.identity}) == 3
    assert any_.identity == LocalLLM(n_batch=512).identity  # the default keeps the cache keys runs were made with
    for bad in ({"kv_reuse": "sometimes"}, {"n_batch": 0}, {"n_batch": True}):
        with pytest.raises(ConfigError):
            LocalLLM(**bad)
