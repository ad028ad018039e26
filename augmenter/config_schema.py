"""The schema of a composed config: the type and range of every numeric, path and switch setting.

`validate(cfg)` raises ConfigError with one line naming the key, the bad value and what is allowed.
A group's node is checked against the model of its `_target_` (a target not listed here is free-form:
its own signature is checked when it is instantiated); unknown keys are errors everywhere else.
"""

from __future__ import annotations

import json
import math
import operator
from collections.abc import Callable
from typing import Annotated, Any, ClassVar, Union, get_args
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Discriminator, Field, PlainValidator, Tag, ValidationError
from pydantic_core import PydanticCustomError

from augmenter.errors import ConfigError
from augmenter.text import did_you_mean


def setting(allowed: str, ok: Callable[[Any], bool], null: bool = False) -> Any:
    """A setting whose values pass `ok` (and null, if `null`); `allowed` says which, for the error line."""
    allowed = f"null or {allowed}" if null else allowed

    def check(value: Any) -> Any:
        if not ((null and value is None) or ok(value)):
            raise PydanticCustomError("not_allowed", "{allowed}", {"allowed": allowed})
        return value

    return Annotated[Any, PlainValidator(check)]


_OPS = {"ge": (">=", operator.ge), "gt": (">", operator.gt), "le": ("<=", operator.le), "lt": ("<", operator.lt)}


def _bounds(**bounds: float) -> tuple[str, Callable[[float], bool]]:
    """The words for `bounds` (ge, gt, le, lt: e.g. " in [0, 1)", " > 0") and a test of them."""
    lower = next(((k, b) for k, b in bounds.items() if k in ("ge", "gt")), None)
    upper = next(((k, b) for k, b in bounds.items() if k in ("le", "lt")), None)
    if lower and upper:
        text = f" in {'[' if lower[0] == 'ge' else '('}{lower[1]}, {upper[1]}{']' if upper[0] == 'le' else ')'}"
    else:
        text = "".join(f" {_OPS[k][0]} {v}" for k, v in bounds.items())
    return text, lambda v: all(_OPS[k][1](v, bound) for k, bound in bounds.items())


def integer(null: bool = False, **bounds) -> Any:
    text, within = _bounds(**bounds)
    return setting(f"an integer{text}", lambda v: type(v) is int and within(v), null)


def number(null: bool = False, **bounds) -> Any:
    text, within = _bounds(**bounds)
    ok = lambda v: type(v) in (int, float) and math.isfinite(v) and within(v)  # noqa: E731
    return setting(f"a number{text}", ok, null)


def string(null: bool = False) -> Any:
    return setting("a string", lambda v: isinstance(v, str), null)


def filepath(null: bool = False) -> Any:
    return setting("a file or directory path", lambda v: isinstance(v, str) and v.strip() != "", null)


def _is_url(v: Any) -> bool:
    if not isinstance(v, str) or any(c.isspace() for c in v):
        return False
    parts = urlparse(v)
    return parts.scheme in ("http", "https") and bool(parts.netloc)


def _folder_name(v: Any) -> bool:
    return (
        isinstance(v, str)
        and v.strip() == v != ""
        and v not in (".", "..")
        and not any(c in v for c in "/\\\0")
        and v.isprintable()
    )


FolderName = setting("a plain folder name (no /, \\, . or .., not empty)", _folder_name)
Flag = setting("true or false", lambda v: isinstance(v, bool))
Url = setting("an http(s):// URL", _is_url, null=True)
Texts = setting("a list of strings", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v))
Ints = setting("a list of integers", lambda v: isinstance(v, list) and all(type(x) is int for x in v), null=True)
AnyList = setting("a list", lambda v: isinstance(v, list), null=True)
AnyMapping = setting("a mapping", lambda v: isinstance(v, dict), null=True)
RuleList = setting(
    "a list of {if, then} rules", lambda v: isinstance(v, list) and all(isinstance(r, dict) for r in v), null=True
)
CountOrShare = setting(
    "an integer >= 0 (a count) or a number in (0, 1) (a share)",
    lambda v: (type(v) is int and v >= 0) or (type(v) is float and 0 < v < 1),
)
Count = integer(ge=0)
Positive = integer(ge=1)
Share = number(ge=0, le=1)
Seconds = number(gt=0)
Cosine = number(ge=-1, le=1)


