"""Streaming the draft: each backend hands its reply to `on_text` piece by piece, the wrappers
(meter, cache, fallbacks) pass it through, the agent's callbacks with `on_text` get it, and `augmenter chat`
prints it before the checked answer."""

import json

import httpx
import pytest

from augmenter.api import Assistant
from augmenter.errors import LLMError
from augmenter.llm import CachedLLM, FakeLLM, LocalLLM, MeteredLLM, OpenAICompatLLM, ResilientLLM, SamplingParams
from augmenter.llm.base import stream_completion

MSGS = [{"role": "user", "content": "Is there a pool?"}]
REPLY = "Yes, there is an indoor heated pool."


def pieces_of(llm, params=None):
    pieces = []
    out = stream_completion(llm, MSGS, params or SamplingParams(), pieces.append)
    return out, pieces


def test_the_fake_llm_streams_its_scripted_text_word_by_word():
    out, pieces = pieces_of(FakeLLM(default=REPLY))
    assert "".join(pieces) == out.text == REPLY and len(pieces) == len(REPLY.split())


def test_a_backend_without_stream_hands_its_whole_text_at_once():
    class Plain:
        backend, model, identity = "plain", "m", "plain|m"

        def complete(self, messages, params):
            return FakeLLM(default=REPLY).complete(messages, params)

    out, pieces = pieces_of(Plain())
    assert pieces == [REPLY] and out.text == REPLY


def test_the_meter_counts_a_streamed_call_like_any_other():
    llm = MeteredLLM(FakeLLM(default=REPLY))
    pieces = []
    out = llm.complete(MSGS, on_text=pieces.append)
    assert "".join(pieces) == out.text and llm.usage.calls == 1 and llm.usage.completion_tokens == 7


def test_a_cache_hit_streams_its_text_at_once(tmp_path):
    fake = FakeLLM(responses=[REPLY])
    _, first = pieces_of(CachedLLM(fake, tmp_path))
    out, second = pieces_of(CachedLLM(fake, tmp_path))
    assert len(first) > 1 and second == [REPLY] and out.cached and len(fake.calls) == 1


def test_a_fallback_streams_when_the_primary_fails():
    primary = FakeLLM(responses=[LLMError("down")])
    out, pieces = pieces_of(ResilientLLM(primary, [FakeLLM(default=REPLY, model="backup")]))
    assert "".join(pieces) == REPLY and out.served_by == "fake|backup"


class _Llama:
    """What LocalLLM.stream needs of llama_cpp.Llama: a streaming chat completion and a tokenizer."""

    metadata: dict = {}

    def __init__(self, chunks):
        self.chunks, self.kwargs = chunks, None

    def tokenize(self, data, add_bos=False, special=False):
        return data.split()

    def create_chat_completion(self, **kwargs):
        self.kwargs = kwargs
        return iter({"choices": [{"delta": delta, "finish_reason": finish}]} for delta, finish in self.chunks)


def test_the_local_backend_streams_llama_cpp_chunks():
    llm = LocalLLM(n_ctx=512)
    llm._llm = _Llama(
        [
            ({"role": "assistant"}, None),
            ({"content": " Yes,"}, None),
            ({"content": " there is"}, None),
            ({"content": " a pool."}, None),
            ({}, "stop"),
        ]
    )
    out, pieces = pieces_of(llm)
    assert llm._llm.kwargs["stream"] is True and pieces == ["Yes,", " there is", " a pool."]
    assert out.text == "Yes, there is a pool." and out.completion_tokens == 3 and out.prompt_tokens == 4


def test_the_local_backend_refuses_an_empty_stream():
    llm = LocalLLM(n_ctx=512)
    llm._llm = _Llama([({"content": "  "}, None), ({}, "length")])
    with pytest.raises(LLMError, match="empty reply .*length"):
        pieces_of(llm)


def _sse(*events: dict) -> bytes:
    return b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in events) + b"data: [DONE]\n\n"


def _chunk(content=None, finish=None, usage=None) -> dict:
    choices = [] if usage else [{"index": 0, "delta": {"content": content} if content else {}, "finish_reason": finish}]
    return {
        "id": "c",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "m",
        "choices": choices,
        **({"usage": usage} if usage else {}),
    }


def openai_llm(handler, **kwargs) -> OpenAICompatLLM:
    from openai import OpenAI

    llm = OpenAICompatLLM(model="m", base_url="http://stub.test/v1", backoff=0, **kwargs)
    llm._client = OpenAI(
        base_url=llm.base_url,
        api_key="k",
        max_retries=0,
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
    )
    return llm


