"""The schema of a composed config: the type and range of every numeric, path and switch setting.

`validate(cfg)` raises ConfigError with one line naming the key, the bad value and what is allowed.
A group's node is checked against the model of its `_target_` (a target not listed here is free-form:
its own signature is checked when it is instantiated); unknown keys are errors everywhere else.
The models of the targets and of the nodes the builders read are derived from the signatures of what they build
(`derived`: type hints, enums, Literal choices and the bounds of `augmenter/settings.py`); the sections that
commands read themselves (eval, env, train, serve, ...) are still written out here.
"""

from __future__ import annotations

import inspect
import json
import math
import operator
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import is_dataclass
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, Union, get_args, get_origin, get_type_hints
from urllib.parse import urlparse

from hydra.utils import get_object
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    PlainValidator,
    Tag,
    ValidationError,
    create_model,
)
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


def choice(values: Sequence[Any], null: bool = False) -> Any:
    shown = [str(v) for v in values]
    words = " or ".join(shown) if len(shown) < 3 else f"one of {', '.join(shown[:-1])} or {shown[-1]}"
    return setting(words, lambda v: isinstance(v, str) and v in shown, null)


def _bounds_of(metadata: Sequence[Any]) -> dict[str, float]:
    bounds: dict[str, float] = {}
    for item in metadata:
        for key in ("ge", "gt", "le", "lt"):
            if isinstance(getattr(item, key, None), (int, float)):
                bounds[key] = getattr(item, key)
    return bounds


def _schema_type(hint: Any) -> Any:
    """The schema's type for a parameter's type hint, or None for a type no config sets (a built object)."""
    args = get_args(hint) if get_origin(hint) in (Union, types.UnionType) else (hint,)
    null = type(None) in args
    args = tuple(a for a in args if a is not type(None))
    bounds: dict[str, float] = {}
    if len(args) == 1 and get_origin(args[0]) is Annotated:
        base, *metadata = get_args(args[0])
        args, bounds = (base,), _bounds_of(metadata)
    enums = [a for a in args if isinstance(a, type) and issubclass(a, Enum)]
    if enums:  # `str | Select`: the enum's values
        return choice([m.value for m in enums[0]], null)
    if set(args) == {str, Path}:
        return filepath(null)
    if len(args) != 1:
        return None
    hint, origin = args[0], get_origin(args[0])
    if origin is Literal:
        return choice(get_args(hint), null)
    if hint is bool:
        return setting("true or false", lambda v: isinstance(v, bool), null)
    if hint is int:
        return integer(null, **bounds)
    if hint is float:
        return number(null, **bounds)
    if hint is str:
        return string(null)
    if origin in (list, tuple, Sequence, Iterable) and get_args(hint)[:1] == (str,):
        return setting("a list of strings", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), null)
    if (
        origin in (Sequence, list)
        and get_origin(get_args(hint)[0]) in (Mapping, dict)
        or get_args(hint)[:1] == (Mapping,)
    ):
        return RuleList
    if hint in (dict, Mapping) or origin in (dict, Mapping):
        return AnyMapping
    return None


def derived(
    target: str | Callable, *, parent: type[Node] | None = None, omit: Sequence[str] = (), **fields: Any
) -> Any:
    """The model of a node whose `_target_` is `target` (or of an untargeted node that `target` reads): an
    optional field per parameter whose type hint says what a config may set, with its bounds
    (`augmenter/settings.py`); `fields` add or replace what a hint cannot say (nested nodes, URLs, replies of any
    type). Parameters that hold built objects (the knowledge, an LLM) are left out, and so are those in `omit`
    (set by the builder from another node)."""
    name = target if isinstance(target, str) else None
    function = get_object(target) if isinstance(target, str) else target
    hints = get_type_hints(function.__init__ if isinstance(function, type) else function, include_extras=True)
    if is_dataclass(function):  # its generated __init__ has no hints of its own
        hints = get_type_hints(function, include_extras=True)
    declared: dict[str, Any] = {}
    for parameter in inspect.signature(function).parameters.values():
        kind = _schema_type(hints[parameter.name]) if parameter.name in hints else None
        if kind is not None and parameter.name not in omit:
            declared[parameter.name] = (kind, None)
    declared.update({key: (kind, None) for key, kind in fields.items()})
    model = create_model(
        (name or function.__name__).rpartition(".")[2], __base__=parent or Node, __module__=__name__, **declared
    )
    model.TARGET = name
    return model


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


# Each target's model is derived from its signature (`derived`); only what a type hint cannot say is written here.
# llm
class LLMBase(Node):
    fallbacks: list[LLM] = []  # tried in order when this backend fails


_REPLIES = setting("a list", lambda v: isinstance(v, list), null=True)  # FakeLLM's replies: strings or errors
FakeLLM = derived("augmenter.llm.FakeLLM", parent=LLMBase, responses=_REPLIES, default=Any)
LocalLLM = derived("augmenter.llm.LocalLLM", parent=LLMBase)
OpenAILLM = derived("augmenter.llm.OpenAICompatLLM", parent=LLMBase, base_url=Url)  # a URL is a str to Python
LLM = by_target(FakeLLM, LocalLLM, OpenAILLM)
LLMBase.model_rebuild()


