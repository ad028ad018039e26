"""Answers from documents, by failure kind: a title word that confined the search, a question with two parts, five
chunks where a sentence answers, a check that refused right drafts for ordinary words, and let through a "yes" the
passage contradicts, an invented option or an invented answer; a refusal sent as an answer; markup, repeated
citations and quotes cut before the answer. The documents are made here; the fake LLM writes the drafts."""

from __future__ import annotations

import math

import pytest

from augmenter.api import Assistant
from augmenter.documents.check import DocumentCheck, code_terms, refuses
from augmenter.documents.composer import question_parts
from augmenter.documents.passages import PassageSelector, units
from augmenter.documents.replies import NOT_FOUND, plain, quote
from augmenter.memory import Location, Snippet, WorkingMemory

PAGES = {
    "versions.md": "# Versions\n\nEach release is tagged in git. Python packages follow semantic versioning.\n",
    "install.md": "# Installing\n\n## Requirements\n\nThe library needs Python 3.9 or later.\n\n"
    "Install it with pip:\n\n```console\n$ pip install fastlib[http2]\n```\n\n"
    "## Upgrading\n\nRun pip with the --upgrade flag to get the latest version.\n",
    "ssl.md": "# SSL { #ssl }\n\nBy default certificates are verified. You can disable SSL verification "
    "completely with verify=False. This is not recommended.\n\n"
    "/// warning\nDisabled verification exposes you to attacks :warning:.\n///\n",
    "timeouts.md": "# Timeouts\n\nThe default timeout is five seconds of network inactivity. Set timeout=None to "
    "disable timeouts. HTTP/2 is not enabled by default.\n",
}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    root = tmp_path_factory.mktemp("lib")
    docs = root / "docs"
    docs.mkdir()
    for name, text in PAGES.items():
        (docs / name).write_text(text, encoding="utf-8")
    return docs, root / "index"


def ask(folder, question: str, draft: str, *more: str):
    docs, index = folder
    assistant = Assistant.from_overrides(
        [
            "knowledge=docs",
            f"knowledge.path={docs}",
            f"knowledge.index_dir={index}",
            "llm=fake",
            f"llm.default='{draft}'",
            *more,
        ]
    )
    return assistant.session().say(question)


def passage(text: str, path: str = "a.md", heading=("A",), score: float = 1.0, id: str = "a.md#1") -> Snippet:
    return Snippet(
        id=id,
        text=text,
        doc_type="passage",
        score=score,
        entity_name=" > ".join(heading),
        location=Location(path=path, heading=list(heading)),
    )


# ---- retrieval -----------------------------------------------------------------------------------------------
def test_a_question_word_that_is_a_documents_title_no_longer_confines_the_search(folder):
    memory = ask(folder, "Which Python version do I need?", "You need Python 3.9 or later.")
    assert memory.outcome == "answered" and "install.md" in {s.location.path for s in memory.e}
    focused = ask(
        folder, "Which Python version do I need?", "You need Python 3.9 or later.", "knowledge.answer.focus_titles=true"
    )
    assert {s.location.path for s in focused.e} == {"versions.md"}  # the earlier behaviour, kept as a setting


def test_a_question_with_two_parts_is_searched_per_part():
    assert question_parts("How do I disable SSL verification, and what is the default timeout?") == [
        "How do I disable SSL verification",
        "what is the default timeout",
    ]
    assert question_parts("Is HTTP/2 enabled by default?") == ["Is HTTP/2 enabled by default?"]
    assert question_parts("Can I use a proxy and a timeout together?") == [
        "Can I use a proxy and a timeout together?"
    ]  # "and" between nouns: one question


def test_the_prompt_carries_the_sentences_that_answer_not_whole_chunks(folder):
    memory = ask(folder, "How do I install it with HTTP/2 support?", "Run pip install fastlib[http2].")
    shown = memory.trace[1].inputs["messages"][-1]["content"]
    assert "$ pip install fastlib[http2]" in shown and "Install it with pip:" in shown
    assert memory.e[0].doc_type == "passage" and len(" ".join(s.text for s in memory.e).split()) <= 160
    assert "You answer" not in shown and "EXAMPLE" not in shown  # the documents prompt, no hotel examples


def test_units_keep_code_lines_together_and_split_prose_into_sentences():
    found = units("Install it with pip. Then run it:\n$ pip install x\n$ x --help\nIt prints the usage.")
    assert [(u.text, u.code) for u in found] == [
        ("Install it with pip.", False),
        ("Then run it:", False),
        ("$ pip install x\n$ x --help", True),
        ("It prints the usage.", False),
    ]


def test_the_selector_keeps_the_sentence_after_the_one_that_names_the_topic():
    chunk = passage("Timeouts are on by default. The default is five seconds. Unrelated closing words here.")
    picked = PassageSelector(passages=1, before=0, after=1).select("What is the default timeout?", [chunk])
    assert "five seconds" in picked[0].text


# ---- the check -----------------------------------------------------------------------------------------------
def check(draft: str, *texts: str, question: str = "How do I disable verification?") -> list[str]:
    mem = WorkingMemory(q=question, e=[passage(t, id=f"a.md#{i}") for i, t in enumerate(texts)])
    found = DocumentCheck().inspect(mem, draft)
    return [] if found.passed else [found.feedback()]


def test_ordinary_words_a_right_draft_adds_are_no_reason_to_refuse_it():
    assert (
        check(
            "Put verify=False in the call to disable SSL verification.",
            "You can disable SSL verification completely with verify=False.",
        )
        == []
    )


