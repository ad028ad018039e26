"""Claim verification (WikiChat, Citation-Enhanced Generation): split a response into atomic claims, find each
claim's evidence, judge it SUPPORTED / REFUTED / NOT ENOUGH INFO with a swappable verifier."""

from augmenter.verification.evidence import EvidenceFinder
from augmenter.verification.splitter import ClaimSplitter, split_sentences
from augmenter.verification.verifiers import (
    CombinedVerifier,
    FastVerifier,
    Judgement,
    LLMVerifier,
    Verifier,
)

__all__ = [
    "ClaimSplitter",
    "CombinedVerifier",
    "EvidenceFinder",
    "FastVerifier",
    "Judgement",
    "LLMVerifier",
    "Verifier",
    "split_sentences",
]
