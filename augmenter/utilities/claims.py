"""The claims utility (WikiChat, Citation-Enhanced Generation): split a candidate into atomic claims, find each
claim's evidence, judge it with a verifier, score the candidate by its claims and write feedback that names each
unsupported or contradicted claim and quotes the evidence, so the revision can fix it."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from augmenter.extras import ENCODER, require
from augmenter.memory import ClaimCheck, EvidenceRef, Verdict, WorkingMemory
from augmenter.reviews import ReviewBalance
from augmenter.settings import Cosine, Count, Positive, Share
from augmenter.utilities.scorers import UtilityResult
from augmenter.verification import ClaimSplitter, EvidenceFinder
from augmenter.verification.encoder import embed
from augmenter.verification.verifiers import missing_words

# Why a claim the verifier supports misstates the balance of the knowledge it rests on (None: it does not), given the
# claim, the ids of its evidence (best first) and the Working Memory.
BalanceCheck = Callable[[str, Iterable[str], WorkingMemory], str | None]

FEEDBACK_HEAD = "Some claims in the response are not backed by the knowledge:"
FEEDBACK_TAIL = (
    "Rewrite the response using only facts from the knowledge. If the knowledge does not answer the question, say so."
)


def _quote(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


class ClaimsUtility:
    """Score = the mean p(supported) of the candidate's claims (1 when it makes none). A candidate passes when no
    claim is refuted and at least `threshold` of its claims are SUPPORTED; `gate=False` gives feedback to every
    candidate with a claim that is not SUPPORTED, whatever the threshold. `splitter`: "sentences" (no LLM call)
    or "llm" (the `claims` prompt, sentence split as the fallback); `k`, `similarity`, `max_evidence`: the
    per-claim evidence (see EvidenceFinder). `balance`: a claim the verifier supports is not supported when
    `balance_check` says it misstates how the knowledge it rests on is split (by default the reviews' check,
    `augmenter.reviews.ReviewBalance`: a claim from reviews that the evidence counts as mixed, the opinion gatherer's
    line, that gives one side only, or that takes the side no review on it takes). `max_missing`: a claim is
    SUPPORTED only if at most this many of the words it adds (not the question's, not the place's name) are missing
    from its evidence (None: no such gate): "a heated rooftop pool with a bar" against "an indoor heated pool" adds
    "rooftop" and "bar", whatever the verifier's similarity says."""

    name = "claims"
    checks_claims = True  # the executor sends only candidates this utility verified (see Executor._send)

    def __init__(
        self,
        verifier,
        llm=None,
        prompts=None,
        consolidator=None,
        splitter: str = "sentences",
        k: Count = 3,
        similarity: Cosine = 0.25,
        max_evidence: Positive = 6,
        threshold: Share = 1.0,
        gate: bool = True,
        max_claims: Positive = 8,
        balance: bool = True,
        max_missing: Count | None = None,
        balance_check: BalanceCheck | None = None,
    ):
        if not 0.0 <= threshold <= 1.0:
            raise ValueError(f"threshold is a share of supported claims in [0, 1], got {threshold}")
        if max_missing is not None and max_missing < 0:
            raise ValueError(f"max_missing is a number of words >= 0 (or null: no containment gate), got {max_missing}")
        self.max_missing = max_missing
        require("chat", "the claims check (utility=claims)", ENCODER, instead="utility=kf1 needs no extra")
        self.verifier = verifier
        self.splitter = ClaimSplitter(splitter, llm, prompts, max_claims=max_claims)
        self.finder = EvidenceFinder(consolidator, k=k, similarity=similarity, max_units=max_evidence)
        self.threshold, self.gate, self.max_claims, self.balance = threshold, gate, max_claims, balance
        self.balance_check: BalanceCheck = balance_check if balance_check is not None else ReviewBalance()

    def on_topic(self, mem: WorkingMemory, sentence: str) -> bool:
        """Every sentence: what was asked is the answers check's to judge (`utility=grounded` combines them)."""
        return True

    def check(self, mem: WorkingMemory, candidate: str, claims: list[str] | None = None) -> list[ClaimCheck]:
        """The candidate's claims, each with its verdict and evidence (`claims`: already split ones)."""
        if claims is None:
            claims, _ = self.splitter.split(candidate, mem.q, mem.h_q)
        claims, unchecked = claims[: self.max_claims], claims[self.max_claims :]
        pools = [self.finder.pool(claim, mem) for claim in claims]
        embed([*claims, *(u.text for pool in pools for u in pool)])  # one encoder batch for the whole candidate
        checks = []
        for claim, pool in zip(claims, pools):
            found = self.finder.find(claim, mem, pool)
            judgement = self.verifier.judge(claim, [u.text for u, _ in found], context=mem.q)
            refs = [
                EvidenceRef(
                    id=found[i][0].id,
                    text=found[i][0].text,
                    similarity=round(found[i][1], 4),
                    location=found[i][0].location,
                    passage=found[i][0].passage,
                )
                for i in judgement.evidence
                if i < len(found)
            ]
            verdict, p, reason = judgement.verdict, judgement.p_supported, judgement.reason
            if verdict == Verdict.SUPPORTED and self.max_missing is not None:
                added = missing_words(claim, [u.text for u, _ in found], mem.q)
                if len(added) > self.max_missing:
                    verdict, p = Verdict.NOT_ENOUGH_INFO, min(p, 0.5)
                    reason = f"the knowledge does not say: {', '.join(added)}"
            if verdict == Verdict.SUPPORTED and self.balance:
                skew = self.balance_check(claim, [r.id for r in refs], mem)
                if skew:
                    verdict, p, reason = Verdict.NOT_ENOUGH_INFO, min(p, 0.5), skew
            checks.append(
                ClaimCheck(claim=claim, verdict=verdict, p_supported=round(p, 4), evidence=refs, reason=reason)
            )
        checks += [
            ClaimCheck(
                claim=claim,
                verdict=Verdict.NOT_ENOUGH_INFO,
                p_supported=0.0,
                reason=f"not checked: more than {self.max_claims} claims",
            )
            for claim in unchecked
        ]
        return checks

    @staticmethod
    def score_of(checks: list[ClaimCheck]) -> float:
        return sum(c.p_supported for c in checks) / len(checks) if checks else 1.0

    def score(self, mem: WorkingMemory, candidate: str) -> float:
        return self.score_of(self.check(mem, candidate))

    def passes(self, checks: list[ClaimCheck]) -> bool:
        if any(c.verdict == Verdict.REFUTED for c in checks):
            return False
        return not checks or sum(c.supported for c in checks) / len(checks) >= self.threshold

    @staticmethod
    def feedback(checks: list[ClaimCheck]) -> str:
        lines = [FEEDBACK_HEAD]
        for c in checks:
            if c.verdict == Verdict.REFUTED:
                quote = f' The knowledge says: "{_quote(c.evidence[0].text)}"' if c.evidence else ""
                why = f" ({c.reason})" if c.reason else ""
                lines.append(f'- "{c.claim}" is contradicted by the knowledge{why}.{quote}')
            elif c.verdict == Verdict.NOT_ENOUGH_INFO:
                why = f" ({c.reason})" if c.reason else ""
                lines.append(f'- "{c.claim}" is not in the knowledge{why}.')
        lines.append(FEEDBACK_TAIL)
        return "\n".join(lines)

    def __call__(self, mem: WorkingMemory, candidate: str) -> UtilityResult:
        checks = self.check(mem, candidate)
        passed = self.passes(checks)
        unsupported = any(not c.supported for c in checks)
        failed = not passed or (not self.gate and unsupported)
        return UtilityResult(self.score_of(checks), self.feedback(checks) if failed else None, checks)
