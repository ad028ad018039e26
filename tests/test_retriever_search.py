"""`search` (each backend's own top-k, batches, an entity's rows) gives the same hits as `top_k(scores(q), k, rows)`
on the real DSTC11 knowledge base and dev queries."""

import json

import numpy as np
import pytest

from augmenter.errors import InputError
from augmenter.knowledge import (
    BM25sRetriever,
    DenseRetriever,
    EntityLinker,
    HybridRetriever,
    KnowledgeConsolidator,
    RankBM25Retriever,
    tokenize,
    top_k,
)
from augmenter.knowledge.linker import strip_names
from augmenter.knowledge.topk import NUMBA
from conftest import DSTC11

K = 5
BACKENDS = ["bm25s_numpy", "bm25s_numba", "rank_bm25", "lucene"]


@pytest.fixture(scope="module")
def texts(dstc11_kb):
    return [s.text for s in dstc11_kb.snippets]


@pytest.fixture(scope="module")
def cases(dstc11_kb):
    """(query, rows) for the last user turn of the first 300 DSTC11 dev dialogues; rows as the consolidator
    focuses them (the linked entities' snippets, names stripped from the query), else None."""
    logs = json.loads((DSTC11 / "dev" / "logs.json").read_text(encoding="utf-8"))[:300]
    linker, out = EntityLinker(dstc11_kb.entities), []
    for log in logs:
        q = log[-1]["text"]
        mentions = linker.link(q)
        out.append((q, None))
        if mentions:
            rows = sorted({r for m in mentions for r in dstc11_kb.rows_of(m.domain, m.entity_id)})
            out.append((strip_names(q, [m.surface for m in mentions]), rows))
    assert sum(rows is not None for _, rows in out) > 30
    return out


@pytest.fixture(scope="module")
def built(texts, tmp_path_factory):
    """Each installed backend, indexed once; Lucene also with every document scored (the reference for rows:
    its `scores` keeps only the top `hits`)."""
    made = {}

    def get(name):
        if name not in made:
            if name == "bm25s_numba" and not NUMBA:
                pytest.skip("numba is not installed")
            if name.startswith("bm25s"):
                made[name] = BM25sRetriever(numba=name == "bm25s_numba")
            elif name == "rank_bm25":
                made[name] = RankBM25Retriever()
            else:
                pytest.importorskip("pyserini")
                from augmenter.knowledge.lucene import LuceneRetriever

                index_dir = tmp_path_factory.mktemp("lucene") / "index"
                made[name] = LuceneRetriever(index_dir=str(index_dir), threads=2)
                made[name].index(texts)
                made["lucene_all"] = LuceneRetriever(index_dir=str(index_dir), hits=len(texts))
                made["lucene_all"].index(texts)
                return made[name]
            made[name].index(texts)
        return made[name]

    return get


def assert_same(ours, theirs, atol: float = 0.0):
    """The same hits; with `atol`, scores within it, and hits whose scores are that close may swap places (the last
    places may go to others of the same score)."""
    if not atol:
        assert ours == theirs
        return
    assert len(ours) == len(theirs)
    np.testing.assert_allclose([s for _, s in ours], [s for _, s in theirs], atol=atol, rtol=0)
    start = 0
    while start < len(ours):  # groups of near-equal scores
        end = start + 1
        while end < len(ours) and abs(ours[end][1] - ours[start][1]) <= atol:
            end += 1
        if end < len(ours):
            assert {r for r, _ in ours[start:end]} == {r for r, _ in theirs[start:end]}
        start = end


@pytest.mark.parametrize("name", BACKENDS)
def test_search_gives_the_same_top5_as_scores_and_top_k(name, built, cases):
    retriever = built(name)
    reference = built("lucene_all") if name == "lucene" else retriever
    # Anserini rounds Lucene's scores to 4 decimals, then lowers each of a run of ties by 1e-6 more than the one
    # before (ties by docid): the same document can score up to ~1e-4 apart in two searches over other documents.
    atol, identical, focused = 1e-4 if name == "lucene" else 0.0, 0, 0
    for query, rows in cases:
        ours = retriever.search([query], K, rows)[0]
        theirs = top_k((retriever if rows is None else reference).scores(query), K, rows)
        assert_same(ours, theirs, atol)
        identical += [r for r, _ in ours] == [r for r, _ in theirs]
        focused += rows is not None and bool(ours)
    assert focused > 20 and identical >= 0.95 * len(cases)


@pytest.mark.parametrize("name", BACKENDS)
def test_a_batch_gives_what_one_query_at_a_time_gives(name, built, cases):
    retriever = built(name)
    queries = [q for q, rows in cases if rows is None][: 40 if name == "rank_bm25" else 150]
    assert retriever.search(queries, K) == [retriever.search([q], K)[0] for q in queries]
    rows = next(rows for _, rows in cases if rows is not None)
    assert retriever.search(queries[:20], K, rows) == [retriever.search([q], K, rows)[0] for q in queries[:20]]


