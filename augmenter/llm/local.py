"""The embedded default: a GGUF chat model run in-process by llama.cpp (llama-cpp-python), fully offline."""

from __future__ import annotations

import os
import threading
from pathlib import Path

from augmenter.errors import ConfigError, LLMError
from augmenter.llm.assets import check_installed, model_path
from augmenter.llm.base import Completion, Messages, SamplingParams, TextSink, identity
from augmenter.settings import Positive


class LocalLLM:
    """llama.cpp chat completion.

    `model` names an embedded model (see `augmenter.llm.assets.MODELS`) or is a path to any GGUF file.
    The model loads on first use. `wait_policy="passive"` (OMP_WAIT_POLICY, unless already set) makes llama.cpp's
    idle threads sleep instead of spinning, so that it does not thrash beside another busy process (`None`: leave
    the OpenMP default). With `params.logprobs`, the call is one scoring forward pass: the answer is
    the most likely first token and `top_logprobs` its alternatives (label scoring for the LLM verifier).
    Prompts longer than the context window are cut from the middle of the
    conversation (the system message and the final user message are kept) before llama.cpp sees them.
    llama.cpp keeps the KV cache between calls, so a prompt that starts like the previous one evaluates only what
    differs. `kv_reuse` says how: "any" (llama-cpp-python's own: the whole shared prefix; fastest, but a greedy
    reply can differ with what was evaluated before, since a prefix evaluated in other batches gives slightly other
    numbers), "exact" (only whole `n_batch` blocks of the shared prefix, evaluated in the same blocks as from an
    empty cache, so every reply is what an empty cache gives: a resumed, concurrent or sharded run answers as an
    uninterrupted one) or "off" (every call from an empty cache). `n_batch`: llama.cpp's batch (default 64 for
    "exact", 512 otherwise). `prompt_tokens_evaluated` and `prompt_eval_seconds` count, over all calls, the prompt
    tokens llama.cpp actually evaluated and its time.
    """

    KV_REUSE = ("any", "exact", "off")

    backend = "local"

    def __init__(
        self,
        model: str = "qwen2.5-coder-1.5b-instruct",
        n_ctx: Positive = 4096,
        n_threads: Positive | None = None,
        verbose: bool = False,
        wait_policy: str | None = "passive",
        kv_reuse: str = "any",
        n_batch: Positive | None = None,
    ):
        if kv_reuse not in self.KV_REUSE:
            raise ConfigError(f"llm.kv_reuse must be one of {', '.join(self.KV_REUSE)}, got {kv_reuse!r}")
        if n_batch is not None and (isinstance(n_batch, bool) or not isinstance(n_batch, int) or n_batch < 1):
            raise ConfigError(f"llm.n_batch must be an integer >= 1, got {n_batch!r}")
        check_installed(model)  # a missing extra is one line now, not a failed first turn
        self.model = model
        self.kv_reuse = kv_reuse
        self.n_batch = n_batch or (64 if kv_reuse == "exact" else 512)
        self.prompt_tokens_evaluated = 0
        self.prompt_eval_seconds = 0.0
        self.n_ctx = n_ctx
        self.n_threads = n_threads or max(1, min(4, os.cpu_count() or 1))
        self.verbose = verbose
        self.wait_policy = wait_policy
        self._llm = None
        self._formatter = None
        self._lock = threading.Lock()

    @property
    def identity(self) -> str:
        """Backend and model; with exact or no KV reuse also that mode and the batch (their replies are a function of
        the prompt alone, so they are cached apart from "any"'s)."""
        if self.kv_reuse == "any":
            return identity(self.backend, self.model)
        return identity(self.backend, f"{self.model}|kv={self.kv_reuse}|n_batch={self.n_batch}")

    def _load(self):
        if self._llm is None:
            if self.wait_policy:  # read once when llama.cpp's OpenMP runtime loads; a user's own setting wins
                os.environ.setdefault("OMP_WAIT_POLICY", self.wait_policy.upper())
            try:
                from llama_cpp import Llama
            except ImportError:
                raise LLMError(
                    "the local LLM needs llama-cpp-python: pip install 'augmenter[local]' "
                    "(build it with CMAKE_ARGS=-DGGML_NATIVE=OFF; see README)"
                ) from None
            path = Path(self.model) if self.model.endswith(".gguf") else model_path(self.model)
            if not path.exists():
                raise LLMError(f"GGUF model file not found: {path}")
            self._llm = Llama(
                model_path=str(path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                seed=0,
                n_batch=self.n_batch,
                n_ubatch=self.n_batch,
                verbose=self.verbose,
            )
        return self._llm

    def _fit(self, llm, messages: Messages, max_tokens: int) -> Messages:
        """Drop middle messages, then shorten the last one, until the prompt fits the context window."""
        budget = self.n_ctx - max_tokens - 32

        def count(text):
            return len(llm.tokenize(text.encode("utf-8", "ignore"), add_bos=False, special=False))

        msgs = [dict(m) for m in messages]
        sizes = [count(m["content"]) + 8 for m in msgs]
        while sum(sizes) > budget and len(msgs) > 2:
            del msgs[1], sizes[1]
        over = sum(sizes) - budget
        if over > 0:
            content = msgs[-1]["content"]
            keep = max(0, len(content) - over * 6)  # ~at most 6 characters per token
            msgs[-1]["content"] = content[: keep // 2] + "\n...\n" + content[len(content) - keep // 2 :]
        return msgs

    def _chat_tokens(self, llm, messages: Messages) -> list[int]:
        """The prompt's tokens in the model's own chat template (as create_chat_completion would build them)."""
        if self._formatter is None:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter

            template = llm.metadata.get("tokenizer.chat_template")
            if not template:
                raise LLMError(f"{self.model}: the GGUF file has no chat template, so it cannot score labels")

            def text(token):
                return llm._model.token_get_text(token) if token != -1 else ""

            self._formatter = Jinja2ChatFormatter(
                template=template, eos_token=text(llm.token_eos()), bos_token=text(llm.token_bos())
            )
        prompt = self._formatter(messages=messages).prompt
        return llm.tokenize(prompt.encode("utf-8"), add_bos=False, special=True)

    def _first_token_logprobs(self, llm, messages: Messages, k: int) -> Completion:
        """One forward pass: the log-probabilities of the answer's first token (llama.cpp keeps only the last
        position's logits, so this is how a model loaded without `logits_all` gives label probabilities). The
        prompt's shared prefix with the previous call is kept in the KV cache."""
        import numpy as np

        tokens = self._chat_tokens(llm, messages)
        shared = self._reusable(llm, tokens)
        llm.n_tokens = shared
        llm.eval(tokens[shared:])
        logits = np.ctypeslib.as_array(llm._ctx.get_logits(), shape=(llm.n_vocab(),)).astype(np.float64)
        logprobs = logits - (logits.max() + np.log(np.exp(logits - logits.max()).sum()))
        best = np.argpartition(-logprobs, k)[:k]
        best = best[np.argsort(-logprobs[best])]
        top: dict[str, float] = {}
        for token in best:
            piece = llm.detokenize([int(token)]).decode("utf-8", "ignore")
            top[piece] = max(top.get(piece, -1e9), float(logprobs[token]))
        first = llm.detokenize([int(best[0])]).decode("utf-8", "ignore")
        return Completion(text=first.strip(), prompt_tokens=len(tokens), completion_tokens=1, top_logprobs=[top])

    def _perf(self, llm) -> tuple[int, float]:
        """llama.cpp's running count of prompt tokens evaluated and their milliseconds (0s if unavailable)."""
        try:
            import llama_cpp

            data = llama_cpp.llama_perf_context(llm._ctx.ctx)
            return int(data.n_p_eval), float(data.t_p_eval_ms)
        except Exception:  # a figure for benchmarks, never a reason to fail a call
            return 0, 0.0

    def _reusable(self, llm, tokens: list[int]) -> int:
        """How many leading `tokens` to keep in the KV cache from the previous call (see `kv_reuse`)."""
        if self.kv_reuse == "off":
            return 0
        previous = llm.input_ids[: llm.n_tokens]
        shared = 0
        while shared < min(len(previous), len(tokens) - 1) and previous[shared] == tokens[shared]:
            shared += 1
        return shared if self.kv_reuse == "any" else shared // self.n_batch * self.n_batch

    def _metered(self, llm, call, messages: Messages | None = None):
        """Run `call()` on `llm` after keeping what `kv_reuse` allows of the KV cache (for a generation call, given
        its `messages`), counting the prompt evaluation."""
        if messages is not None and self.kv_reuse != "any":
            keep = self._reusable(llm, self._chat_tokens(llm, messages)) if self.kv_reuse == "exact" else 0
            if keep:  # llama-cpp-python's own prefix match then stops at `keep`: the rest is evaluated in blocks
                llm._ctx.kv_cache_seq_rm(-1, keep, -1)
                llm.n_tokens = keep
            else:
                llm.reset()
        tokens, ms = self._perf(llm)
        try:
            return call()
        finally:
            after_tokens, after_ms = self._perf(llm)
            self.prompt_tokens_evaluated += max(0, after_tokens - tokens)
            self.prompt_eval_seconds += max(0.0, after_ms - ms) / 1000.0

    def complete(self, messages: Messages, params: SamplingParams) -> Completion:
        with self._lock:
            llm = self._load()
            msgs = self._fit(llm, messages, params.max_tokens)
            if params.logprobs:
                try:
                    return self._metered(llm, lambda: self._first_token_logprobs(llm, msgs, params.logprobs))
                except (ValueError, RuntimeError) as exc:
                    raise LLMError(f"llama.cpp failed to score the prompt: {exc}") from None
            try:
                out = self._metered(
                    llm,
                    lambda: llm.create_chat_completion(
                        messages=msgs,
                        max_tokens=params.max_tokens,
                        temperature=params.temperature,
                        top_p=params.top_p,
                        seed=params.seed,
                        stop=params.stop or None,
                        repeat_penalty=params.repeat_penalty,
                    ),
                    msgs,
                )
            except (ValueError, RuntimeError) as exc:
                raise LLMError(f"llama.cpp failed: {exc}") from None
        usage = out.get("usage") or {}
        text = (out["choices"][0]["message"].get("content") or "").strip()
        if not text:
            raise LLMError(
                f"{self.model} returned an empty reply (finish_reason: {out['choices'][0].get('finish_reason')})"
            )
        return Completion(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
        )

    def stream(self, messages: Messages, params: SamplingParams, on_text: TextSink) -> Completion:
        """`complete`, the reply handed to `on_text` piece by piece as llama.cpp generates it (a scoring call with
        `params.logprobs` is not streamed). Tokens: the chunks generated, the prompt in the chat template."""
        if params.logprobs:
            out = self.complete(messages, params)
            if out.text:
                on_text(out.text)
            return out
        pieces: list[str] = []
        finish = None
        with self._lock:
            llm = self._load()
            msgs = self._fit(llm, messages, params.max_tokens)

            def generate() -> None:
                nonlocal finish
                for chunk in llm.create_chat_completion(
                    messages=msgs,
                    max_tokens=params.max_tokens,
                    temperature=params.temperature,
                    top_p=params.top_p,
                    seed=params.seed,
                    stop=params.stop or None,
                    repeat_penalty=params.repeat_penalty,
                    stream=True,
                ):
                    choice = chunk["choices"][0]
                    finish = choice.get("finish_reason") or finish
                    text = (choice.get("delta") or {}).get("content") or ""
                    text = text if pieces else text.lstrip()  # the whole reply is stripped, as complete() does
                    if text:
                        pieces.append(text)
                        on_text(text)

            try:
                self._metered(llm, generate, msgs)
            except (ValueError, RuntimeError) as exc:
                raise LLMError(f"llama.cpp failed: {exc}") from None
            prompt_tokens = self._prompt_tokens(llm, msgs)
        text = "".join(pieces).strip()
        if not text:
            raise LLMError(f"{self.model} returned an empty reply (finish_reason: {finish})")
        return Completion(text=text, prompt_tokens=prompt_tokens, completion_tokens=len(pieces))

    def _prompt_tokens(self, llm, messages: Messages) -> int:
        """The prompt's size in tokens (in the chat template; else its messages' tokens; 0 if neither works)."""
        try:
            return len(self._chat_tokens(llm, messages))
        except Exception:  # a count for the trace, never a reason to fail the call
            pass
        try:
            return sum(
                len(llm.tokenize(m["content"].encode("utf-8", "ignore"), add_bos=False, special=False))
                for m in messages
            )
        except Exception:
            return 0