class Node(BaseModel):
    """A config node: only the keys declared here; every one optional (an option sets the keys it uses)."""

    model_config = ConfigDict(extra="forbid")
    target: str | None = Field(None, alias="_target_")
    TARGET: ClassVar[str | None] = None


class Custom(Node):
    """A target this schema does not know (your own class): checked by its signature when instantiated."""

    model_config = ConfigDict(extra="allow")


_TAGS: set[str] = {"custom"}  # the union tags pydantic puts into error locations
_MODELS: dict[str, type[Node]] = {}  # the model of each tag


def by_target(*models: type[Node], untargeted: type[Node] | None = None) -> Any:
    """One of `models`, chosen by the node's `_target_` (`untargeted` for a node without one)."""
    tags = {m.TARGET: m for m in (*models, *([untargeted] if untargeted else []))}
    _TAGS.update(tags)
    _MODELS.update(tags)

    def tag(node: Any) -> str:
        target = node.get("_target_") if isinstance(node, dict) else None
        if target is None and untargeted is not None:
            return untargeted.TARGET
        return target if target in tags else "custom"

    options = tuple(Annotated[m, Tag(t)] for t, m in tags.items()) + (Annotated[Custom, Tag("custom")],)
    return Annotated[Union[options], Discriminator(tag)]  # noqa: UP007 (a tuple of types: only Union takes it)


# llm
class LLMBase(Node):
    fallbacks: list[LLM] = []  # tried in order when this backend fails


class FakeLLM(LLMBase):
    TARGET = "augmenter.llm.FakeLLM"
    responses: AnyList = None
    rules: AnyMapping = None
    default: Any = None
    model: string() = None
    stream_delay: number(ge=0) = None


class LocalLLM(LLMBase):
    TARGET = "augmenter.llm.LocalLLM"
    model: string() = None
    n_ctx: Positive = None
    n_threads: integer(ge=1, null=True) = None
    verbose: Flag = None
    wait_policy: string(null=True) = None
    kv_reuse: string() = None
    n_batch: integer(ge=1, null=True) = None


class OpenAILLM(LLMBase):
    TARGET = "augmenter.llm.OpenAICompatLLM"
    model: string(null=True) = None
    base_url: Url = None
    api_key_env: string() = None
    timeout: Seconds = None
    deadline: Seconds = None
    max_retries: Count = None
    backoff: number(ge=0) = None


LLM = by_target(FakeLLM, LocalLLM, OpenAILLM)
LLMBase.model_rebuild()


# retriever
class BM25(Node):
    TARGET = "augmenter.knowledge.RankBM25Retriever"
    k1: number(ge=0) = None
    b: Share = None


class BM25s(BM25):
    TARGET = "augmenter.knowledge.BM25sRetriever"
    backend: string() = None


class Dense(Node):
    TARGET = "augmenter.knowledge.DenseRetriever"
    index: string() = None
    store: filepath(null=True) = None
    batch_size: Positive = None
    hnsw_m: integer(ge=2) = None
    ef_search: Positive = None
    candidates: Positive = None
    progress: Flag = None


class Lucene(BM25):
    TARGET = "augmenter.knowledge.lucene.LuceneRetriever"
    index_dir: filepath(null=True) = None
    threads: Positive = None
    hits: Positive = None


class Hybrid(Node):
    TARGET = "augmenter.knowledge.HybridRetriever"
    k_rrf: Count = None
    depth: integer(ge=1, null=True) = None
    sparse: Retriever = None
    dense: Retriever = None


Retriever = by_target(BM25s, BM25, Dense, Hybrid, Lucene)
Hybrid.model_rebuild()


# knowledge
class Demo(Node):
    TARGET = "augmenter.knowledge.demo.load_demo_knowledge"
    directory: filepath(null=True) = None


class Demo2(Demo):
    TARGET = "augmenter.knowledge.demo.load_demo2_knowledge"


class DSTC11(Node):
    TARGET = "augmenter.knowledge.load_dstc11"
    path: filepath() = None
    entity_mapping: filepath(null=True) = None


class JSONL(Node):
    TARGET = "augmenter.knowledge.load_jsonl"
    path: filepath() = None


class DocumentAnswers(Node):
    enabled: Flag = None
    prompt: string() = None
    chunks: Positive = None
    passages: Positive = None
    max_passage_words: Positive = None
    split_questions: Flag = None
    focus_titles: Flag = None
    min_quote_score: number(null=True) = None
    max_refusal: number(ge=0, le=1) = None
    yes_no_quoted: Flag = None
    quote_words: Positive = None


