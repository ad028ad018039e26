"""Knowledge Consolidator: knowledge bases, retrievers, the entity linker."""

from augmenter.knowledge.base import Entity, KnowledgeBase, load_dstc11, load_jsonl, load_knowledge
from augmenter.knowledge.consolidator import KnowledgeConsolidator
from augmenter.knowledge.dense import DenseRetriever, HybridRetriever
from augmenter.knowledge.linker import EntityLinker
from augmenter.knowledge.retrievers import BM25sRetriever, RankBM25Retriever, tokenize, top_k

__all__ = [
    "BM25sRetriever",
    "DenseRetriever",
    "Entity",
    "HybridRetriever",
    "EntityLinker",
    "KnowledgeBase",
    "KnowledgeConsolidator",
    "RankBM25Retriever",
    "load_dstc11",
    "load_jsonl",
    "load_knowledge",
    "tokenize",
    "top_k",
]
