"""Citations of your own documents through every way in: `augmenter chat` (printed and in --output),
the Python API, the OpenAI-compatible service's `augmenter` field, and the web chat in a real browser, where a
citation links to its passage and a document holding HTML or a script stays text. The fake LLM answers from
rules; the documents are real files (a PDF made with fpdf2, a text file, Markdown) or the shipped handbook."""

from __future__ import annotations

import json
import os
import shutil

import httpx
import pytest
from test_documents import make_pdf

from augmenter.api import Assistant
from augmenter.cli.main import main
from augmenter.config import compose
from augmenter.documents.replies import NOT_FOUND
from augmenter.serve import Background, ServeSettings, create_app, pool_from_config, warm_up

HOTEL_Q = "What is the hotel limit per night in London?"
HOTEL_A = "In London the hotel limit is 210 euros per night."
# The sentences the answer rests on, quoted after it.
HOTEL_QUOTE = (
    "In London the hotel limit is 210 euros per night. "
    "Breakfast is paid for when the hotel does not include it. Book through the travel agency."
)
DOOR_Q = "What is the door code?"
DOOR_A = "The door code is 4711."
MARKUP = "<img src=x onerror=window.__pwned=4> <script>window.__pwned=5</script>"


@pytest.fixture(scope="module")
def docs(tmp_path_factory):
    root = tmp_path_factory.mktemp("docs")
    folder = root / "policies"
    folder.mkdir()
    make_pdf(
        folder / "travel.pdf",
        [
            ("Flights", "Flights are booked in economy class."),
            (
                "Hotels",
                "Hotel rooms may cost up to 140 euros per night. In London the "
                "hotel limit is 210 euros per night. Breakfast is paid for when "
                "the hotel does not include it. Book through the travel agency.",
            ),
        ],
        "Travel Policy",
    )
    (folder / "door.txt").write_text(f"The door code is 4711. {MARKUP} Change it every month.\n", encoding="utf-8")
    (folder / "kitchen.md").write_text("# Kitchen\n\nThe kitchen closes at 18:00.\n", encoding="utf-8")
    return folder, root / "index"


def fake_rules(rules: dict[str, str]) -> str:
    """The fake LLM's {question words: reply} as a Hydra override."""
    return "+llm.rules={" + ", ".join(f"{key}: '{reply}'" for key, reply in rules.items()) + "}"


def overrides(docs, *more):
    folder, index = docs
    return [
        "knowledge=docs",
        f"knowledge.path={folder}",
        f"knowledge.index_dir={index}",
        "llm=fake",
        fake_rules({"door code": DOOR_A, "hotel limit per night in London": HOTEL_A}),  # the first match wins
        "llm.default='I do not know.'",
        *more,
    ]


def test_the_python_api_cites_file_page_and_heading(docs):
    memory = Assistant.from_overrides(overrides(docs)).session().say(HOTEL_Q)
    assert memory.response == f'{HOTEL_A}\n\n"{HOTEL_QUOTE}" (travel.pdf, page 2, Hotels)'
    assert memory.outcome == "answered"
    sources, claims = memory.sources()
    where = sources[0].location
    assert (where.path, where.page, where.heading) == ("travel.pdf", 2, ["Travel Policy", "Hotels"])
    assert sources[0].quote == HOTEL_QUOTE and "140 euros" in sources[0].passage
    assert claims == [(HOTEL_A, [1])]
    assert memory.citation_records() == [
        {"claim": HOTEL_A, "sources": ["travel.pdf#2"], "where": ["travel.pdf, page 2, Travel Policy > Hotels"]}
    ]


