"""Knowledge bases: DSTC11's published `knowledge.json` and a simple JSONL format of the user's own."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from augmenter.errors import KnowledgeFormatError
from augmenter.memory import Snippet
from augmenter.reviews import kinds  # noqa: F401  (the FAQs and reviews read here show as their room declares)
from augmenter.storage import json_error, read_jsonl


@dataclass
class Entity:
    """A named thing the knowledge talks about (a hotel, a restaurant...), with the names users call it by."""

    entity_id: int | str
    name: str
    domain: str | None = None
    aliases: list[str] = field(default_factory=list)


@dataclass
class KnowledgeBase:
    """Snippets plus the entities they belong to. `snippets[i].entity_id` refers to `entities`."""

    snippets: list[Snippet]
    entities: list[Entity]
    source: str = ""

    def __post_init__(self) -> None:
        self.by_id = {s.id: s for s in self.snippets}
        self._rows: dict[tuple, list[int]] = {}
        for i, s in enumerate(self.snippets):
            self._rows.setdefault((s.domain, s.entity_id), []).append(i)

    def __len__(self) -> int:
        return len(self.snippets)

    def rows_of(self, domain: str | None, entity_id: int | str) -> list[int]:
        """Indices of the snippets of one entity."""
        return self._rows.get((domain, entity_id), [])

    def gold(self, refs: Iterable[dict]) -> list[Snippet]:
        """Snippets named by DSTC11 label references ({domain, entity_id, doc_type, doc_id, sent_id})."""
        out = []
        for r in refs:
            sid = snippet_id(r["domain"], r["entity_id"], r["doc_type"], r["doc_id"], r.get("sent_id"))
            if sid in self.by_id:
                out.append(self.by_id[sid])
        return out


def snippet_id(domain, entity_id, doc_type, doc_id, sent_id=None) -> str:
    parts = [str(domain), str(entity_id), str(doc_type), str(doc_id)]
    if sent_id is not None:
        parts.append(str(sent_id))
    return ":".join(parts)


def _why(exc: Exception) -> str:
    """One line on why a value could not be used (pydantic's first error, or the exception's first line)."""
    if isinstance(exc, ValidationError):
        err = exc.errors()[0]
        return f"{'.'.join(map(str, err['loc'][:1]))}: {err['msg']}"
    return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"


def _read_json(path: Path):
    if not path.exists():
        raise KnowledgeFormatError(f"knowledge file not found: {path} (check data_root / knowledge.path)")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError as exc:
        raise KnowledgeFormatError(f"{path}: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise KnowledgeFormatError(f"{path}: not valid JSON: {json_error(exc)}") from None
    except RecursionError:
        raise KnowledgeFormatError(f"{path}: JSON nested too deeply") from None


def load_dstc11(path: str | Path, entity_mapping: str | Path | None = None) -> KnowledgeBase:
    """Load DSTC11 Track 5's `knowledge.json`: {domain: {entity_id: {name, faqs, reviews}}}.

    FAQs become one snippet each ("Q: ... A: ..."), reviews one snippet per sentence. `entity_mapping`
    (the baseline's `entity_mapping.json`: name -> variants) adds aliases for the entity linker.
    """
    path = Path(path)
    data = _read_json(path)
    variants: dict[str, list[str]] = {}
    if entity_mapping:
        mapping_path = Path(entity_mapping)
        if mapping_path.exists():
            mapping = _read_json(mapping_path)
            if isinstance(mapping, dict):
                variants = {str(k).lower(): [str(v) for v in vs] for k, vs in mapping.items() if isinstance(vs, list)}
    if not isinstance(data, dict):
        raise KnowledgeFormatError(
            f"{path}: expected an object {{domain: {{entity_id: entity}}}}, got {type(data).__name__}"
        )
    snippets: list[Snippet] = []
    entities: list[Entity] = []
    try:
        for domain, ents in data.items():
            if not isinstance(ents, dict):
                raise KnowledgeFormatError(f"{path}: domain {domain!r} must map entity ids to entities")
            for raw_id, ent in ents.items():
                entity_id = int(raw_id) if str(raw_id).isdigit() else raw_id
                name = ent.get("name")
                if name:
                    entities.append(Entity(entity_id, name, domain, variants.get(name.lower(), [])))
                for doc_id, faq in (ent.get("faqs") or {}).items():
                    snippets.append(
                        Snippet(
                            id=snippet_id(domain, entity_id, "faq", doc_id),
                            domain=domain,
                            entity_id=entity_id,
                            entity_name=name,
                            doc_type="faq",
                            doc_id=int(doc_id),
                            text=f"Q: {faq['question']} A: {faq['answer']}",
                        )
                    )
                for doc_id, review in (ent.get("reviews") or {}).items():
                    for sent_id, sent in review["sentences"].items():
                        snippets.append(
                            Snippet(
                                id=snippet_id(domain, entity_id, "review", doc_id, sent_id),
                                domain=domain,
                                entity_id=entity_id,
                                entity_name=name,
                                doc_type="review",
                                doc_id=int(doc_id),
                                sent_id=int(sent_id),
                                text=str(sent),
                            )
                        )
    except KnowledgeFormatError:
        raise
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise KnowledgeFormatError(f"{path}: not in DSTC11 knowledge.json format ({_why(exc)})") from None
    if not snippets:
        raise KnowledgeFormatError(f"{path}: holds no FAQs or review sentences")
    return KnowledgeBase(snippets, entities, source=str(path))


# The keys of a JSONL knowledge line: {key: (accepted types, what is allowed)}; `null` is the same as leaving it out.
JSONL_KEYS = {
    "text": (str, "a string (the snippet)"),
    "question": (str, "a string (with 'answer': a FAQ)"),
    "answer": (str, "a string (with 'question': a FAQ)"),
    "id": ((str, int), "a string or an integer"),
    "entity": (str, "a string (the entity's name)"),
    "aliases": (list, "a list of strings (other names of the entity)"),
    "domain": (str, "a string"),
    "doc_type": (str, "a string"),
}
_KINDS = {
    str: "a string",
    int: "an integer",
    float: "a decimal number",
    bool: "true/false",
    list: "a list",
    dict: "an object",
    type(None): "null",
}


def _wrong_type(value, types) -> str | None:
    """What `value` is, if it is not of `types` (a list: of strings); None if it is."""
    if isinstance(value, bool) or not isinstance(value, types):
        return _KINDS[type(value)]
    items = [a for a in value if not isinstance(a, str)] if isinstance(value, list) else []
    return f"a list holding {_KINDS[type(items[0])]}" if items else None


def _check_row(row: dict, where: str) -> dict:
    """The row without its null values; an unknown key or a value of the wrong type is a KnowledgeFormatError."""
    row = {k: v for k, v in row.items() if v is not None}
    for key, value in row.items():
        if key not in JSONL_KEYS:
            raise KnowledgeFormatError(f"{where}: unknown key {key!r} (allowed: {', '.join(JSONL_KEYS)})")
        types, allowed = JSONL_KEYS[key]
        got = _wrong_type(value, types)
        if got:
            raise KnowledgeFormatError(f"{where}: {key!r} must be {allowed}, got {got}")
    if "text" not in row and not ("question" in row and "answer" in row):
        raise KnowledgeFormatError(f"{where}: needs 'text', or 'question' and 'answer'")
    for key in ("text", "question", "answer", "entity"):
        if key in row and not row[key].strip():
            raise KnowledgeFormatError(f"{where}: {key!r} is empty")
    return row


def load_jsonl(path: str | Path) -> KnowledgeBase:
    """Load the user's own knowledge: one JSON object per line.

    Each line has `text` (or `question` and `answer`), and optionally `id`, `entity` (a name), `aliases`
    (other names of the entity), `domain` and `doc_type` (see `JSONL_KEYS`). Example:
    `{"entity": "Blue Lagoon Spa", "domain": "spa", "question": "Do you open on Sundays?", "answer": "Yes, 10-6."}`
    A line that is not such an object (bad JSON, an unknown key, a value of the wrong type) is a
    KnowledgeFormatError naming the file and the line.
    """
    path = Path(path)
    if not path.exists():
        raise KnowledgeFormatError(f"knowledge file not found: {path}")

    def bad(n: int, why: str):
        raise KnowledgeFormatError(f"{path}:{n}: {why}")

    snippets: list[Snippet] = []
    entities: dict[tuple, Entity] = {}
    for n, row in read_jsonl(path, bad):
        row = _check_row(row, f"{path}:{n}")
        if "text" in row:
            text, doc_type = row["text"], row.get("doc_type", "passage")
        else:
            text, doc_type = f"Q: {row['question']} A: {row['answer']}", row.get("doc_type", "faq")
        name, domain = row.get("entity"), row.get("domain")
        if name:
            key = (domain, name.lower())
            if key not in entities:
                entities[key] = Entity(entity_id=name.lower(), name=name, domain=domain)
            entity = entities[key]
            entity.aliases.extend(a for a in row.get("aliases", []) if a not in entity.aliases)
        snippets.append(
            Snippet(
                id=str(row.get("id", f"line{n}")),
                text=text,
                domain=domain,
                doc_type=doc_type,
                entity_id=name.lower() if name else None,
                entity_name=name,
                doc_id=row.get("id", n),
            )
        )
    if not snippets:
        raise KnowledgeFormatError(f"{path}: holds no snippets")
    return KnowledgeBase(snippets, list(entities.values()), source=str(path))


def load_knowledge(path: str | Path, format: str = "auto", entity_mapping: str | Path | None = None) -> KnowledgeBase:
    """Load a knowledge base; `format` is "dstc11", "jsonl" or "auto" (by file extension)."""
    path = Path(path)
    if format == "auto":
        format = "jsonl" if path.suffix == ".jsonl" else "dstc11"
    if format == "dstc11":
        return load_dstc11(path, entity_mapping)
    if format == "jsonl":
        return load_jsonl(path)
    raise KnowledgeFormatError(f"unknown knowledge format {format!r}: use dstc11, jsonl or auto")