def test_the_openai_backend_streams_and_reads_the_usage_chunk():
    seen = []

    def handler(request):
        seen.append(json.loads(request.content))
        return httpx.Response(
            200,
            content=_sse(
                _chunk(" Yes,"),
                _chunk(" a pool."),
                _chunk(finish="stop"),
                _chunk(usage={"prompt_tokens": 7, "completion_tokens": 4}),
            ),
            headers={"content-type": "text/event-stream"},
        )

    out, pieces = pieces_of(openai_llm(handler))
    assert pieces == ["Yes,", " a pool."] and out.text == "Yes, a pool."
    assert (out.prompt_tokens, out.completion_tokens) == (7, 4)
    assert seen[0]["stream"] is True and seen[0]["stream_options"] == {"include_usage": True}


def test_the_openai_backend_retries_before_the_first_text_only():
    calls = []

    def handler(request):
        calls.append(1)
        if len(calls) == 1:
            return httpx.Response(500, json={"error": {"message": "busy"}})
        return httpx.Response(200, content=_sse(_chunk("Yes.")), headers={"content-type": "text/event-stream"})

    out, pieces = pieces_of(openai_llm(handler))
    assert out.text == "Yes." and pieces == ["Yes."] and len(calls) == 2

    def breaks(request):  # text, then the connection drops: not retried, or the text would come twice
        calls.append(1)

        def body():
            yield b"data: " + json.dumps(_chunk("Yes,")).encode() + b"\n\n"
            raise httpx.ReadError("connection reset")

        return httpx.Response(200, content=body(), headers={"content-type": "text/event-stream"})

    calls.clear()
    with pytest.raises(LLMError, match="broke off after 4 characters"):
        pieces_of(openai_llm(breaks, max_retries=3))
    assert len(calls) == 1


@pytest.mark.parametrize(
    "refusal",
    [
        lambda: httpx.Response(400, json={"error": {"message": "stream_options is not supported"}}),
        lambda: httpx.Response(
            200, json={"choices": [{"message": {"role": "assistant", "content": "x"}}]}
        ),  # no events
    ],
)
def test_a_server_that_cannot_stream_is_asked_without_streaming(refusal):
    streamed = []

    def handler(request):
        body = json.loads(request.content)
        streamed.append(body.get("stream", False))
        if body.get("stream"):
            return refusal()
        return httpx.Response(
            200,
            json={
                "choices": [{"message": {"role": "assistant", "content": REPLY}}],
                "usage": {"prompt_tokens": 3, "completion_tokens": 6},
            },
        )

    llm = openai_llm(handler)
    out, pieces = pieces_of(llm)
    assert pieces == [REPLY] and out.text == REPLY and streamed == [True, False]
    pieces_of(llm)
    assert streamed == [True, False, False]  # remembered: no second streaming try


def test_agent_callbacks_with_on_text_get_the_draft_of_each_response_call():
    class Watcher:
        def __init__(self):
            self.drafts, self.actions = {}, []

        def __call__(self, memory, record):
            self.actions.append(record.action.value)

        def on_text(self, memory, text):
            self.drafts.setdefault(len(memory.o), []).append(text)

    watcher = Watcher()
    assistant = Assistant.from_overrides(
        [
            "llm=fake",
            "utility=kf1",
            "policy=llm_augmenter",
            "agent.max_llm_calls=3",  # the paper's loop: a revision
            "llm.responses=[No idea at all., There is a pool.]",
        ],
        callbacks=[watcher],
    )
    memory = assistant.ask("Does the Grand Meridian Hotel have a pool?")
    assert {i: "".join(p) for i, p in watcher.drafts.items()} == dict(enumerate(memory.o))
    assert watcher.actions.count("call_llm") == len(memory.o) >= 2


def test_chat_prints_the_draft_before_the_checked_answer(tmp_path, capsys):
    from augmenter.cli.main import main

    script = tmp_path / "script.txt"
    script.write_text("Does the Grand Meridian Hotel have a pool?\n")
    reply = "Yes, there is an indoor heated pool open from 7 am to 10 pm."
    # a draft: with the demo's pool review gathered, the knowledge's own words would answer without one
    assert (
        main(["chat", "--script", str(script), "llm=fake", f"llm.default='{reply}'", "consolidator.opinions=false"])
        == 0
    )
    shown = capsys.readouterr().out
    draft = shown.index("draft (checking...)> " + reply)
    assert draft < shown.index("assistant> " + reply) < shown.index("sources:")