class Documents(Node):
    TARGET = "augmenter.documents.load_documents"
    path: setting(
        "a file, folder or glob, or a list of them",
        lambda v: (
            (isinstance(v, str) and v.strip() != "")
            or (isinstance(v, list) and bool(v) and all(isinstance(x, str) and x.strip() for x in v))
        ),
    ) = None
    index_dir: filepath(null=True) = None
    words: integer(ge=1, null=True) = None
    overlap: integer(ge=0, null=True) = None
    include: setting(
        "a list of globs", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), null=True
    ) = None
    exclude: setting(
        "a list of globs", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), null=True
    ) = None
    max_file_mb: number(gt=0) = None
    update: Flag = None
    answer: DocumentAnswers | None = None


class DSTC7Facts(Node):
    TARGET = "augmenter.tasks.dstc7.load_facts"
    root: filepath() = None


class OTTQA(Node):
    TARGET = "augmenter.tasks.ottqa.load_corpus"
    root: filepath() = None
    max_passage_chars: Positive = None


Knowledge = by_target(Demo, Demo2, DSTC11, JSONL, Documents, DSTC7Facts, OTTQA)


# policy
class Rules(Node):
    TARGET = "augmenter.policies.RulePolicy"
    rules: RuleList = None
    file: filepath(null=True) = None


class Preset(Node):
    TARGET = "augmenter.policies.LLMAugmenterPolicy"


class NoKnowledge(Preset):
    TARGET = "augmenter.policies.NoKnowledgePolicy"


class AlwaysUse(Preset):
    TARGET = "augmenter.policies.AlwaysUsePolicy"


class Grounded(Preset):
    TARGET = "augmenter.policies.GroundedPolicy"


class SelfAsk(Node):
    TARGET = "augmenter.policies.SelfAskPolicy"
    feedback: Flag = None


class Trained(Node):
    TARGET = "augmenter.policies.t5.T5Policy.load"
    checkpoint: filepath() = None
    greedy: Flag = None


Policy = by_target(Rules, Preset, NoKnowledge, AlwaysUse, Grounded, SelfAsk, Trained)


# prompt
class Prompt(Node):
    TARGET = "augmenter.prompts.PromptEngine"
    response: string() = None
    self_ask: string() = None
    self_critique: string() = None
    search_query: string() = None
    claims: string() = None
    verify_claim: string() = None
    today: string(null=True) = None
    max_history_turns: Count = None
    max_chars_per_turn: Positive = None


# utility
class KF1(Node):
    TARGET = "augmenter.utilities.KF1Utility"
    threshold: Share = None
    feedback: string() = None
    gate: Flag = None


class Recall(KF1):
    TARGET = "augmenter.utilities.RecallUtility"


class SelfCritique(Node):
    TARGET = "augmenter.utilities.SelfCritiqueUtility"
    threshold: Share = None
    max_tokens: Positive = None
    gate: Flag = None


class Claims(Node):
    TARGET = "augmenter.utilities.ClaimsUtility"
    splitter: string() = None
    k: Count = None
    similarity: Cosine = None
    max_evidence: Positive = None
    threshold: Share = None
    gate: Flag = None
    max_claims: Positive = None
    balance: Flag = None
    max_missing: integer(ge=0, null=True) = None


class Combined(Node):
    TARGET = "augmenter.utilities.CombinedUtility"
    base: by_target(KF1, Recall, SelfCritique, Claims) = None
    checks: Texts = None
    ngram: Positive = None
    within_threshold: Share = None
    earlier_threshold: Share = None
    min_sentence_words: Positive = None


# verifier
class FastVerifier(Node):
    TARGET = "augmenter.verification.FastVerifier"
    model: string() = None
    threshold: number(ge=0, le=1, null=True) = None
    refute_similarity: Cosine = None


class LLMVerifier(Node):
    TARGET = "augmenter.verification.LLMVerifier"
    threshold: Share = None
    max_evidence: Positive = None
    top_logprobs: Positive = None


class CombinedVerifier(FastVerifier):
    TARGET = "augmenter.verification.CombinedVerifier"
    max_evidence: Positive = None
    top_logprobs: Positive = None


