"""OTT-QA (Wiki QA) data, the hyperlink linker and the evidence chainer on a few real dev tables."""

import json

import pytest

from augmenter.cli.main import main
from augmenter.eval.metrics import answer_prf, answer_recall
from augmenter.knowledge import BM25sRetriever
from augmenter.knowledge.chainer import EvidenceChainer, HyperlinkLinker, TableTextCorpus
from augmenter.tasks.ottqa import load_passages, load_questions, load_tables
from augmenter.utilities.kf1 import normalize_answer
from conftest import DATA

OTT = DATA / "ott-qa"


def _table(question) -> str:
    return question.labels[0]["table_id"]


@pytest.fixture(scope="module")
def small():
    """The tables of 12 dev questions whose answer sits in a linked passage, with their passages."""
    questions = [q for q in load_questions(OTT)][:400]
    tables = load_tables(OTT, {_table(q) for q in questions})
    passages = load_passages(OTT, set(tables))
    chosen = [
        q
        for q in questions
        if any(
            normalize_answer(q.references[0]) in normalize_answer(t)
            for t in (
                passages[link]
                for r in range(len(tables[_table(q)].rows))
                for link in tables[_table(q)].row_links(r)
                if link in passages
            )
        )
    ][:12]
    ids = {_table(q) for q in chosen}
    tables = {k: v for k, v in tables.items() if k in ids}
    return chosen, TableTextCorpus(tables, load_passages(OTT, ids))


def test_loading_the_dev_set():
    questions = load_questions(OTT)
    assert len(questions) == 2214 and all(q.references[0] for q in questions)
    assert len(load_questions(OTT, limit=300, seed=0)) == 300
    table = next(iter(load_tables(OTT, {_table(questions[0])}).values()))
    assert table.header and table.rows and table.row_text(0).startswith(table.title + " | ")


def test_the_linker_follows_cell_hyperlinks_both_ways(small):
    _, corpus = small
    linker = HyperlinkLinker(corpus)
    row = next(i for i, u in enumerate(corpus.units) if u.kind == "row" and linker.passages_of(i))
    passage = linker.passages_of(row)[0]
    assert corpus.units[passage].kind == "passage" and row in linker.rows_of(passage)


def test_chains_reach_answers_that_rows_alone_do_not(small):
    questions, corpus = small
    lexical = BM25sRetriever()
    lexical.index(corpus.texts)
    chainer = EvidenceChainer(corpus, lexical, lexical, k=5)  # BM25 stands in for the dense retriever here
    rows_only = sum(
        answer_recall([corpus.units[c.row].text for c in chainer.chains(q.q)], q.references) for q in questions
    )
    chained = sum(answer_recall([c.text for c in chainer.chains(q.q)], q.references) for q in questions)
    assert chained >= rows_only + 3  # 5 of 12 here, against 0 from the rows alone
    chains = [c for q in questions for c in chainer.chains(q.q)]
    linked = [c for c in chains if c.passage is not None]
    assert linked and all(c.passage in chainer.linker.passages_of(c.row) for c in linked)  # the row's own links
    for c in chains:  # "<row> => <its linked passage, clipped>", or the row alone
        row = corpus.units[c.row]
        passage = corpus.units[c.passage].text if c.passage is not None else None
        assert row.kind == "row" and c.text == row.text + (
            "" if passage is None else " => " + (passage if len(passage) <= 400 else passage[:400] + "...")
        )
    first = chainer.chains(questions[0].q)
    assert 0 < len(first) <= 5 and [c.score for c in first] == sorted((c.score for c in first), reverse=True)


def test_answer_metrics():
    assert normalize_answer("The  Beatles!") == "beatles"
    assert answer_prf("Lynda La Plante", ["Lynda La Plante"]) == (100.0, 100.0, 100.0)
    p, r, f = answer_prf("It was Lynda La Plante", ["Lynda La Plante"])
    assert (round(p), round(r), round(f)) == (60, 100, 75)
    assert answer_prf("nobody", ["Lynda La Plante"]) == (0.0, 0.0, 0.0)
    assert answer_recall(["... created by Lynda La Plante ."], ["Lynda La Plante"]) == 1.0
    assert answer_recall(["Lynda"], ["Lynda La Plante"]) == 0.0


def test_wiki_qa_eval_end_to_end_with_the_fake_llm(tmp_path):
    """`augmenter eval experiment=table5_*` on 3 dev questions (BM25 instead of the dense encoder, for speed)."""
    common = [
        f"data_root={DATA}",
        "llm=fake",
        "llm.default=Lynda La Plante",
        "retriever=bm25s",
        "eval.limit=3",
        f"eval.out_dir={tmp_path}",
        "eval.progress=false",
        "llm_cache.enabled=false",
    ]
    for name in ("table5_closed_book", "table5_dpr", "table5_core", "table5_core_feedback"):
        assert main(["eval", f"experiment={name}", *common]) == 0
    runs = tmp_path / "ottqa-dev-n3-seed0"
    summaries = {p.parent.name: json.loads(p.read_text()) for p in runs.glob("*/summary.json")}
    assert set(summaries) == {"table5_closed_book", "table5_dpr", "table5_core", "table5_core_feedback"}
    assert all({"P", "R", "F1", "answer_recall@5"} <= set(s["metrics"]) for s in summaries.values())
    assert summaries["table5_closed_book"]["metrics"]["answer_recall@5"] == 0
    assert summaries["table5_closed_book"]["cost"]["knowledge_used"] == 0
    record = json.loads((runs / "table5_core" / "records.jsonl").read_text().splitlines()[0])
    assert record["memory"]["e"] and all(s["doc_type"] == "chain" for s in record["memory"]["e"])
    dense = json.loads((runs / "table5_dpr" / "records.jsonl").read_text().splitlines()[0])
    assert {s["doc_type"] for s in dense["memory"]["e"]} <= {"row", "passage"}
    feedback = [json.loads(line) for line in (runs / "table5_core_feedback" / "records.jsonl").read_text().splitlines()]
    assert any(t["action"] == "verify_utility" for r in feedback for t in r["memory"]["trace"])
    assert main(["report", str(runs), "--out", str(tmp_path / "report"), "--no-bertscore"]) == 0
    report = (tmp_path / "report" / "report.md").read_text()
    assert "## Table 5: Wiki QA" in report
    assert "| + linker + chainer + feedback (`table5_core_feedback`) | 3 |" in report
    assert "11.80" in report  # the paper's F1 beside ours
