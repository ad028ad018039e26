"""Entity linker and evidence chainer for table + text knowledge (CORE, Ma et al. 2022; the paper's section 4.2).

The corpus is every table row (a "table segment": page title, headers and cells) and every linked passage. The
`HyperlinkLinker` follows the cells' hyperlinks: a row links to the passages its cells point to, and a passage
back to the rows that point to it. The `EvidenceChainer` scores candidate chains "table segment -> linked
passage" against the question, lexically (BM25) and densely (the retriever's scores), prunes them, and returns
the top-k as evidence text the prompt engine shows: "<row> => <passage title>: <passage>".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from augmenter.errors import ConfigError
from augmenter.knowledge.retrievers import BM25sRetriever, Retriever, top_k
from augmenter.knowledge.tables import Table, passage_title
from augmenter.memory import Snippet
from augmenter.settings import Positive, Share


@dataclass
class Unit:
    kind: str  # "row" | "passage"
    table_id: str | None
    row: int | None
    link: str | None
    text: str


class TableTextCorpus:
    """Table rows and linked passages as one list of retrievable units."""

    def __init__(self, tables: dict[str, Table], passages: dict[str, str], max_passage_chars: int = 600):
        self.tables, self.passages = tables, passages
        self.units: list[Unit] = []
        self.row_index: dict[tuple[str, int], int] = {}
        self.passage_index: dict[str, int] = {}
        for table_id, table in tables.items():
            for i in range(len(table.rows)):
                self.row_index[(table_id, i)] = len(self.units)
                self.units.append(Unit("row", table_id, i, None, table.row_text(i)))
        for link, text in passages.items():
            self.passage_index[link] = len(self.units)
            clipped = text if len(text) <= max_passage_chars else text[:max_passage_chars] + "..."
            self.units.append(Unit("passage", None, None, link, f"{passage_title(link)}: {clipped}"))

    @property
    def texts(self) -> list[str]:
        return [u.text for u in self.units]


class HyperlinkLinker:
    """Rows -> the passages their cells link to; passages -> the rows linking to them."""

    def __init__(self, corpus: TableTextCorpus):
        self.corpus = corpus
        self.linked_from: dict[str, list[int]] = {}
        for (table_id, i), unit in corpus.row_index.items():
            for link in corpus.tables[table_id].row_links(i):
                if link in corpus.passage_index:
                    self.linked_from.setdefault(link, []).append(unit)

    def passages_of(self, row_unit: int) -> list[int]:
        u = self.corpus.units[row_unit]
        return [
            self.corpus.passage_index[link]
            for link in self.corpus.tables[u.table_id].row_links(u.row)
            if link in self.corpus.passage_index
        ]

    def rows_of(self, passage_unit: int) -> list[int]:
        return self.linked_from.get(self.corpus.units[passage_unit].link, [])


@dataclass
class Chain:
    row: int  # unit index of the table segment
    passage: int | None  # unit index of the linked passage (None: the row alone)
    score: float
    text: str


def _normalised(scores: np.ndarray) -> np.ndarray:
    top = float(scores.max()) if len(scores) else 0.0
    return scores / top if top > 0 else np.zeros_like(scores, dtype=np.float64)


class EvidenceChainer:
    """First hop: the rows the dense retriever ranks highest, plus the rows linking to its best passages. Second
    hop: each row's linked passages. A chain scores dense(row) + dense(passage) + `lexical_weight` * (the same
    with BM25, each normalised by the question's best score); the best chain per row is kept, top `k` returned."""

    def __init__(
        self,
        corpus: TableTextCorpus,
        dense: Retriever,
        lexical: Retriever,
        k: int = 5,
        first_hop: int = 20,
        lexical_weight: float = 0.5,
        max_passage_chars: int = 400,
    ):
        self.corpus, self.dense, self.lexical = corpus, dense, lexical
        self.linker = HyperlinkLinker(corpus)
        self.k, self.first_hop, self.lexical_weight = k, first_hop, lexical_weight
        self.max_passage_chars = max_passage_chars
        self.row_mask = np.array([u.kind == "row" for u in corpus.units])

    def raw(self, question: str, k: int | None = None) -> list[Unit]:
        """Dense retrieval alone (the "DPR only" row of Table 5): the top-k units, rows or passages."""
        return [self.corpus.units[i] for i, _ in top_k(self.dense.scores(question), k or self.k)]

    def chains(self, question: str) -> list[Chain]:
        dense = _normalised(np.asarray(self.dense.scores(question), dtype=np.float64))
        lexical = _normalised(np.asarray(self.lexical.scores(question), dtype=np.float64))
        score = dense + self.lexical_weight * lexical
        rows = [i for i, _ in top_k(np.where(self.row_mask, score, 0.0), self.first_hop)]
        for p, _ in top_k(np.where(self.row_mask, 0.0, score), self.first_hop):
            rows += [r for r in self.linker.rows_of(p) if r not in rows]  # linker: from a passage to its rows
        best: list[Chain] = []
        for r in rows:
            options = [(score[r], None)] + [(score[r] + score[p], p) for p in self.linker.passages_of(r)]
            value, p = max(options, key=lambda x: (x[0], -1 if x[1] is None else -x[1]))
            best.append(Chain(r, p, float(value), self._render(r, p)))
        best.sort(key=lambda c: (-c.score, c.row))
        return best[: self.k]

    def _render(self, row: int, passage: int | None) -> str:
        text = self.corpus.units[row].text
        if passage is not None:
            unit = self.corpus.units[passage]
            limit = self.max_passage_chars
            body = unit.text if len(unit.text) <= limit else unit.text[:limit] + "..."
            text += f" => {body}"
        return text