@pytest.mark.parametrize("name", BACKENDS)
def test_edge_cases_and_bad_input(name, built, texts):
    retriever, n = built(name), len(texts)
    everything = retriever.search(["free wifi"], n + 10)[0]  # k beyond the corpus: every matching row
    assert len(everything) > 10 and everything == sorted(everything, key=lambda h: (-h[1], h[0]))
    if name != "lucene":  # Lucene's `scores` keeps its top `hits` alone
        assert everything == top_k(retriever.scores("free wifi"), n + 10)
    assert retriever.search(["", "the of and", "zzzzqqq"], K) == [[], [], []]  # nothing to match
    assert retriever.search(["free wifi"], K, rows=[]) == [[]]
    assert retriever.search(["free wifi"], 0) == [[]] and retriever.search([], K) == []
    rows = [r for r, _ in everything[:3]]
    assert [r for r, _ in retriever.search(["free wifi"], K, rows + rows[::-1])[0]] == rows  # duplicates once
    for bad in ([n], [-1], [0.5], [[1, 2]]):
        with pytest.raises(InputError, match="rows"):
            retriever.search(["free wifi"], K, bad)
    with pytest.raises(InputError, match="k, the number of hits"):
        retriever.search(["free wifi"], -1)
    with pytest.raises(InputError, match="list of query strings"):
        retriever.search("free wifi", K)


def test_a_large_entity_focus_goes_through_the_row_mask(built, texts, cases):
    """More than 1/16 of the rows: bm25s masks rows inside its top-k instead of scoring the rows alone."""
    numpy_path = built("bm25s_numpy")
    fast = built("bm25s_numba") if NUMBA else numpy_path
    rows = sorted(np.random.default_rng(0).choice(len(texts), len(texts) // 3, replace=False).tolist())
    for query, _ in cases[:100]:
        theirs = top_k(numpy_path.scores(query), K, rows)
        assert fast.search([query], K, rows)[0] == theirs == numpy_path.search([query], K, rows)[0]


def test_the_consolidator_retrieves_what_it_did_before(dstc11_kb, built, cases):
    retriever = built("bm25s_numba" if NUMBA else "bm25s_numpy")
    kc = KnowledgeConsolidator(dstc11_kb, retriever, k=K, opinions=False)
    for query, _ in cases[:150:3]:
        entities = kc.link(query)
        used, evidence = kc.retrieve(query, (), entities)
        rows = sorted({r for m in entities for r in dstc11_kb.rows_of(m.domain, m.entity_id)}) if entities else None
        before = top_k(retriever.scores(used), K, rows) if rows else []
        before = before or top_k(retriever.scores(used), K)
        assert [(s.id, s.score) for s in evidence] == [(dstc11_kb.snippets[i].id, round(s, 4)) for i, s in before]


@pytest.fixture(scope="module")
def dense(hotel_snippets, tmp_path_factory):
    retriever = DenseRetriever(store=str(tmp_path_factory.mktemp("emb")), progress=False)
    retriever.index(hotel_snippets[:800])  # the MiniLM encoder is slow on CPU: a small real corpus
    return retriever


def test_dense_search_agrees_with_scores(dense, cases):
    n = len(dense.embeddings)
    queries = [q for q, rows in cases if rows is None][:25]
    batch = dense.search(queries, K)
    rng = np.random.default_rng(0)
    for query, ours in zip(queries, batch):
        assert_same(ours, top_k(dense.scores(query), K), atol=1e-5)
        assert_same(dense.search([query], K)[0], ours, atol=1e-5)  # one at a time: faiss's other kernel
        rows = np.sort(rng.choice(n, 60, replace=False)).tolist()
        assert_same(dense.search([query], K, rows)[0], top_k(dense.scores(query), K, rows), atol=1e-5)
    assert dense.search(["", "   "], K) == [[], []] and dense.search(["wifi"], K, []) == [[]]
    assert len(dense.search(["wifi"], n + 5)[0]) <= n
    with pytest.raises(InputError, match="rows"):
        dense.search(["wifi"], K, [n])


def test_hnsw_and_hybrid_search_agree_with_scores(dense, hotel_snippets, cases):
    hnsw = DenseRetriever(index="hnsw", store=str(dense.store), progress=False)
    hybrid = HybridRetriever(BM25sRetriever(), dense)
    hnsw.index(hotel_snippets[:800])  # embeddings loaded from the store
    hybrid.sparse.index(hotel_snippets[:800])
    queries = [q for q, rows in cases if rows is None][:20]
    for retriever in (hnsw, hybrid):
        same = 0
        for query, ours in zip(queries, retriever.search(queries, K)):
            theirs = top_k(retriever.scores(query), K)
            same += [r for r, _ in ours] == [r for r, _ in theirs]
            assert len({r for r, _ in ours} & {r for r, _ in theirs}) >= K - 1
        assert same >= len(queries) - 2


@pytest.mark.skipif(not NUMBA, reason="numba is not installed")
def test_maxscore_and_exhaustive_top_k_agree(built, cases, texts):
    """bm25s's compiled top-k prunes (MaxScore) or adds up every posting, whichever costs less: both exact."""
    from augmenter.knowledge.topk import csc_top_k

    retriever = built("bm25s_numba")
    m, vocab, n = retriever._bm25.scores, retriever._bm25.vocab_dict, len(texts)
    queries = [np.array([vocab[t] for t in tokenize(q) if t in vocab], dtype=np.int64) for q, _ in cases]
    mask = np.zeros(n, dtype=np.bool_)
    mask[::3] = True
    for rows in (None, mask):
        runs = [
            csc_top_k(m["data"], m["indices"], m["indptr"], n, queries, 10, rows, prune=prune, jit=jit)
            for prune, jit in ((float("inf"), True), (0, True), (0, False))
        ]
        assert runs[0] == runs[1] == runs[2]
