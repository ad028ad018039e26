"""augmenter as a service: the OpenAI-compatible endpoint used by the real `openai` client against a
uvicorn server in a thread (streaming and not), the `augmenter` field and usage, bad input as 4xx with a message,
concurrent sessions that do not mix, the queue, bearer-token auth and secrets, CORS, health and readiness."""

import json
import re
import threading
import time

import httpx
import pytest
from openai import OpenAI
from starlette.testclient import TestClient

from augmenter.cli.main import main
from augmenter.config import compose
from augmenter.errors import ConfigError, LLMError
from augmenter.llm import FakeLLM, OpenAICompatLLM, SamplingParams
from augmenter.serve import AgentPool, Background, ServeSettings, create_app, pool_from_config, warm_up
from augmenter.serve.runner import bind

REPLY = "Yes, there is an indoor heated pool open from 7 am to 10 pm."
QUESTION = "Does the Grand Meridian Hotel have a pool?"
KEY = "serve-token-7f3a9c1e5b"  # no known key pattern: only its registration as a secret can mask it


def make_app(*overrides, llm=None, settings=None):
    # the service's own behaviour around a draft: the demo's pool review would answer without one (opinions off)
    cfg = compose("serve", ["llm=fake", f"llm.default='{REPLY}'", "consolidator.opinions=false", *overrides])
    settings = settings or ServeSettings()
    warm_up(cfg)
    pool = pool_from_config(cfg, settings.workers, settings.max_queue, llm=llm).build()
    return create_app(pool, settings)


@pytest.fixture(scope="module")
def server():
    with Background(make_app()) as url:
        yield url


@pytest.fixture(scope="module")
def client(server):
    return OpenAI(base_url=f"{server}/v1", api_key="unused", max_retries=0)


def ask(text=QUESTION, **body):
    return {"model": "augmenter", "messages": [{"role": "user", "content": text}], **body}


# the openai client, unchanged
def test_the_openai_client_gets_the_checked_answer_with_sources_and_usage(client):
    reply = client.chat.completions.create(model="augmenter", messages=[{"role": "user", "content": QUESTION}])
    assert reply.choices[0].message.content == REPLY and reply.choices[0].finish_reason == "stop"
    summary = reply.model_extra["augmenter"]
    assert summary["outcome"] == "answered" and summary["citations"][0]["sources"] == ["hotel:1:faq:0"]
    assert summary["sources"][0] == {"n": 1, "id": "hotel:1:faq:0", "text": summary["sources"][0]["text"]}
    assert "hotel:1:faq:0" in [e["id"] for e in summary["evidence"]]
    candidate = summary["candidates"][0]
    assert candidate["text"] == REPLY and candidate["passed"] and candidate["sent"] and candidate["score"] > 0.5
    assert candidate["claims"][0]["verdict"] == "supported"
    assert [a["action"] for a in summary["actions"]] == ["consolidate_knowledge", "call_llm", "verify_utility", "send"]
    # usage: the real calls and tokens of the turn, as the Working Memory counted them
    assert reply.usage.model_extra["llm_calls"] == 1 == sum(a["llm_calls"] for a in summary["actions"])
    assert reply.usage.prompt_tokens > 100 and reply.usage.completion_tokens == len(REPLY.split())
    assert reply.usage.total_tokens == reply.usage.prompt_tokens + reply.usage.completion_tokens


def test_the_openai_client_streams_the_draft_then_the_checked_answer(client):
    stream = client.chat.completions.create(
        model="augmenter",
        stream=True,
        stream_options={"include_usage": True},
        messages=[{"role": "user", "content": QUESTION}],
    )
    chunks = list(stream)
    content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert content == REPLY  # what any OpenAI client shows: the checked answer only
    events = [c.model_extra["augmenter"] for c in chunks if c.model_extra.get("augmenter")]
    kinds = [e["event"] for e in events]
    drafts = [e for e in events if e["event"] == "draft"]
    assert len(drafts) > 3 and "".join(d["text"] for d in drafts) == REPLY and {d["candidate"] for d in drafts} == {0}
    assert kinds.index("draft") < kinds.index("final") and kinds[-1] == "final" and "action" in kinds
    first_content = next(i for i, c in enumerate(chunks) if c.choices and c.choices[0].delta.content)
    last_draft = max(i for i, c in enumerate(chunks) if (c.model_extra.get("augmenter") or {}).get("event") == "draft")
    assert first_content > last_draft
    assert events[-1]["citations"][0]["sources"] == ["hotel:1:faq:0"]
    assert chunks[-1].choices == [] and chunks[-1].usage.prompt_tokens > 100


