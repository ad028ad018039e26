"""augmenter: LLM-Augmenter (Peng et al. 2023) — a black-box chat LLM grounded in external knowledge
and checked with automated feedback before the user sees it."""

__version__ = "0.1.0"
