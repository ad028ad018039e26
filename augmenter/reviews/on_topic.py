"""Whether a review sentence speaks to what the user asked: the packaged MiniLM encoder read as a cross-encoder
(question and sentence in one input), with low-rank weight deltas and a scoring head fitted on DSTC11 dev turns'
gold review sentences (`models/on_topic.safetensors`, bench/fit_on_topic.py). On the 468 labelled (question,
sentence) pairs of bench/labels/opinions/ (dialogues apart from its training turns) it tells related from
unrelated sentences better than the 1.5B model asked (bench/results/on_topic.json), and it reads a complaint on
the asked topic ("the room was tiny" for "Are the rooms big?") as on it, where the model's yes/no pass does not.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path

from augmenter.errors import ConfigError
from augmenter.reviews.opinions import packaged_file
from augmenter.verification.lexical import fragments, leans_back

# a fragment quoted alone names its own subject ("our room had a great view"), not a piece of a list ("bathroom were
# extremely clean" of "both the room and bathroom were extremely clean") nor a reason ("so it was great to ...")
_SUBJECT = frozenset("the a an our my their his her its i we they there this these those everything all staff".split())
_INNER_END = re.compile(r"[.!?]\s+\S")
_LOCK = threading.Lock()
_LOADED: dict[str, OnTopicModel] = {}


class OnTopicModel:
    """`probabilities(question, sentences)`: P(on the question) of each sentence. The weights file holds, per
    adapted linear layer of the encoder, factors `<layer>.A` (r x in) and `<layer>.B` (out x r) whose product,
    times `lora_scale`, is added to the layer's weight, and the scoring head (`bert.pooler.*`, `classifier.*`)."""

    def __init__(self, name: str = "on_topic", max_length: int = 128):
        from safetensors import safe_open
        from transformers import AutoModelForSequenceClassification, AutoTokenizer
        from transformers.utils import logging as transformers_logging

        from augmenter.verification.encoder import encoder_path

        path = packaged_file(name, ".safetensors", "on-topic model")
        try:  # read before the encoder is loaded: a broken file costs no model load
            with safe_open(str(path), framework="pt") as f:
                scale = float((f.metadata() or {}).get("lora_scale", "2.0"))
                tensors = {k: f.get_tensor(k).float() for k in f.keys()}  # noqa: SIM118 (safe_open has no iteration)
        except Exception as exc:  # a truncated or foreign file
            raise ConfigError(f"on-topic model {path}: not a weights file ({exc})") from None
        base = encoder_path()
        self.tokenizer = AutoTokenizer.from_pretrained(base)
        verbosity = transformers_logging.get_verbosity()
        transformers_logging.set_verbosity_error()  # the head comes from the weights file, not the encoder's
        try:
            self.model = AutoModelForSequenceClassification.from_pretrained(base, num_labels=1)
        finally:
            transformers_logging.set_verbosity(verbosity)
        self.max_length = max_length
        self._apply(tensors, scale, path)
        self.model.eval()
        self._lock = threading.Lock()  # one model serves every thread of a process (eval, serve)

    def _apply(self, tensors: dict, scale: float, path: Path) -> None:
        import torch

        params = dict(self.model.named_parameters())
        with torch.no_grad():
            for key, value in tensors.items():
                if key.endswith(".A"):
                    layer = key[: -len(".A")]
                    weight = params.get(f"{layer}.weight")
                    delta = tensors.get(f"{layer}.B")
                    if weight is None or delta is None or (delta @ value).shape != weight.shape:
                        raise ConfigError(f"on-topic model {path}: {layer} does not fit the encoder")
                    weight += scale * (delta @ value)
                elif key.endswith(".B"):
                    if f"{key[: -len('.B')]}.A" not in tensors:
                        raise ConfigError(f"on-topic model {path}: {key} has no .A beside it")
                else:
                    if key not in params or params[key].shape != value.shape:
                        raise ConfigError(f"on-topic model {path}: {key} does not fit the encoder")
                    params[key].copy_(value)

    @classmethod
    def load(cls, name: str = "on_topic") -> OnTopicModel:
        """The model of that name (or .safetensors path), loaded once per process."""
        with _LOCK:
            if name not in _LOADED:
                _LOADED[name] = cls(name)
            return _LOADED[name]

    def probabilities(self, question: str, sentences: Sequence[str], batch_size: int = 32) -> list[float]:
        import torch

        out: list[float] = []
        with self._lock, torch.no_grad():
            for i in range(0, len(sentences), batch_size):
                batch = list(sentences[i : i + batch_size])
                enc = self.tokenizer(
                    [question] * len(batch),
                    batch,
                    truncation=True,
                    max_length=self.max_length,
                    padding=True,
                    return_tensors="pt",
                )
                out += torch.sigmoid(self.model(**enc).logits[:, 0]).tolist()
        return out

    def best_part_probabilities(
        self, question: str, sentences: Sequence[str], whole: Sequence[bool] = ()
    ) -> list[float]:
        """P(on the question) of each sentence's best part: the sentence whole or one of its fragments that reads
        alone (`quotable`; `whole[i]`: sentence i is scored whole only). A sentence that goes on about other things
        scores low whole: "The rooms were not that clean, and there was no safe in the room to lock our stuff in."
        0.02 to "very clean rooms?", its first fragment 0.998; a fragment that does not read alone is not scored
        ("which was superb" 0.42 to "How nice is the view?")."""
        whole = list(whole) + [False] * (len(sentences) - len(whole))
        pieces = [
            [] if w else [f + "." for f in fragments(s) if quotable(f, s) and len(f) < len(s.strip().rstrip("."))]
            for s, w in zip(sentences, whole)
        ]
        flat = list(sentences) + [f for ps in pieces for f in ps]
        scores = self.probabilities(question, flat)
        best, at = list(scores[: len(sentences)]), len(sentences)
        for i, ps in enumerate(pieces):
            if ps:
                best[i] = max(best[i], *scores[at : at + len(ps)])
                at += len(ps)
        return best

    def answering_parts(
        self, question: str, sentences: Sequence[str], sure: float = 0.8, off: float = 0.5
    ) -> list[str]:
        """Each sentence cut to the fragment of it that speaks to the question, where one does (P >= `sure`) and its
        other fragments do not (P < `off`), and that fragment reads alone (`quotable`); else the sentence as it is.
        Words unchanged: "our room had a spectacular view of the forest" of "The staff was polite they took out
        luggage to our room, and our room had a spectacular view of the forest" for "Is the view good?"."""
        pieces = [fragments(s) for s in sentences]
        flat = [f + "." for ps in pieces for f in ps if len(ps) > 1]  # the model reads a fragment as a sentence
        scores = iter(self.probabilities(question, flat)) if flat else iter(())
        out = []
        for sentence, ps in zip(sentences, pieces):
            if len(ps) < 2:
                out.append(sentence)
                continue
            scored = sorted(((next(scores), f) for f in ps), reverse=True)
            (best, piece), second = scored[0], scored[1][0]
            cut = best >= sure and second < off and quotable(piece, sentence)
            out.append(piece if cut else sentence)
        return out


def quotable(piece: str, sentence: str) -> bool:
    """Whether a fragment of `sentence` may be quoted alone: four words or more, one sentence, not pointing back
    (`leans_back`), and either the sentence's opening or a clause with its own subject (`_SUBJECT`)."""
    words = piece.split()
    if len(words) < 4 or _INNER_END.search(piece) or leans_back(piece):
        return False
    return sentence.strip().startswith(piece) or words[0].lower() in _SUBJECT