# retriever
BM25 = derived("augmenter.knowledge.RankBM25Retriever")
BM25s = derived("augmenter.knowledge.BM25sRetriever")
Dense = derived("augmenter.knowledge.DenseRetriever")
Lucene = derived("augmenter.knowledge.lucene.LuceneRetriever")
Hybrid = derived("augmenter.knowledge.HybridRetriever", sparse="Retriever", dense="Retriever")  # nested nodes
Retriever = by_target(BM25s, BM25, Dense, Hybrid, Lucene)
Hybrid.model_rebuild()


# knowledge
Demo = derived("augmenter.knowledge.demo.load_demo_knowledge")
Demo2 = derived("augmenter.knowledge.demo.load_demo2_knowledge")
DSTC11 = derived("augmenter.knowledge.load_dstc11")
JSONL = derived("augmenter.knowledge.load_jsonl")
DocumentAnswers = derived(get_object("augmenter.documents.composer.DocumentComposer"), enabled=Flag)
Documents = derived(
    "augmenter.documents.load_documents",
    path=setting(  # a str or a list of them: the hint's union is one the derivation does not take apart
        "a file, folder or glob, or a list of them",
        lambda v: (
            (isinstance(v, str) and v.strip() != "")
            or (isinstance(v, list) and bool(v) and all(isinstance(x, str) and x.strip() for x in v))
        ),
    ),
    answer=DocumentAnswers | None,  # DocumentComposer's settings, read from a mapping
)
DSTC7Facts = derived("augmenter.tasks.dstc7.load_facts")
OTTQA = derived("augmenter.tasks.ottqa.load_corpus")
Knowledge = by_target(Demo, Demo2, DSTC11, JSONL, Documents, DSTC7Facts, OTTQA)


# policy
class Trained(Node):  # hand-kept: T5Policy's module imports torch (augmenter[train]), which the core lacks
    TARGET = "augmenter.policies.t5.T5Policy.load"
    checkpoint: filepath() = None
    greedy: Flag = None


Policy = by_target(
    *(
        derived(f"augmenter.policies.{name}")
        for name in ("RulePolicy", "LLMAugmenterPolicy", "NoKnowledgePolicy", "AlwaysUsePolicy", "GroundedPolicy")
    ),
    derived("augmenter.policies.SelfAskPolicy"),
    Trained,
)


# prompt
Prompt = derived("augmenter.prompts.PromptEngine")


# utility
KF1 = derived("augmenter.utilities.KF1Utility")
Recall = derived("augmenter.utilities.RecallUtility")
SelfCritique = derived("augmenter.utilities.SelfCritiqueUtility")
Claims = derived("augmenter.utilities.ClaimsUtility")
Combined = derived(
    "augmenter.utilities.CombinedUtility",
    base=by_target(KF1, Recall, SelfCritique, Claims),  # a nested node
    checks=Texts,  # names in a config (Python may pass callables too)
)


# verifier
FastVerifier = derived("augmenter.verification.FastVerifier")
LLMVerifier = derived("augmenter.verification.LLMVerifier")
CombinedVerifier = derived("augmenter.verification.CombinedVerifier")


# consolidator (a node without _target_, as configs before the consolidator group had, is the snippet one)
Opinions = derived("augmenter.reviews.evidence.OpinionSettings")
_TAGS.update({"switch", Opinions.TARGET})
_MODELS[Opinions.TARGET] = Opinions
_Switch = setting("true, false, null or a node of settings", lambda v: v is None or isinstance(v, bool))
Consolidator = derived(
    "augmenter.knowledge.KnowledgeConsolidator",
    opinions=Annotated[  # off (false or null), the defaults (true), or its settings (a node)
        Annotated[_Switch, Tag("switch")] | Annotated[Opinions, Tag(Opinions.TARGET)],
        Discriminator(lambda v: Opinions.TARGET if isinstance(v, dict) else "switch"),
    ],
)
TableText = derived("augmenter.knowledge.chainer.TableTextConsolidator")


# the other sections of chat, eval and train
# the nodes the builders read (augmenter/config.py), derived from what reads them
Agent = derived(get_object("augmenter.agent.Agent"))
Sampling = derived(
    get_object("augmenter.llm.SamplingParams"),
    retry_temperature=_schema_type(
        get_type_hints(get_object("augmenter.agent.Executor").__init__, include_extras=True)["retry_temperature"]
    ),
)
Executor = derived(
    get_object("augmenter.agent.Executor"),
    omit=("retry_temperature",),  # sampling.retry_temperature
    quote_reviews=Flag,  # ReviewReplies' quote, verdicts, faq_check, sure_on_topic (config.REVIEW_SETTINGS)
    review_verdicts=Flag,
    review_faq_check=number(null=True, ge=0, le=1),
    review_sure_on_topic=number(null=True, ge=0, le=1),
)


class LLMCache(Node):  # hand-kept: `enabled` is build_llm's switch, not a parameter; `dir` is CachedLLM's `directory`
    enabled: Flag = None
    dir: filepath(null=True) = None


LLMGuard = derived(get_object("augmenter.llm.ResilientLLM"))


class EvalSample(Node):
    limit: integer(ge=1) = None
    seed: Count = None
    exclude: EvalSample | list[EvalSample] | None = None  # the sample was itself drawn apart from these
    chain: list[EvalSample] | None = None  # these samples, each drawn apart from those before it


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
