// The web chat: one conversation per browser session (sessionStorage), the draft streamed in and marked
// "checking…", then replaced by the checked answer with its sources and a collapsible trace of the turn.
// Every piece of user, knowledge and model text goes in with textContent: nothing here is parsed as HTML.
"use strict";

(() => {
  const TURNS = "augmenter.turns";
  const KEY = "augmenter.key";
  const $ = (id) => document.getElementById(id);
  const log = $("log"), form = $("ask"), question = $("question"), send = $("send"), status = $("status");
  const keyInput = $("key");
  let limits = { max_message_chars: 2000, max_history_messages: 40 };
  let turns = load();
  let shown = 0; // turns on the page: each turn's sources get ids of their own (src-<turn>-<n>)

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function load() {
    try {
      const stored = JSON.parse(sessionStorage.getItem(TURNS) || "[]");
      return Array.isArray(stored) ? stored : [];
    } catch (_) {
      return [];
    }
  }

  function save() {
    try {
      sessionStorage.setItem(TURNS, JSON.stringify(turns));
    } catch (_) { /* storage full: the conversation goes on, unsaved */ }
  }

  // The messages of the next request: the latest answered turns (within the server's limit), then the question.
  function messages(q) {
    const history = [];
    for (const t of turns) history.push({ role: "user", content: t.question }, { role: "assistant", content: t.answer });
    const keep = history.slice(Math.max(0, history.length - limits.max_history_messages));
    if (keep.length && keep[0].role === "assistant") keep.shift();
    keep.push({ role: "user", content: q });
    return keep;
  }

  function view(q) {
    const box = el("section", "turn");
    box.dataset.turn = String(++shown);
    box.append(el("div", "msg user", q));
    const answer = el("div", "msg assistant");
    box.append(answer);
    log.append(box);
    return { box, answer, candidate: -1, draft: "", progress: null };
  }

  function pending(v) {
    v.answer.className = "msg assistant pending";
    v.progress = el("span", "progress", "retrieving knowledge…");
    v.answer.replaceChildren(el("span", "badge", "thinking…"), v.progress);
  }

  function showAction(v, ev) {
    if (v.progress) v.progress.textContent = `${ev.step}. ${ev.action}${ev.detail ? ": " + ev.detail : ""}`;
  }

  function showDraft(v, candidate, text) {
    if (candidate !== v.candidate) {
      v.candidate = candidate;
      v.draft = "";
    }
    v.draft += text;
    v.answer.className = "msg assistant draft";
    const label = candidate > 0 ? `revision ${candidate}, checking…` : "draft, checking…";
    const body = el("p", "text", v.draft);
    v.answer.replaceChildren(el("span", "badge", label), body);
    if (v.progress) v.answer.append(v.progress);
  }

  const NOTES = {
    partial: "No candidate was fully supported: only its supported claims are shown.",
    abstained: "The knowledge does not answer this: augmenter says so instead of guessing.",
    failed: "The language model failed on this turn.",
  };

  // A document's passage: where it is (file, page, headings), the sentence quoted, and the whole passage with that
  // sentence marked, folded under it. Every piece goes in as text.
  function passage(src) {
    const box = el("details", "passage");
    box.append(el("summary", null, "passage"));
    const body = el("blockquote");
    const text = String(src.passage || ""), quote = String(src.quote || "");
    const at = quote ? text.indexOf(quote) : -1;
    if (at < 0) body.append(document.createTextNode(text));
    else body.append(document.createTextNode(text.slice(0, at)), el("mark", null, quote),
      document.createTextNode(text.slice(at + quote.length)));
    box.append(body);
    return box;
  }

  function showFinal(v, text, s) {
    v.answer.className = "msg assistant final";
    v.answer.replaceChildren(el("p", "text", text));
    if (NOTES[s.outcome]) v.answer.append(el("div", "note", NOTES[s.outcome]));
    const turn = v.box.dataset.turn;
    const anchor = (n) => `src-${turn}-${Number(n)}`;
    if (s.sources && s.sources.length) {
      const list = el("ol", "sources");
      for (const src of s.sources) {
        const item = el("li");
        item.id = anchor(src.n);
        if (src.where) {
          item.append(el("span", "sid", `[${src.n}] ${src.where}`), el("q", "quote", src.quote), passage(src));
        } else {
          item.append(el("span", "sid", `[${src.n}] ${src.id}`), document.createTextNode(src.text));
        }
        list.append(item);
      }
      v.answer.append(el("div", "cites", "sources:"), list);
      for (const c of s.cited_claims || []) {
        const line = el("div", "cites");
        for (const n of c.sources) {
          const link = el("a", "cite", `[${n}]`);
          link.href = "#" + anchor(n);
          link.addEventListener("click", () => {
            const target = document.getElementById(anchor(n));
            const fold = target && target.querySelector("details.passage");
            if (fold) fold.open = true;
          });
          line.append(link);
        }
        line.append(document.createTextNode(" " + c.claim));
        v.answer.append(line);
      }
    }
    v.answer.append(trace(s));
  }

  function cell(row, text, cls) {
    row.append(el("td", cls, text));
  }

  function trace(s) {
    const box = el("details", "trace");
    const t = s.timings || {}, u = s.usage || {};
    box.append(el("summary", null, `trace: ${(s.actions || []).length} actions, ${u.llm_calls || 0} LLM calls, ` +
      `${(t.turn_seconds || 0).toFixed(2)} s (${(1000 * (t.overhead_seconds || 0)).toFixed(0)} ms outside the LLM)`));
    box.append(el("h3", null, "actions"));
    const table = el("table");
    const head = el("tr");
    for (const h of ["#", "action", "detail", "ms", "LLM calls", "tokens in/out"]) head.append(el("th", null, h));
    table.append(head);
    for (const a of s.actions || []) {
      const row = el("tr");
      cell(row, a.step, "num");
      cell(row, a.action);
      cell(row, a.detail);
      cell(row, a.ms, "num");
      cell(row, a.llm_calls, "num");
      cell(row, a.llm_calls ? `${a.prompt_tokens}/${a.completion_tokens}` : "", "num");
      table.append(row);
    }
    box.append(table);
    if (s.entities && s.entities.length) box.append(el("div", null, "entities: " + s.entities.join(", ")));
    if (s.evidence && s.evidence.length) {
      box.append(el("h3", null, "evidence"));
      const list = el("ol", "sources");
      for (const e of s.evidence) {
        const item = el("li");
        const where = e.where ? `${e.where} ` : "";
        item.append(el("span", "sid", where + e.id + (e.score !== null ? ` (${e.score})` : "")),
          document.createTextNode(e.text));
        list.append(item);
      }
      box.append(list);
    }
    if (s.candidates && s.candidates.length) {
      box.append(el("h3", null, "candidates"));
      for (const c of s.candidates) {
        const div = el("div", "cand" + (c.sent ? " sent" : ""));
        const verdict = c.score === null ? "not verified" : `score ${c.score}, ${c.passed ? "passed" : "feedback"}`;
        div.append(el("div", null, `${c.index + 1}. ${c.text}`), el("div", "cites", verdict + (c.sent ? ", sent" : "")));
        if (c.feedback) div.append(el("div", "cites", "feedback: " + c.feedback));
        for (const claim of c.claims || []) {
          const line = el("div", "claim");
          line.append(el("span", "verdict-" + claim.verdict, `${claim.verdict} p=${claim.p_supported} `),
            document.createTextNode(claim.claim + (claim.evidence.length ? ` <- ${claim.evidence[0]}` : "")));
          div.append(line);
        }
        box.append(div);
      }
    }
    for (const w of s.warnings || []) box.append(el("div", "note", "warning: " + w));
    box.append(el("div", "cites", `queued ${(t.queue_seconds || 0).toFixed(3)} s; LLM ${(t.llm_seconds || 0).toFixed(3)} s; ` +
      `tokens ${u.prompt_tokens || 0} in, ${u.completion_tokens || 0} out`));
    return box;
  }

  function failed(v, message) {
    v.answer.className = "msg assistant failed";
    v.answer.replaceChildren(el("p", "text", "Error: " + message));
  }

  // Server-sent events from a fetch body: yields each event's data.
  async function* events(response) {
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, ""));
        if (data.length) yield data.join("\n");
      }
    }
  }

  async function ask(q) {
    const v = view(q);
    pending(v);
    v.box.scrollIntoView({ block: "end" });
    try {
      await answer(v, q);
    } catch (err) {
      failed(v, err.message);
    }
  }

  async function answer(v, q) {
    const headers = { "Content-Type": "application/json" };
    const key = sessionStorage.getItem(KEY);
    if (key) headers.Authorization = "Bearer " + key;
    const response = await fetch("v1/chat/completions", {
      method: "POST", headers,
      body: JSON.stringify({ model: "augmenter", stream: true, messages: messages(q) }),
    });
    if (!response.ok) {
      let message = `HTTP ${response.status}`;
      try { message = (await response.json()).error.message || message; } catch (_) { /* not JSON */ }
      if (response.status === 401) showKey();
      throw new Error(message);
    }
    let content = "", summary = null;
    for await (const data of events(response)) {
      if (data === "[DONE]") break;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new Error(chunk.error.message);
      const ev = chunk.augmenter;
      if (ev && ev.event === "draft") showDraft(v, ev.candidate, ev.text);
      else if (ev && ev.event === "action") showAction(v, ev);
      else if (ev && ev.event === "final") summary = ev;
      for (const c of chunk.choices || []) {
        if (c.delta && typeof c.delta.content === "string") content += c.delta.content;
      }
    }
    if (!summary) throw new Error("the answer did not arrive");
    showFinal(v, content, summary);
    turns.push({ question: q, answer: content, summary });
    save();
    v.box.scrollIntoView({ block: "end" });
  }

  function showKey() {
    keyInput.hidden = false;
    keyInput.focus();
  }

  async function ready() {
    try {
      const r = await (await fetch("readyz")).json();
      limits = r.limits || limits;
      question.maxLength = limits.max_message_chars;
      status.textContent = r.status === "ready" ? `${r.model}: ready` : `${r.model}: ${r.status}`;
      if (r.auth && !sessionStorage.getItem(KEY)) showKey();
    } catch (_) {
      status.textContent = "the server does not answer";
    }
  }

  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    const q = question.value.trim();
    if (!q || send.disabled) return;
    if (!keyInput.hidden && keyInput.value) sessionStorage.setItem(KEY, keyInput.value);
    question.value = "";
    send.disabled = true;
    try {
      await ask(q);
    } finally {
      send.disabled = false;
      question.focus();
    }
  });

  question.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      form.requestSubmit();
    }
  });

  $("reset").addEventListener("click", () => {
    turns = [];
    save();
    log.replaceChildren();
    question.focus();
  });

  for (const t of turns) showFinal(view(t.question), t.answer, t.summary || {});
  ready();
})();