def test_numbers_code_and_names_the_passages_lack_fail():
    passage_text = "The default timeout is five seconds. Set timeout=None to disable timeouts."
    assert "10" in check("The default timeout is 10 seconds.", passage_text, question="What is the default?")[0]
    assert "disable_timeouts" in check("Call client.disable_timeouts().", passage_text)[0]  # an invented option
    assert check("The default timeout is 5 seconds.", passage_text, question="What is the default?") == []
    assert code_terms("Use `--upgrade` or client.get(url, verify=False).") == [
        "--upgrade",
        "client.get",
        "url",
        "verify=False",
    ]
    assert "wait=True" in check("Call typer.launch(url, wait=True).", "typer.launch(url) opens it; wait until True.")[0]


def test_a_yes_the_passage_contradicts_and_a_no_it_does_not_say_fail():
    text = "HTTP/2 is not enabled by default."
    assert "yes" in check("Yes, HTTP/2 is enabled by default.", text, question="Is HTTP/2 on by default?")[0]
    assert check("No, HTTP/2 is not enabled by default.", text, question="Is HTTP/2 on by default?") == []
    assert (
        "says no"
        in check(
            "No, certificates are verified.",
            "By default certificates are verified.",
            question="Are certificates verified?",
        )[0]
    )


def test_an_invented_answer_and_a_refusal_do_not_pass():
    assert "no sentence" in check("The moon hosts a casino with a rooftop golf course.", "Set timeout=None.")[0]
    assert (
        "no sentence"
        in check(
            "Employees must wear a suit and a tie on Mondays.", "Dress as you like.", question="What is the dress code?"
        )[0]
    )
    spliced = check(
        "Submit it at least two weeks before the end of the pay period.",
        "Submit it at least two weeks ahead.",
        "Timesheets close at the end of the pay period.",
        question="When do I ask for leave?",
    )
    assert "no sentence" in spliced[0]  # words of two sentences joined into a claim neither makes
    assert refuses("NOT IN THE PASSAGES") and refuses("I don't know.") and not refuses("No, it is off.")


# ---- the reply -----------------------------------------------------------------------------------------------
def test_a_passing_draft_leads_then_the_passage_it_rests_on_quoted_and_cited_once(folder):
    memory = ask(folder, "How do I turn off certificate checks?", "Pass **verify=False** [1].")
    assert memory.outcome == "answered"
    answer, cited = memory.response.split("\n\n")
    assert answer == "Pass verify=False."  # no Markdown, no passage number
    assert cited.startswith('"') and "with verify=False." in cited and cited.endswith("(ssl.md)")
    assert "{ #ssl }" not in memory.response and ":warning:" not in memory.response and "///" not in memory.response
    records = memory.citation_records()
    assert len(records) == 1 and records[0]["where"] == ["ssl.md, SSL"]


def test_a_failed_draft_is_refused_or_answered_from_its_passage_never_sent(folder):
    invented = ask(folder, "What is the default timeout?", "The default timeout is 30 seconds.")
    assert invented.outcome == "abstained" and invented.response.startswith(NOT_FOUND) and "30" not in invented.response
    assert "five seconds" in invented.response  # the closest passage, shown as such
    quoted = ask(
        folder,
        "What is the default timeout?",
        "The default timeout is 30 seconds.",
        "knowledge.answer.min_quote_score=0.3",
    )
    assert (
        quoted.outcome == "quoted" and quoted.response.startswith("The documents say: ") and "30" not in quoted.response
    )
    assert "five seconds" in quoted.response and quoted.citation_records()[0]["where"] == ["timeouts.md, Timeouts"]
    refused = ask(folder, "Which proxy protocols are supported?", "NOT FOUND")
    assert refused.outcome == "abstained" and refused.response.startswith(NOT_FOUND)
    assert "NOT FOUND" not in refused.response and refused.citation_records() == []


def test_a_yes_no_question_is_answered_by_the_passage_that_settles_it_not_by_the_models_verdict(folder):
    memory = ask(folder, "Is HTTP/2 turned on by default?", "Yes, HTTP/2 is on by default.")
    assert memory.outcome == "quoted" and "Yes" not in memory.response
    assert memory.response.startswith('The documents say: "') and "HTTP/2 is not enabled by default." in memory.response


def test_a_yes_no_question_the_model_would_refuse_is_not_found(folder):
    from augmenter.llm.base import Completion, MeteredLLM
    from augmenter.llm.fake import FakeLLM

    sure = Completion("NOT", top_logprobs=[{"NOT": math.log(0.9), "Yes": math.log(0.1)}])  # the scoring pass
    llm = MeteredLLM(FakeLLM(responses=[sure, "NOT FOUND"]))
    docs, index = folder
    memory = (
        Assistant.from_overrides(["knowledge=docs", f"knowledge.path={docs}", f"knowledge.index_dir={index}"], llm=llm)
        .session()
        .say("Does it support SOCKS proxies?")
    )
    assert memory.signals["refusal"] == pytest.approx(0.9) and memory.outcome == "abstained"
    assert memory.response.startswith(NOT_FOUND) and memory.llm_calls == 2


def test_quotes_are_whole_sentences_and_drafts_are_plain_text():
    text = "First sentence here. Second one is longer than the limit allows for sure. Third."
    assert quote(text, words=3) == "First sentence here."
    assert quote("Run this:\n$ app --help\n$ app run") == "Run this:\n$ app --help\n$ app run"
    assert (
        plain("## Answer\n**Yes**, use `verify=False` [2].\n```python\nx = 1\n```")
        == "Answer\nYes, use verify=False.\nx = 1"
    )
