"""A folder of documents as a knowledge base (`knowledge=docs knowledge.path=PATH`): each chunk is a Snippet with
its location; each document is an entity named by its title (the linker finds it in questions), and a chunk's
entity name is the title and headings above it, so the prompt, the claims verifier and the citations show where
it comes from. The retriever is loaded from the index (bm25s's saved index; dense embeddings cached by content
hash) instead of being built at every start."""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated

import numpy as np
from annotated_types import Gt

from augmenter.documents.composer import DocumentComposer
from augmenter.documents.indexer import DEFAULT_MAX_FILE_MB, search_text, update_index, warn_to_stderr
from augmenter.documents.model import strip_markup
from augmenter.documents.passages import Idf
from augmenter.documents.store import Generation, IndexBusy, IndexStore, default_index_dir
from augmenter.errors import InputError
from augmenter.knowledge.base import Entity, KnowledgeBase
from augmenter.memory import Location, Snippet
from augmenter.settings import Count, Positive
from augmenter.storage import atomic_open, content_hash

log = logging.getLogger(__name__)


class DocumentKnowledge(KnowledgeBase):
    """The chunks of an index generation as snippets, with the texts retrieval indexes (title, headings, text).
    A snippet's text and headings are as shown to the model and the user (the documentation tools' markup
    stripped: `strip_markup`); retrieval indexes them as read. A title named earlier in the dialogue does not narrow
    the search (a follow-up about another policy would find nothing). `answer`: the settings of the composer that
    answers from the documents (`DocumentComposer`; `enabled: false`: none, the generic path)."""

    focus_from_history = False

    def __init__(self, generation: Generation, answer: Mapping | None = None):
        documents = generation.manifest["documents"]
        entities, snippets, texts = {}, [], []
        for chunk in generation.chunks:
            rel = chunk["file"]
            title = strip_markup(documents[rel]["title"])
            if rel not in entities:
                entities[rel] = Entity(rel, title, None, [])
            heading = [title, *(strip_markup(h) for h in chunk["heading"])]
            snippets.append(
                Snippet(
                    id=chunk["id"],
                    text=strip_markup(chunk["text"]),
                    entity_id=rel,
                    entity_name=" > ".join(heading),
                    doc_type=documents[rel].get("format") or "document",
                    doc_id=rel,
                    location=Location(
                        path=rel, page=chunk["page"], heading=heading, start=chunk["start"], end=chunk["end"]
                    ),
                )
            )
            texts.append(search_text(chunk, title))
        super().__init__(snippets, list(entities.values()), source=generation.manifest.get("root", ""))
        self.generation = generation
        self.search_texts = texts
        self.answer = dict(answer or {})

    def idf(self) -> Idf:
        """The folder's word weights (over the texts retrieval indexes), computed once."""
        if getattr(self, "_idf", None) is None:
            self._idf = Idf(self.search_texts)
        return self._idf

    def composer(self) -> DocumentComposer | None:
        """How answers are made from these documents (None when `answer.enabled` is false)."""
        settings = dict(self.answer)
        if not settings.pop("enabled", True):
            return None
        return DocumentComposer(self.idf(), **settings)

    def index_retriever(self, retriever) -> None:
        """Give `retriever` this knowledge: loaded from the index where it can be, else indexed now."""
        from augmenter.knowledge.dense import DenseRetriever, HybridRetriever
        from augmenter.knowledge.retrievers import BM25sRetriever

        if isinstance(retriever, HybridRetriever):
            self.index_retriever(retriever.sparse)
            self.index_retriever(retriever.dense)
            retriever._n = len(self.search_texts)
        elif isinstance(retriever, BM25sRetriever):
            saved = self.generation.bm25_dir
            if saved is None or not retriever.load(saved, len(self.search_texts)):
                retriever.index(self.search_texts)
        elif isinstance(retriever, DenseRetriever) and self.search_texts:
            retriever.use_embeddings(
                EmbeddingCache(self.generation.directory.parent / "embeddings").get(retriever, self.search_texts)
            )
        else:
            retriever.index(self.search_texts)