# consolidator (a node without _target_, as configs before the consolidator group had, is the snippet one)
class Consolidator(Node):
    TARGET = "augmenter.knowledge.KnowledgeConsolidator"
    k: Positive = None
    history_turns: Count = None
    focus_entities: Flag = None
    misspelt_names: Flag = None
    review_window: Count = None
    faq_context: Count = None
    opinions: Flag = None
    opinions_min_p: number(ge=0, le=1) = None
    opinions_max_sentences: Positive = None
    opinions_stance: setting("model or llm", lambda v: v in ("model", "llm")) = None
    opinions_min_related: number(ge=0, le=1) = None
    opinions_min_about: number(ge=0, le=1, null=True) = None
    opinions_min_about_side: number(ge=0, le=1, null=True) = None
    opinions_about_by: setting("question, topic or either", lambda v: v in ("question", "topic", "either")) = None


class TableText(Node):
    TARGET = "augmenter.knowledge.chainer.TableTextConsolidator"
    k: Positive = None
    mode: string() = None
    first_hop: Positive = None
    lexical_weight: Share = None
    max_passage_chars: Positive = None


# the other sections of chat, eval and train
class Agent(Node):
    max_llm_calls: Positive = None
    max_steps: Positive = None
    max_query_chars: Positive = None


class Sampling(Node):
    max_tokens: Positive = None
    temperature: number(ge=0) = None
    retry_temperature: number(ge=0) = None
    top_p: number(gt=0, le=1) = None
    seed: integer(null=True) = None
    stop: Texts = None
    logprobs: Count = None
    repeat_penalty: number(gt=0) = None


class Executor(Node):
    select: string() = None
    feedback_in_prompt: Flag = None
    query_generation: Flag = None
    max_queries: Positive = None
    fewshot_guard: Flag = None
    unsupported: string() = None
    quote_reviews: Flag = None
    review_verdicts: Flag = None


class LLMCache(Node):
    enabled: Flag = None
    dir: filepath(null=True) = None


class LLMGuard(Node):
    max_consecutive_failures: Positive = None
    cooldown: number(ge=0) = None


class EvalSample(Node):
    limit: integer(ge=1) = None
    seed: Count = None
    exclude: EvalSample | list[EvalSample] | None = None  # the sample was itself drawn apart from these


class Eval(Node):
    dataset: string(null=True) = None
    split: string(null=True) = None
    limit: integer(ge=0, null=True) = None
    seed: Count = None
    exclude: EvalSample | list[EvalSample] | None = None
    knowledge: string() = None
    out_dir: filepath() = None
    restart: Flag = None
    progress: Flag = None
    max_failed: CountOrShare = None
    concurrency: Positive = None


class ChatSeeds(Node):
    path: filepath() = None
    utterances: Positive = None


class Env(Node):
    split: string() = None
    heldout_share: number(gt=0, lt=1) = None
    train_limit: integer(ge=1, null=True) = None
    heldout_limit: integer(ge=1, null=True) = None
    seeking_share: number(ge=0, le=1, null=True) = None
    llm_call_cost: number(ge=0) = None
    consolidation_cost: number(ge=0) = None
    max_text: Positive = None
    episode: string() = None
    max_turns: integer(ge=1, null=True) = None
    users: string() = None
    chat_seeds: ChatSeeds = None


class T5Model(Node):
    vocab_size: Positive = None
    d_model: Positive = None
    d_ff: Positive = None
    num_layers: Positive = None
    num_heads: Positive = None
    max_tokens: Positive = None


class Train(Node):
    name: FolderName = None
    seed: Count = None
    seeds: Ints = None
    out_dir: filepath() = None
    teacher: string() = None
    baselines: Texts = None
    bc_episodes: Count = None
    bc_epochs: Count = None
    bc_lr: number(gt=0) = None
    bc_label_smoothing: number(ge=0, lt=1) = None
    episodes: Count = None
    lr: number(gt=0) = None
    entropy_coef: number(ge=0) = None
    baseline: string() = None
    baseline_momentum: number(ge=0, lt=1) = None
    grad_clip: number(gt=0) = None
    gamma: Share = None
    batch_episodes: Positive = None
    num_envs: Positive = None
    eval_every: Positive = None
    checkpoint_every: Positive = None
    restart: Flag = None
    threads: Positive = None
    progress: Flag = None


class Precompute(Node):
    parts: Texts = None
    max_states: Positive = None


class Serve(Node):
    host: string() = None
    port: integer(ge=0, le=65535) = None
    api_key_env: string(null=True) = None
    cors_origins: Texts = None
    max_message_chars: Positive = None
    max_history_messages: Positive = None
    workers: Positive = None
    max_queue: Count = None