def test_the_stream_is_server_sent_events_ending_with_done(server):
    with httpx.stream("POST", f"{server}/v1/chat/completions", json=ask(stream=True), timeout=60) as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        lines = [line for line in response.iter_lines() if line]
    assert all(line.startswith(("data: ", ":")) for line in lines) and lines[-1] == "data: [DONE]"
    first = json.loads(lines[0][6:])
    assert first["object"] == "chat.completion.chunk" and first["choices"][0]["delta"]["role"] == "assistant"


def test_augmenters_own_openai_backend_can_use_the_service(server):
    llm = OpenAICompatLLM(model="augmenter", base_url=f"{server}/v1")
    pieces = []
    out = llm.stream([{"role": "user", "content": QUESTION}], SamplingParams(), pieces.append)
    assert out.text == REPLY == "".join(pieces) and out.prompt_tokens > 100
    assert llm.complete([{"role": "user", "content": QUESTION}], SamplingParams()).text == REPLY


def test_models_health_and_readiness(server, client):
    assert [m.id for m in client.models.list()] == ["augmenter"]
    assert client.models.retrieve("augmenter").id == "augmenter"
    assert httpx.get(f"{server}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{server}/readyz").json()
    assert ready["status"] == "ready" and ready["auth"] is False and ready["limits"]["max_message_chars"] == 2000
    missing = httpx.get(f"{server}/v1/models/gpt-4")
    assert missing.status_code == 404 and "augmenter" in missing.json()["error"]["message"]


def test_not_ready_until_the_agents_are_built():
    with TestClient(create_app(AgentPool(lambda callbacks: None))) as http:
        assert http.get("/readyz").status_code == 503 and http.get("/healthz").status_code == 200
        refused = http.post("/v1/chat/completions", json=ask())
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "not_ready"


# bad input: a 4xx with a message, never a crash
@pytest.fixture(scope="module")
def http(server):
    with httpx.Client(base_url=server, timeout=60) as c:
        yield c


def _messages(n):
    return [{"role": "user" if i % 2 == 0 else "assistant", "content": f"message {i}"} for i in range(n)]


