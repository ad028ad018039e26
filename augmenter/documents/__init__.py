"""Your own documents as knowledge: a folder of Markdown, text, PDF, HTML and Word files read by format
(`readers`), cut into citable chunks (`splitter`), kept in a persisted, incremental index (`store`, `indexer`,
`manifest`) and loaded as a knowledge base (`knowledge`). `augmenter index PATH...` builds or updates the index;
`knowledge=docs knowledge.path=PATH` uses it in chat, serve, eval and the API."""

from augmenter.documents.indexer import Report, update_index
from augmenter.documents.knowledge import DocumentKnowledge, load_documents
from augmenter.documents.model import Block, Document, Unreadable
from augmenter.documents.readers import read_document
from augmenter.documents.splitter import Chunk, split_document
from augmenter.documents.store import IndexStore, default_index_dir

__all__ = [
    "Block",
    "Chunk",
    "Document",
    "DocumentKnowledge",
    "IndexStore",
    "Report",
    "Unreadable",
    "default_index_dir",
    "load_documents",
    "read_document",
    "split_document",
    "update_index",
]