class Converse(Node):
    conversations: Positive = None
    turns: Positive = None
    seeds: string() = None
    chat_seeds: filepath() = None
    dstc11_split: string() = None
    opening: Positive = None
    min_goals: Count = None
    seed: Count = None
    out_dir: filepath() = None
    restart: Flag = None
    max_failed: CountOrShare = None
    progress: Flag = None


class UserSimulator(Node):
    prompt: string() = None
    temperature: number(ge=0) = None
    max_tokens: Positive = None
    retries: Count = None
    goals: Flag = None


IntList = setting("a list of integers", lambda v: isinstance(v, list) and all(type(x) is int for x in v))
Seeds = setting(
    "a non-empty list of integers", lambda v: isinstance(v, list) and bool(v) and all(type(x) is int for x in v)
)


Orderings = setting(
    "a list of 'BETTER>WORSE' system names",
    lambda v: (
        isinstance(v, list)
        and all(isinstance(x, str) and x.count(">") == 1 and all(p.strip() for p in x.split(">")) for x in v)
    ),
)


class Judge(Node):
    judges: Texts = None
    seeds: Seeds = None
    temperature: number(ge=0) = None
    max_tokens: Positive = None
    max_chars: Positive = None
    history: Count = None
    pass_at: IntList = None
    prompts: AnyMapping = None
    limit: integer(ge=1, null=True) = None
    human: Flag = None
    known: Orderings = None
    out: filepath(null=True) = None
    restart: Flag = None
    progress: Flag = None


class Elo(Node):
    initial: number() = None
    scale: number(gt=0) = None
    k: number(gt=0) = None
    rounds: Positive = None
    seed: Count = None


class Config(Node):
    """A composed `chat`, `eval`, `train` or `serve` config."""

    llm: LLM = None
    llm_guard: LLMGuard = None
    retriever: Retriever = None
    knowledge: Knowledge = None
    policy: Policy = None
    utility: by_target(KF1, Recall, SelfCritique, Claims, Combined) = None
    verifier: by_target(FastVerifier, LLMVerifier, CombinedVerifier) = None
    prompt: by_target(Prompt) = None
    consolidator: by_target(Consolidator, TableText, untargeted=Consolidator) = None
    data_root: filepath() = None
    trace: Flag = None
    script: filepath(null=True) = None
    output: filepath(null=True) = None
    agent: Agent = None
    sampling: Sampling = None
    executor: Executor = None
    llm_cache: LLMCache = None
    name: FolderName = None
    eval: Eval = None
    env: Env = None
    model: T5Model = None
    train: Train = None
    precompute: Precompute = None
    converse: Converse = None
    user_simulator: UserSimulator = None
    judge: Judge = None
    elo: Elo = None
    serve: Serve = None


def _show(value: Any) -> str:
    try:
        shown = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        shown = repr(value)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _model_in(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next(filter(None, map(_model_in, get_args(annotation))), None)


def _settings_at(loc: tuple) -> list[str]:
    """The settings the node holding an error's last key may have (none known: [])."""
    model: type[BaseModel] | None = Config
    for part in loc[:-1]:
        if part in _MODELS:
            model = _MODELS[part]
        elif part == "custom" or model is None:
            return []
        elif not isinstance(part, int):
            field = model.model_fields.get(part)
            model = _model_in(field.annotation) if field else None
    return [field.alias or name for name, field in model.model_fields.items()] if model else []


def _message(error: dict) -> str:
    keys, owner = [], None
    for part in error["loc"]:
        if isinstance(part, int):
            keys[-1] += f"[{part}]"
        elif part in _TAGS:
            owner = part if part != "custom" else owner
        else:
            keys.append(part)
    key, shown = ".".join(keys), _show(error["input"])
    if error["type"] == "extra_forbidden":
        owner = owner or ".".join(keys[:-1]) or "the config"
        hint = did_you_mean(keys[-1], _settings_at(error["loc"]))
        return f"{key}={shown} is invalid: {owner} has no setting {keys[-1]!r}{hint}"
    expected = error["msg"] if error["type"] == "not_allowed" else error["msg"].removeprefix("Input should be ")
    return f"{key}={shown} is invalid: expected {expected}"


def validate(data: dict) -> None:
    """Check a resolved config (`OmegaConf.to_container(cfg, resolve=True)`); ConfigError on the first problem."""
    try:
        Config.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
        raise ConfigError(_message(errors[0]) + more) from None