def test_chat_prints_and_records_where_each_source_is(docs, tmp_path, capsys):
    script, out = tmp_path / "turns.txt", tmp_path / "session.jsonl"
    script.write_text(f"{HOTEL_Q}\n", encoding="utf-8")
    assert main(["chat", "--script", str(script), "--output", str(out), *overrides(docs)]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert f'[1] travel.pdf, page 2, Travel Policy > Hotels: "{HOTEL_QUOTE}"' in printed
    record = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert record["citations"][0]["where"] == ["travel.pdf, page 2, Travel Policy > Hotels"]
    evidence = record["memory"]["e"][0]
    assert evidence["location"]["path"] == "travel.pdf" and evidence["location"]["page"] == 2


def test_the_docs_demo_answers_from_the_handbook_and_refuses_what_it_does_not_say(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AUGMENTER_CACHE", str(tmp_path / "cache"))
    rules = fake_rules(
        {
            "dress code": "Employees must wear a suit and a tie on Mondays.",  # the first match wins
            "hotel limit per night in London": "In London, Paris and Zurich the limit is 210 euros per night.",
        }
    )
    assert main(["chat", "--demo", "docs", "llm=fake", rules, "llm.default='I do not know.'"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert (
        "[1] travel-and-expenses.pdf, page 2, Travel and Expenses Policy > Hotels and daily allowance: "
        '"In London, Paris and Zurich the limit is 210 euros per night.'
    ) in printed
    after = printed[printed.index("dress code in the office?") :]
    reply = after[after.index("assistant>") :]
    assert reply.startswith(f"assistant> {NOT_FOUND}") and "suit" not in reply  # the invented draft is not sent


def test_the_service_names_file_page_heading_quote_and_passage(docs):
    cfg = compose("serve", overrides(docs))
    warm_up(cfg)
    with Background(create_app(pool_from_config(cfg, 1).build(), ServeSettings())) as url:
        reply = httpx.post(
            f"{url}/v1/chat/completions",
            timeout=60,
            json={"model": "augmenter", "messages": [{"role": "user", "content": HOTEL_Q}]},
        ).json()
    summary = reply["augmenter"]
    assert reply["choices"][0]["message"]["content"].startswith(f"{HOTEL_A}\n\n")
    source = summary["sources"][0]
    assert source["where"] == "travel.pdf, page 2, Travel Policy > Hotels" and source["quote"] == HOTEL_QUOTE
    assert source["location"]["page"] == 2 and "140 euros" in source["passage"]
    assert summary["citations"][0]["where"] == [source["where"]]
    assert summary["evidence"][0]["where"].startswith("travel.pdf, page 2")


# ---- the web chat -------------------------------------------------------------------------------------------------
CHROMIUM = os.environ.get("AUGMENTER_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def page_url(docs):
    cfg = compose("serve", overrides(docs))
    warm_up(cfg)
    with Background(create_app(pool_from_config(cfg, 1).build())) as base:
        yield base


@pytest.mark.skipif(not CHROMIUM, reason="no chromium: `make setup` installs it with apt-get")
def test_the_web_chat_links_each_citation_to_its_passage_and_keeps_document_markup_as_text(page_url):
    playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright (augmenter[dev])")
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"])
        context = browser.new_context(bypass_csp=True)  # the escaping alone must keep markup inert
        page = context.new_page()
        page.goto(page_url)
        page.wait_for_function("document.getElementById('status').textContent.includes('ready')")
        for question in (HOTEL_Q, DOOR_Q):
            page.fill("#question", question)
            page.press("#question", "Enter")
            page.wait_for_function(
                f"document.querySelectorAll('.msg.assistant.final').length >= {1 if question == HOTEL_Q else 2}",
                timeout=60_000,
            )
        hotel, door = page.locator(".msg.assistant.final").all()
        item = hotel.locator(".sources li").first
        assert item.locator(".sid").text_content() == "[1] travel.pdf, page 2, Travel Policy > Hotels"
        assert item.locator(".quote").text_content() == HOTEL_QUOTE
        passage = item.locator("details.passage")
        assert not passage.evaluate("d => d.open")
        hotel.locator("a.cite").first.click()  # the claim's [1] leads to its source and opens the passage
        assert passage.evaluate("d => d.open") and page.evaluate("location.hash") == f"#{item.get_attribute('id')}"
        assert passage.locator("mark").text_content() == HOTEL_QUOTE
        assert "140 euros" in passage.locator("blockquote").text_content()
        door_passage = door.locator("details.passage blockquote").text_content()
        assert MARKUP in door_passage  # the document's markup, shown as text
        assert page.evaluate("window.__pwned") is None
        assert page.locator("#log script, #log img").count() == 0
        browser.close()


def test_eval_over_the_handbook_questions_scores_answers_citations_and_refusals(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("AUGMENTER_CACHE", str(tmp_path / "cache"))
    rules = fake_rules(
        {
            "annual leave": "Full-time employees get 27 days of paid annual leave per calendar year.",
            "dress code": "NOT FOUND",
        }
    )
    assert (
        main(
            [
                "eval",
                "task=docs",
                "name=docs_composed",
                "llm=fake",
                rules,
                "llm.default='The moon hosts a casino with a rooftop golf course.'",
                f"eval.out_dir={tmp_path / 'runs'}",
                "eval.progress=false",
            ]
        )
        == 0
    )
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert line.startswith("docs_composed: 22 of 22 turns scored; score ")
    records = [json.loads(r) for r in next((tmp_path / "runs").rglob("records.jsonl")).read_text().splitlines()]
    by_q = {r["memory"]["q"]: r for r in records}
    leave = by_q["How many days of annual leave do full-time employees get?"]
    assert leave["metrics"] == {"score": 100.0, "answerable": 1.0, "correct": 1.0, "cited": 1.0, "refused": 0.0}
    assert leave["citations"][0]["where"][0].startswith("people/leave.md, Leave Policy > Annual leave")
    dress = by_q["What is the dress code in the office?"]
    assert dress["metrics"]["refused"] == 1.0 and dress["metrics"]["score"] == 100.0
    invented = [r for r in records if "moon" in " ".join(r["memory"]["o"])]  # the fake's default reply
    assert invented and all(
        r["outcome"] in ("quoted", "abstained") and "moon" not in r["response"] for r in invented
    )  # never sent: the documents' own words, or "not found"
    quoted = [r for r in invented if r["outcome"] == "quoted"]
    assert quoted and all(r["response"].startswith("The documents say: ") and r["citations"] for r in quoted)


def test_a_follow_up_question_about_another_document_retrieves_from_that_document(tmp_path, monkeypatch):
    """The earlier question joined the search text with equal weight, so a new question's evidence came from the
    previous question's file (the London hotel limit answered from the leave policy after a leave question)."""
    from augmenter.documents.handbook import DEMO_SCRIPT, handbook_dir

    monkeypatch.setenv("AUGMENTER_CACHE", str(tmp_path / "cache"))
    session = Assistant.from_overrides(
        ["knowledge=docs", f"knowledge.path={handbook_dir()}", f"knowledge.index_dir={tmp_path / 'index'}", "llm=fake"]
    ).session()
    first = session.say(DEMO_SCRIPT[0])  # annual leave
    assert first.e[0].location.path == "people/leave.md"
    second = session.say(DEMO_SCRIPT[1])  # the hotel limit in London
    assert second.e[0].location.path == "travel-and-expenses.pdf"
    assert "London" in second.e[0].text
