"""Dense retrieval (MiniLM + faiss), its on-disk embeddings, HNSW, and the BM25 + dense hybrid."""

import numpy as np
import pytest

from augmenter.knowledge import BM25sRetriever, DenseRetriever, HybridRetriever, top_k


@pytest.fixture(scope="module")
def flat(hotel_snippets, tmp_path_factory):
    retriever = DenseRetriever(store=str(tmp_path_factory.mktemp("emb")), progress=False)
    retriever.index(hotel_snippets)
    return retriever


def test_dense_retrieval_finds_what_the_words_do_not_say(flat, hotel_snippets):
    hits = top_k(flat.scores("can I bring my dog along?"), 5)
    assert any(w in hotel_snippets[i].lower() for i, _ in hits for w in ("pet", "dog", "animal"))
    assert flat.embeddings.shape == (len(hotel_snippets), 384)
    assert np.allclose(np.linalg.norm(flat.embeddings, axis=1), 1.0, atol=1e-4)


def test_embeddings_are_stored_once_and_reused_by_content_hash(flat, hotel_snippets):
    again = DenseRetriever(store=str(flat.store), progress=False)
    again.encode = lambda *a, **k: (_ for _ in ()).throw(AssertionError("encoded again"))
    again.index(hotel_snippets)
    assert again.loaded_from_disk and np.array_equal(again.embeddings, flat.embeddings)
    changed = DenseRetriever(store=str(flat.store), progress=False)
    changed.index([*hotel_snippets[:-1], hotel_snippets[-1] + " (edited)"])
    assert not changed.loaded_from_disk and len(list(flat.store.glob("*.npy"))) == 2


def test_hnsw_agrees_with_exact_search_on_a_small_corpus(flat, hotel_snippets):
    hnsw = DenseRetriever(index="hnsw", store=str(flat.store), progress=False)
    hnsw.index(hotel_snippets)
    for query in ("is there free parking?", "do rooms have a kitchen?", "how far is the city centre?"):
        assert [i for i, _ in top_k(hnsw.scores(query), 5)] == [i for i, _ in top_k(flat.scores(query), 5)]


class _Fixed:
    def __init__(self, scores):
        self._scores = np.array(scores, dtype=float)

    def index(self, texts):
        pass

    def scores(self, query):
        return self._scores


def test_reciprocal_rank_fusion_by_hand():
    hybrid = HybridRetriever(_Fixed([3.0, 0.0, 1.0, 2.0]), _Fixed([0.1, 0.9, 0.5, 0.0]), k_rrf=60)
    fused = hybrid.scores("q")
    expected = [1 / 61 + 1 / 63, 1 / 61, 1 / 63 + 1 / 62, 1 / 62]  # sparse ranks 0,3,2; dense ranks 1,2,0
    assert np.allclose(fused, expected)
    assert [i for i, _ in top_k(fused, 2)] == [0, 2]


def test_hybrid_on_real_snippets_keeps_both_signals(flat, hotel_snippets):
    hybrid = HybridRetriever(BM25sRetriever(), flat)
    hybrid.sparse.index(hotel_snippets)  # the dense half is indexed already
    hits = top_k(hybrid.scores("can I bring my dog along?"), 5)
    assert any(w in hotel_snippets[i].lower() for i, _ in hits for w in ("pet", "dog", "animal"))