class EmbeddingCache:
    """Dense embeddings of texts by content hash, in shards (keys + vectors, .npz): a changed chunk is embedded
    again, the others are read back. Shards are merged into one when there are more than 16."""

    def __init__(self, directory: Path):
        self.directory = directory

    def _load(self, model: str) -> tuple[dict[str, int], list[np.ndarray], list[Path]]:
        keys, blocks, shards = {}, [], sorted(self.directory.glob(f"{model}-*.npz"))
        for shard in shards:
            try:
                with np.load(shard) as data:
                    base = sum(len(b) for b in blocks)
                    blocks.append(data["vectors"])
                    keys.update({k: base + i for i, k in enumerate(data["keys"].tolist())})
            except (OSError, ValueError, KeyError):
                continue  # a damaged shard: its texts are embedded again
        return keys, blocks, shards

    def get(self, retriever, texts: Sequence[str]) -> np.ndarray:
        model = "minilm"
        keys, blocks, shards = self._load(model)
        hashes = [content_hash(t, 24) for t in texts]
        missing = list(dict.fromkeys(h for h in hashes if h not in keys))
        if missing:
            by_hash = dict(zip(hashes, texts))
            vectors = retriever.encode([by_hash[h] for h in missing], progress=len(missing) > 1000)
            self.directory.mkdir(parents=True, exist_ok=True)
            base = sum(len(b) for b in blocks)
            blocks.append(vectors)
            keys.update({h: base + i for i, h in enumerate(missing)})
            new_shards = [self.directory / f"{model}-{content_hash(missing, 16)}.npz"]
            if len(shards) >= 16:  # merge: one shard of everything known
                new_shards = [self.directory / f"{model}-all-{content_hash(list(keys), 16)}.npz"]
            with atomic_open(new_shards[0], "wb") as sink:
                if len(shards) >= 16:
                    np.savez(sink, keys=np.array(list(keys)), vectors=np.concatenate(blocks))
                else:
                    np.savez(sink, keys=np.array(missing), vectors=vectors)
            if len(shards) >= 16:
                for shard in shards:
                    shard.unlink(missing_ok=True)
        matrix = np.concatenate(blocks) if blocks else np.zeros((0, 384), dtype=np.float32)
        return matrix[[keys[h] for h in hashes]]


def load_documents(
    path: str | Sequence[str],
    index_dir: str | Path | None = None,
    words: Positive | None = None,
    overlap: Count | None = None,
    include: Sequence[str] | None = None,
    exclude: Sequence[str] | None = None,
    max_file_mb: Annotated[float, Gt(0)] = DEFAULT_MAX_FILE_MB,
    update: bool = True,
    answer: Mapping | None = None,
) -> DocumentKnowledge:
    """The documents under `path` (a folder, a file, a glob, or a list of them) as a knowledge base. With `update`
    the index is brought up to date first (only changed files are read); without, the index as last built.
    `answer`: the composer's settings (see `DocumentKnowledge`)."""
    paths = [path] if isinstance(path, (str, Path)) else list(path)
    if not paths:
        raise InputError("knowledge.path names no documents")
    store = IndexStore(index_dir or default_index_dir(paths))
    if update:
        try:
            report = update_index(
                paths,
                store.directory,
                words,
                overlap,
                include,
                exclude,
                max_file_mb,
                progress=sys.stderr.isatty(),
                warn=warn_to_stderr,
                wait=False,
            )
            log.info("documents: %s", report.summary())
        except IndexBusy:
            log.warning("another augmenter is updating %s: using the index as it is", store.directory)
    generation = store.current()
    if generation is None:
        raise InputError(f"no document index at {store.directory}: run augmenter index {' '.join(map(str, paths))}")
    if not generation.chunks:
        raise InputError(
            f"the documents under {' '.join(map(str, paths))} hold no text augmenter can read "
            "(augmenter index --status lists what was skipped and why)"
        )
    return DocumentKnowledge(generation, answer)