BAD = [
    (b"", 400, "not valid JSON"),
    (b'{"messages": [', 400, "not valid JSON"),
    (b"\xff\xfe", 400, "not UTF-8"),
    (b"[1, 2]", 400, "JSON object"),
    (json.dumps({"model": "augmenter"}), 400, "`messages` must be a non-empty list"),
    (json.dumps({"messages": []}), 400, "`messages` must be a non-empty list"),
    (json.dumps({"messages": ["hello"]}), 400, "messages[0] must be an object"),
    (json.dumps(ask("")), 400, "messages[0].content is empty"),
    (json.dumps(ask(" \n\t ")), 400, "messages[0].content is empty"),
    (json.dumps(ask("x" * 100_000)), 413, "messages[0].content has 100000 characters; the limit is 2000"),
    (json.dumps({"messages": [{"role": "tool", "content": "42"}]}), 400, 'messages[0].role is "tool"'),
    (json.dumps({"messages": [{"role": "robot", "content": "hi"}]}), 400, 'messages[0].role is "robot"'),
    (json.dumps({"messages": [{"content": "hi"}]}), 400, "messages[0].role is null"),
    (
        json.dumps({"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "Hello!"}]}),
        400,
        "must be the user's question",
    ),
    (json.dumps({"messages": [{"role": "system", "content": "Be brief."}]}), 400, "must be the user's question"),
    (json.dumps({"messages": [{"role": "user", "content": None}]}), 400, "must be text"),
    (
        json.dumps({"messages": [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": "x"}}]}]}),
        400,
        "not a text part",
    ),
    (json.dumps({"messages": _messages(43)}), 400, "42 earlier messages; the limit is 40"),
    (json.dumps(ask(stream="yes")), 400, "`stream` must be true or false"),
    (json.dumps(ask(n=3)), 400, "`n` must be 1"),
]


@pytest.mark.parametrize("body, status, message", BAD, ids=[f"{i}-{s}" for i, (_, s, _) in enumerate(BAD)])
def test_bad_requests_get_a_4xx_with_a_clear_message(http, body, status, message):
    response = http.post("/v1/chat/completions", content=body, headers={"content-type": "application/json"})
    assert response.status_code == status
    error = response.json()["error"]
    assert message in error["message"] and error["type"] == "invalid_request_error" and "\n" not in error["message"]


def test_a_huge_body_is_refused_before_it_is_read(http):
    response = http.post(
        "/v1/chat/completions", content=b" " * 20_000_000, headers={"content-type": "application/json"}
    )
    assert response.status_code == 413 and "larger than" in response.json()["error"]["message"]
    assert http.post("/v1/chat/completions", json=ask()).status_code == 200  # and the server goes on


def test_system_messages_and_content_parts_are_accepted(http):
    body = {
        "messages": [
            {"role": "system", "content": "You are terse."},
            {"role": "user", "content": [{"type": "text", "text": QUESTION}]},
        ]
    }
    assert http.post("/v1/chat/completions", json=body).json()["choices"][0]["message"]["content"] == REPLY


def test_unknown_paths_and_methods_are_json_errors(http):
    assert http.get("/v1/nothing").json()["error"]["code"] == "not_found"
    assert http.get("/v1/chat/completions").status_code == 405


# sessions, concurrency and the queue
def _echo(delay):
    def reply(messages):
        time.sleep(delay)
        return "You asked: " + re.findall(r"^User: (.*)$", messages[-1]["content"], re.M)[-1]

    return reply


def test_concurrent_sessions_do_not_mix():
    app = make_app("utility=kf1", llm=FakeLLM(default=_echo(0.05)), settings=ServeSettings(workers=2))
    results: dict[str, list] = {"A": [], "B": []}

    def session(name, hotel, stream):
        history = []
        for turn in range(3):
            question = f"Session {name} turn {turn}: does the {hotel} have parking?"
            body = {"messages": [*history, {"role": "user", "content": question}], "stream": stream}
            if stream:
                with httpx.stream("POST", f"{url}/v1/chat/completions", json=body, timeout=60) as r:
                    chunks = [json.loads(line[6:]) for line in r.iter_lines() if line.startswith("data: {")]
                events = [c["augmenter"] for c in chunks if "augmenter" in c]
                summary = events[-1]
                drafts = "".join(e["text"] for e in events if e["event"] == "draft")
                answer = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
            else:
                reply = httpx.post(f"{url}/v1/chat/completions", json=body, timeout=60).json()
                summary, drafts = reply["augmenter"], ""
                answer = reply["choices"][0]["message"]["content"]
            results[name].append((question, summary, drafts))
            history += [{"role": "user", "content": question}, {"role": "assistant", "content": answer}]

    with Background(app) as url:
        threads = [
            threading.Thread(target=session, args=("A", "Grand Meridian Hotel", True)),
            threading.Thread(target=session, args=("B", "Riverside Inn", False)),
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join(120)
    for name, other in (("A", "B"), ("B", "A")):
        assert len(results[name]) == 3
        for question, summary, drafts in results[name]:
            assert all(c["text"] == f"You asked: {question}" for c in summary["candidates"])
            assert f"Session {other}" not in json.dumps(summary) and f"Session {other}" not in drafts
            if drafts:
                assert drafts == "".join(c["text"] for c in summary["candidates"])
            # each turn's meter counts its own calls only, though two turns ran at once
            assert (
                summary["usage"]["llm_calls"]
                == len(summary["candidates"])
                == sum(a["llm_calls"] for a in summary["actions"])
            )


def test_requests_queue_for_the_one_agent_and_a_full_queue_is_429():
    app = make_app(llm=FakeLLM(default=_echo(0.6)), settings=ServeSettings(workers=1, max_queue=1))
    statuses, lock = [], threading.Lock()

    def post(i):
        r = httpx.post(
            f"{url}/v1/chat/completions", json=ask(f"Question {i} about the Grand Meridian Hotel?"), timeout=60
        )
        with lock:
            statuses.append((r.status_code, r.headers.get("retry-after"), r.json()))

    with Background(app) as url:
        threads = []
        for i in range(3):
            threads.append(threading.Thread(target=post, args=(i,)))
            threads[-1].start()
            time.sleep(0.15)
        for t in threads:
            t.join(60)
    assert sorted(s for s, _, _ in statuses) == [200, 200, 429]
    busy = next(body for s, _, body in statuses if s == 429)
    assert "busy" in busy["error"]["message"] and next(r for s, r, _ in statuses if s == 429) == "1"
    queued = [body["augmenter"]["timings"]["queue_seconds"] for s, _, body in statuses if s == 200]
    assert min(queued) < 0.1 < max(queued)  # the second waited for the first


def test_a_client_that_goes_away_mid_stream_does_not_wedge_the_agent():
    app = make_app("llm.stream_delay=0.05")
    with Background(app) as url:
        with httpx.stream("POST", f"{url}/v1/chat/completions", json=ask(stream=True), timeout=60) as r:
            for line in r.iter_lines():
                if '"draft"' in line:
                    break  # and hang up while the draft streams
        start = time.monotonic()
        answer = httpx.post(f"{url}/v1/chat/completions", json=ask(), timeout=60).json()
        assert answer["choices"][0]["message"]["content"] == REPLY
        assert answer["augmenter"]["timings"]["queue_seconds"] < time.monotonic() - start
        assert httpx.get(f"{url}/readyz").json()["busy"] == 0


def test_a_crashing_turn_is_a_500_that_names_no_secret(monkeypatch, caplog):
    monkeypatch.setenv("AUGMENTER_TEST_SERVE_KEY", KEY)
    ServeSettings.from_config({"api_key_env": "AUGMENTER_TEST_SERVE_KEY"})  # registers the key as a secret

    def crash(messages):
        raise RuntimeError(f"bug holding {KEY}")

    with TestClient(make_app(llm=FakeLLM(default=crash))) as http:
        response = http.post("/v1/chat/completions", json=ask())
        streamed = http.post("/v1/chat/completions", json=ask(stream=True))
    assert response.status_code == 500 and response.json()["error"]["code"] == "internal_error"
    assert '"internal_error"' in streamed.text and streamed.text.rstrip().endswith("data: [DONE]")
    assert KEY not in response.text + streamed.text + caplog.text and "RuntimeError" in caplog.text


def test_a_failed_turn_is_answered_and_an_open_breaker_is_a_503():
    from augmenter.llm import ResilientLLM

    down = ResilientLLM(FakeLLM(default=LLMError("connection refused")), max_consecutive_failures=1, cooldown=60)
    with TestClient(make_app(llm=down)) as http:
        failed = http.post("/v1/chat/completions", json=ask())
        assert failed.status_code == 200 and failed.json()["augmenter"]["outcome"] == "failed"
        assert "connection refused" in failed.json()["augmenter"]["warnings"][0]
        refused = http.post("/v1/chat/completions", json=ask())
    assert refused.status_code == 503 and refused.headers["retry-after"]
    assert refused.json()["error"]["code"] == "llm_unavailable" and "no calls are sent" in refused.text


# auth, secrets, CORS, the page
def test_bearer_auth_and_the_key_never_comes_back(monkeypatch, caplog):
    monkeypatch.setenv("AUGMENTER_TEST_SERVE_KEY", KEY)
    settings = ServeSettings.from_config({"api_key_env": "AUGMENTER_TEST_SERVE_KEY"})
    assert KEY not in repr(settings)
    caplog.set_level("DEBUG")
    leaky = FakeLLM(responses=[f"The token is {KEY} today."], default=LLMError(f"upstream rejected key {KEY}"))
    shown = []
    with Background(make_app(llm=leaky, settings=settings)) as url:
        told = {}
        for headers in (
            {},
            {"Authorization": "Basic dXNlcjpwdw=="},
            {"Authorization": "Bearer wrong-token-123"},
            {"Authorization": KEY},
            {"Authorization": "Bearer " + KEY[:-1]},
            {"Authorization": "Bearer"},
        ):
            r = httpx.post(f"{url}/v1/chat/completions", json=ask(), headers=headers)
            assert r.status_code == 401 and "Authorization: Bearer" in r.json()["error"]["message"]
            assert r.headers["www-authenticate"] == "Bearer"
            told.setdefault(r.json()["error"]["code"], set()).add(r.json()["error"]["message"])
            shown.append(r.text + str(r.headers))
        # a missing key, a header that is no bearer token and a wrong key are told apart; every wrong key alike
        assert {code: len(messages) for code, messages in told.items()} == {
            "missing_api_key": 1,
            "invalid_authorization": 1,
            "invalid_api_key": 1,
        }
        assert httpx.get(f"{url}/v1/models").status_code == 401
        for path in ("/healthz", "/readyz", "/"):
            r = httpx.get(url + path)
            assert r.status_code == 200
            shown.append(r.text)
        assert httpx.get(f"{url}/readyz").json()["auth"] is True
        client = OpenAI(base_url=f"{url}/v1", api_key=KEY, max_retries=0)
        streamed = list(client.chat.completions.create(model="augmenter", messages=ask()["messages"], stream=True))
        shown.append(json.dumps([c.model_dump() for c in streamed]))
        failed = client.chat.completions.create(model="augmenter", messages=ask()["messages"])
        shown.append(failed.model_dump_json())
    assert failed.model_extra["augmenter"]["outcome"] == "failed"
    assert "[REDACTED]" in failed.model_extra["augmenter"]["warnings"][0]
    assert "[REDACTED]" in shown[-2]  # the model's reply that quoted the key, in the draft and the answer
    assert all(KEY not in text for text in shown) and KEY not in caplog.text


def test_a_missing_or_short_key_is_a_config_error(monkeypatch):
    monkeypatch.delenv("AUGMENTER_TEST_SERVE_KEY", raising=False)
    with pytest.raises(ConfigError, match=r"\$AUGMENTER_TEST_SERVE_KEY is not set"):
        ServeSettings.from_config({"api_key_env": "AUGMENTER_TEST_SERVE_KEY"})
    monkeypatch.setenv("AUGMENTER_TEST_SERVE_KEY", "abc")
    with pytest.raises(ConfigError, match="fewer than 8 characters"):
        ServeSettings.from_config({"api_key_env": "AUGMENTER_TEST_SERVE_KEY"})


def test_cors_is_off_by_default_and_on_for_the_listed_origins():
    preflight = {
        "Origin": "http://app.test",
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization,content-type",
    }
    pool = pool_from_config(compose("serve", ["llm=fake"])).build()
    with TestClient(create_app(pool)) as http:
        assert "access-control-allow-origin" not in http.options("/v1/chat/completions", headers=preflight).headers
        plain = http.get("/v1/models", headers={"Origin": "http://app.test"})
        assert "access-control-allow-origin" not in plain.headers
    with TestClient(create_app(pool, ServeSettings(cors_origins=("http://app.test",)))) as http:
        allowed = http.options("/v1/chat/completions", headers=preflight)
        assert allowed.headers["access-control-allow-origin"] == "http://app.test"
        other = http.options("/v1/chat/completions", headers={**preflight, "Origin": "http://evil.test"})
        assert "access-control-allow-origin" not in other.headers


def test_the_page_is_served_with_a_strict_content_security_policy(http):
    page = http.get("/")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "script-src 'self'" in page.headers["content-security-policy"] and "<script" in page.text
    assert page.headers["x-content-type-options"] == "nosniff"
    script = http.get("/static/chat.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    # every piece of text goes in with textContent: no HTML parsing of data anywhere in the page's code
    assert not re.search(r"innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(", script.text)
    assert "onclick" not in page.text and "<script>" not in page.text  # no inline code (the CSP forbids it)


# the command
def test_serve_cfg_job_shows_the_serve_settings(capsys):
    assert main(["serve", "--cfg", "job", "llm=fake", "serve.port=9001"]) == 0
    shown = capsys.readouterr().out
    assert "serve:" in shown and "port: 9001" in shown and "max_message_chars: 2000" in shown


@pytest.mark.parametrize(
    "override, message",
    [
        ("serve.port=70000", "serve.port=70000 is invalid"),
        ("serve.api_key_env=AUGMENTER_NO_SUCH_VARIABLE", "$AUGMENTER_NO_SUCH_VARIABLE is not set"),
        ("serve.workers=0", "serve.workers=0 is invalid"),
    ],
)
def test_serve_errors_are_one_line(override, message, capsys):
    assert main(["serve", "llm=fake", override]) == 2
    err = capsys.readouterr().err
    assert message in err and err.strip().count("\n") <= 1 and "Traceback" not in err


def test_a_busy_port_is_one_line(capsys):
    taken = bind("127.0.0.1", 0)
    taken.listen()
    try:
        assert main(["serve", "llm=fake", f"serve.port={taken.getsockname()[1]}"]) == 2
    finally:
        taken.close()
    assert "cannot listen on 127.0.0.1:" in capsys.readouterr().err
