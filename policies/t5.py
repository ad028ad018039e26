"""The trainable policy (paper section 2.2): a T5 encoder over the Working Memory text plus an action head.

No pretrained T5 ships offline, so the encoder starts from a random init at a small shape (by default 2 layers,
d_model 128, 4 heads: about 1/100 of t5-small) with a SentencePiece tokenizer trained here on the project's
own text (DSTC11 utterances and knowledge, observation texts). Why an action head and not a decoder that writes
the action name: one forward pass gives the exact distribution over the five actions, so REINFORCE gets exact
log-probabilities and entropies and no decoded string can name an action that does not exist.

`T5Policy` is both an environment policy (`act(obs, env)`) and a Working-Memory policy (`next_action(mem)`), so
a trained checkpoint plugs into `augmenter chat` and `augmenter eval` (`policy=trained policy.checkpoint=...`).
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import sentencepiece as spm
import torch
from torch import nn
from transformers import T5Config, T5EncoderModel

from augmenter.errors import InputError
from augmenter.memory import Action, WorkingMemory
from augmenter.memory.observation import ACTIONS, N_FEATURES, observation_features, observation_text


class Tokenizer:
    """A SentencePiece unigram model, trained in-process and kept as bytes (saved inside checkpoints)."""

    def __init__(self, model_proto: bytes):
        self.proto = model_proto
        self.sp = spm.SentencePieceProcessor(model_proto=model_proto)
        self.pad_id = self.sp.pad_id()

    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int = 2000) -> Tokenizer:
        sink = io.BytesIO()
        lines = [t.replace("\n", " ").strip() for t in texts if t and t.strip()]
        if len(lines) < 10:
            raise InputError(f"too little text to train a tokenizer ({len(lines)} lines)")
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(lines),
            model_writer=sink,
            vocab_size=vocab_size,
            model_type="unigram",
            pad_id=0,
            unk_id=1,
            bos_id=-1,
            eos_id=2,
            hard_vocab_limit=False,
            character_coverage=1.0,
            num_threads=1,
            minloglevel=2,
        )
        return cls(sink.getvalue())

    def __len__(self) -> int:
        return self.sp.get_piece_size()

    def encode(self, texts: list[str], max_tokens: int) -> tuple[torch.Tensor, torch.Tensor]:
        ids = [self.sp.encode(t)[:max_tokens] or [self.sp.unk_id()] for t in texts]
        width = max(len(x) for x in ids)
        batch = torch.full((len(ids), width), self.pad_id, dtype=torch.long)
        for i, row in enumerate(ids):
            batch[i, : len(row)] = torch.tensor(row)
        return batch, (batch != self.pad_id).long()


class ActionNetwork(nn.Module):
    """T5 encoder -> mean-pooled text vector, concatenated with the numeric features -> action logits (no value
    head: REINFORCE's baseline is a moving average, see `training.py`). Checkpoints keep its state_dict and
    `config`, not the class, so those saved when it was called ActorCritic load unchanged."""

    def __init__(self, vocab_size: int, d_model: int = 128, d_ff: int = 256, num_layers: int = 2, num_heads: int = 4):
        super().__init__()
        self.config = dict(
            vocab_size=vocab_size, d_model=d_model, d_ff=d_ff, num_layers=num_layers, num_heads=num_heads
        )
        t5 = T5Config(
            vocab_size=vocab_size,
            d_model=d_model,
            d_ff=d_ff,
            d_kv=d_model // num_heads,
            num_layers=num_layers,
            num_heads=num_heads,
            dropout_rate=0.0,
            pad_token_id=0,
        )
        self.encoder = T5EncoderModel(t5)
        self.head = nn.Sequential(nn.Linear(d_model + N_FEATURES, d_model), nn.Tanh(), nn.Linear(d_model, len(ACTIONS)))

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, features: torch.Tensor) -> torch.Tensor:
        hidden = self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
        mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
        pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.head(torch.cat([pooled, features], dim=-1))


class T5Policy:
    """The network, its tokenizer and how to read an observation; greedy by default, sampling when asked."""

    def __init__(
        self,
        net: ActionNetwork,
        tokenizer: Tokenizer,
        max_tokens: int = 192,
        max_llm_calls: int = 2,
        greedy: bool = True,
        seed: int | None = None,
    ):
        self.net, self.tokenizer, self.max_tokens = net, tokenizer, max_tokens
        self.max_llm_calls = max_llm_calls  # the budget the features were normalised with in training
        self.greedy = greedy
        self.generator = torch.Generator().manual_seed(seed or 0)

    def logits(self, observations: list[dict[str, Any]]) -> torch.Tensor:
        ids, mask = self.tokenizer.encode([o["text"] for o in observations], self.max_tokens)
        features = torch.as_tensor(np.stack([o["features"] for o in observations]), dtype=torch.float32)
        return self.net(ids, mask, features)

    def choose(self, obs: dict[str, Any]) -> int:
        with torch.no_grad():
            logits = self.logits([obs])[0]
        if self.greedy:
            return int(logits.argmax())
        return int(torch.multinomial(torch.softmax(logits, -1), 1, generator=self.generator))

    def act(self, obs: dict[str, Any], env) -> int:
        return self.choose(obs)

    def next_action(self, mem: WorkingMemory) -> Action:
        obs = {"text": observation_text(mem), "features": observation_features(mem, self.max_llm_calls)}
        return ACTIONS[self.choose(obs)]

    # -- checkpoints ---------------------------------------------------------------------------------
    def state(self) -> dict[str, Any]:
        return {
            "net": self.net.state_dict(),
            "net_config": self.net.config,
            "tokenizer": self.tokenizer.proto,
            "max_tokens": self.max_tokens,
            "max_llm_calls": self.max_llm_calls,
            "actions": [a.value for a in ACTIONS],
        }

    @classmethod
    def from_state(cls, state: dict[str, Any], greedy: bool = True) -> T5Policy:
        if state.get("actions") != [a.value for a in ACTIONS]:
            raise InputError(
                "the checkpoint was trained on another action set: "
                f"{state.get('actions')} vs {[a.value for a in ACTIONS]}"
            )
        net = ActionNetwork(**state["net_config"])
        net.load_state_dict(state["net"])
        net.eval()
        return cls(net, Tokenizer(state["tokenizer"]), state["max_tokens"], state["max_llm_calls"], greedy=greedy)

    @classmethod
    def load(cls, checkpoint: str | Path, greedy: bool = True) -> T5Policy:
        """A trained policy from `policy.pt` (or a training run's `checkpoint.pt`)."""
        path = Path(checkpoint)
        if not path.is_file():
            raise InputError(f"policy checkpoint not found: {path} (train one with `augmenter train`)")
        try:
            state = torch.load(path, map_location="cpu", weights_only=False)
        except Exception as exc:  # torch raises many kinds for a corrupt or foreign file
            raise InputError(f"{path}: not a policy checkpoint ({type(exc).__name__}: {exc})") from None
        return cls.from_state(state.get("policy", state), greedy=greedy)