class TableTextConsolidator:
    """The Knowledge Consolidator for table + text knowledge (Wiki QA), behind the same `link` / `retrieve` as the
    snippet consolidator. `mode="chains"`: linker + chainer (CORE); `mode="dense"`: the retriever's raw top-k
    ("DPR only")."""

    MODES = ("chains", "dense")

    def __init__(
        self,
        knowledge: TableTextCorpus,
        retriever: Retriever,
        mode: str = "chains",
        k: Positive = 5,
        first_hop: Positive = 20,
        lexical_weight: Share = 0.5,
        max_passage_chars: Positive = 400,
    ):
        if mode not in self.MODES:
            raise ConfigError(f"consolidator.mode must be one of {', '.join(self.MODES)}, got {mode!r}")
        if not isinstance(knowledge, TableTextCorpus):
            raise ConfigError("the table-text consolidator needs table + text knowledge (knowledge=ottqa)")
        self.kb, self.mode, self.k = knowledge, mode, k
        retriever.index(knowledge.texts)
        lexical = BM25sRetriever()
        lexical.index(knowledge.texts)
        self.chainer = EvidenceChainer(
            knowledge,
            retriever,
            lexical,
            k=k,
            first_hop=first_hop,
            lexical_weight=lexical_weight,
            max_passage_chars=max_passage_chars,
        )

    def link(self, q: str, history=()) -> list:
        return []  # the links here are the tables' hyperlinks, followed inside `retrieve`

    def retrieve(self, q: str, history=(), entities=None):
        if self.mode == "dense":
            scored = top_k(self.chainer.dense.scores(q), self.k)
            units = [(self.kb.units[i], s) for i, s in scored]
            return q, [
                Snippet(id=f"unit:{i}", text=u.text, doc_type=u.kind, score=round(s, 4))
                for (u, s), (i, _) in zip(units, scored)
            ]
        return q, [
            Snippet(id=f"chain:{c.row}:{c.passage}", text=c.text, doc_type="chain", score=round(c.score, 4))
            for c in self.chainer.chains(q)
        ]
