"""A SYNTHETIC folder of documents for the documents benchmarks: `make_corpus(folder, n, seed)` writes n policy-like
documents of other fictional organisations in mixed formats (50% Markdown, 15% text, 15% HTML, 10% PDF made with
fpdf2, 10% Word made with python-docx), nested in sub-folders, 3-6 sections of 2-4 paragraphs each (about 450
words a document). Sentences are templates filled from a seeded vocabulary (travel, leave, security, office,
benefits...), so they compete with the handbook's passages for the same words. Also `change_files`, which rewrites
a share of the files (for the incremental update)."""

from __future__ import annotations

import random
from pathlib import Path

ORGS = [
    "Birchwood",
    "Cobalt",
    "Dunmore",
    "Elmstead",
    "Fairhaven",
    "Glenrock",
    "Harbor",
    "Ironvale",
    "Juniper",
    "Kestrel",
    "Linden",
    "Marlow",
    "Northgate",
    "Oakhurst",
    "Pinecrest",
    "Quarry",
    "Redfield",
    "Stonebridge",
]
TOPICS = {
    "travel": ["flights", "trains", "hotels", "taxis", "mileage", "visas", "bookings", "per diem", "receipts"],
    "leave": ["annual leave", "sick days", "parental leave", "holidays", "carry over", "unpaid leave", "sabbaticals"],
    "security": ["passwords", "laptops", "badges", "backups", "phishing", "encryption", "USB sticks", "incidents"],
    "office": ["reception", "kitchen", "parking", "bike room", "meeting rooms", "printers", "lockers", "visitors"],
    "benefits": ["health insurance", "pension", "gym", "learning budget", "bonus", "meal vouchers", "childcare"],
    "finance": ["invoices", "budgets", "purchase orders", "expense claims", "approvals", "suppliers", "audits"],
}
ROLES = [
    "the line manager",
    "the finance team",
    "the office manager",
    "the IT helpdesk",
    "the People team",
    "the department head",
    "the project lead",
    "the works council",
    "the facilities team",
]
UNITS = ["days", "weeks", "months", "hours", "euros", "percent", "working days", "nights"]
TEMPLATES = [
    "Requests about {a} go to {role} at least {n} {unit} in advance.",
    "{Role} reviews {a} every {n} {unit} and records the outcome in the register.",
    "Employees may claim up to {n} {unit} for {a}, provided {role} agrees.",
    "{A} are handled by {role}; questions about {b} also go there.",
    "From the {n}th day, {a} need a written confirmation from {role}.",
    "The limit for {a} is {n} {unit}, and {b} are not counted towards it.",
    "Please keep the records on {a} for {n} {unit} after the end of the year.",
    "New staff learn about {a} and {b} in their first {n} {unit}.",
    "If {a} are refused, {role} explains why within {n} {unit}.",
    "{A} outside the office need the approval of {role}.",
]


def _sentence(rng: random.Random, topic: str) -> str:
    words = TOPICS[topic]
    a, b = rng.sample(words, 2)
    role = rng.choice(ROLES)
    text = rng.choice(TEMPLATES).format(
        a=a,
        b=b,
        A=a[:1].upper() + a[1:],
        role=role,
        Role=role[:1].upper() + role[1:],
        n=rng.randint(2, 60),
        unit=rng.choice(UNITS),
    )
    return text


def _document(rng: random.Random, i: int) -> tuple[str, list[tuple[str, list[str]]]]:
    org, topic = rng.choice(ORGS), rng.choice(list(TOPICS))
    title = f"{org} {topic.title()} Policy {i}"
    sections = []
    for s in range(rng.randint(3, 6)):
        heading = f"{rng.choice(TOPICS[topic]).title()} rules {s + 1}"
        paragraphs = [
            " ".join(_sentence(rng, topic) for _ in range(rng.randint(2, 4))) for _ in range(rng.randint(2, 4))
        ]
        sections.append((heading, paragraphs))
    return title, sections


def _markdown(title, sections) -> str:
    out = [f"# {title}\n"]
    for heading, paragraphs in sections:
        out.append(f"## {heading}\n")
        out.extend(p + "\n" for p in paragraphs)
    return "\n".join(out)


def _text(title, sections) -> str:
    return title + "\n\n" + "\n\n".join("\n\n".join([heading, *paragraphs]) for heading, paragraphs in sections) + "\n"


def _html(title, sections) -> str:
    body = "".join(f"<h2>{h}</h2>" + "".join(f"<p>{p}</p>" for p in ps) for h, ps in sections)
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head><body><nav>Home | Policies"
        f"</nav><main><h1>{title}</h1>{body}</main><footer>Intranet</footer></body></html>"
    )


def _pdf(path: Path, title, sections) -> None:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title(title)
    pdf.set_auto_page_break(True, 20)
    pdf.set_font("Helvetica", "", 10)
    for heading, paragraphs in sections:
        pdf.add_page()
        pdf.start_section(heading)
        pdf.set_font("Helvetica", "B", 13)
        pdf.multi_cell(0, 7, heading, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 10)
        for p in paragraphs:
            pdf.multi_cell(0, 5, p, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(3)
    pdf.output(str(path))


def _docx(path: Path, title, sections) -> None:
    import docx

    document = docx.Document()
    document.add_heading(title, 0)
    for heading, paragraphs in sections:
        document.add_heading(heading, 1)
        for p in paragraphs:
            document.add_paragraph(p)
    document.save(str(path))


FORMATS = [("md", 0.50), ("txt", 0.15), ("html", 0.15), ("pdf", 0.10), ("docx", 0.10)]


def write_file(path: Path, title, sections) -> None:
    kind = path.suffix[1:]
    if kind == "md":
        path.write_text(_markdown(title, sections), encoding="utf-8")
    elif kind == "txt":
        path.write_text(_text(title, sections), encoding="utf-8")
    elif kind == "html":
        path.write_text(_html(title, sections), encoding="utf-8")
    elif kind == "pdf":
        _pdf(path, title, sections)
    else:
        _docx(path, title, sections)


def make_corpus(folder: Path, n: int, seed: int = 0) -> list[Path]:
    """Write n documents under `folder` (100 a sub-folder); returns their paths. Skipped when already there."""
    folder = Path(folder)
    marker = folder / f".complete-{n}-{seed}"
    rng = random.Random(seed)
    kinds = [k for k, share in FORMATS for _ in range(round(share * 100))]
    paths = [folder / f"part{i // 100:03d}" / f"doc{i:05d}.{kinds[i % 100]}" for i in range(n)]
    if marker.exists():
        return paths
    for i, path in enumerate(paths):
        path.parent.mkdir(parents=True, exist_ok=True)
        write_file(path, *_document(rng, i))
    marker.write_text("done\n")
    return paths


def change_files(paths: list[Path], share: float, seed: int = 1) -> list[Path]:
    """Rewrite `share` of the files with new content (same names and formats); returns the changed ones."""
    rng = random.Random(seed)
    chosen = rng.sample(paths, max(1, round(share * len(paths))))
    for i, path in enumerate(chosen):
        write_file(path, *_document(rng, 100_000 + i))
    return chosen
