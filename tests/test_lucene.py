"""Pyserini's on-disk Lucene index behind the retriever interface agrees with bm25s."""

import numpy as np
import pytest

from augmenter.knowledge import BM25sRetriever, top_k
from augmenter.knowledge.lucene import LuceneRetriever

QUERIES = [
    "free parking",
    "is wifi free",
    "can I bring my dog",
    "breakfast included",
    "room service at night",
    "how far is the train station",
    "swimming pool",
    "air conditioning in the rooms",
    "luggage storage",
    "late check out",
    "the staff were friendly",
    "noisy rooms",
    "clean bathroom",
    "gym",
    "airport shuttle",
    "smoking allowed",
    "family rooms",
    "restaurant on site",
    "accessible for wheelchairs",
    "the beds",
]


@pytest.fixture(scope="module")
def lucene(hotel_snippets, tmp_path_factory):
    retriever = LuceneRetriever(index_dir=str(tmp_path_factory.mktemp("lucene") / "index"))
    retriever.index(hotel_snippets)
    return retriever


def test_lucene_top5_agrees_with_bm25s(lucene, hotel_snippets):
    assert lucene.built
    bm25s = BM25sRetriever()
    bm25s.index(hotel_snippets)
    same = 0
    for query in QUERIES:
        ours, theirs = top_k(bm25s.scores(query), 5), top_k(lucene.scores(query), 5)
        assert ours and theirs
        assert ours[0][0] == theirs[0][0] or np.isclose(ours[0][1], ours[1][1], rtol=0.02)  # the best, up to ties
        assert np.isclose(ours[0][1], theirs[0][1], rtol=0.05)  # the same BM25 up to Lucene's lossy lengths
        same += {i for i, _ in ours} == {i for i, _ in theirs}
    assert same >= 0.8 * len(QUERIES)


def test_the_index_is_built_once_and_reopened(lucene, hotel_snippets):
    again = LuceneRetriever(index_dir=str(lucene.index_dir))
    again.index(hotel_snippets)
    assert not again.built
    assert np.array_equal(again.scores("free parking"), lucene.scores("free parking"))
    other = LuceneRetriever(index_dir=str(lucene.index_dir))
    from augmenter.errors import ConfigError

    with pytest.raises(ConfigError, match="documents"):
        other.index(hotel_snippets[:10])
