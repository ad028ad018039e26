"""The sample folder: the staff handbook of Larkspur Analytics, a fictional data consultancy, written by the project
in mixed formats: Markdown pages, an HTML page, a PDF and a Word file (`handbook/`, shipped with the package).

The PDF and the Word file are made from the text below by `python -m augmenter.documents.handbook` (fpdf2 for the
PDF, with a bookmark per section; python-docx for the Word file, with heading styles and a table); the committed
files are what that wrote. `QUESTIONS` are the demo's and the benchmark's questions: ones a single file answers,
ones only two files together answer, and ones the handbook does not answer ("I don't know" expected).
"""

from __future__ import annotations

import sys
from importlib import resources
from pathlib import Path
from typing import Any

TITLE_PDF = "Travel and Expenses Policy"
PDF_PAGES = [  # one page each: (section title, paragraphs)
    (
        "Booking travel",
        [
            "Book all business travel through Nordic Trips, our travel agency, at least 14 days before you leave. "
            "Trains are the first choice for journeys shorter than four hours.",
            "Flights are booked in economy class. Business class is allowed only for flights longer than 6 hours, "
            "and it needs your manager's approval when you book.",
        ],
    ),
    (
        "Hotels and daily allowance",
        [
            "Hotel rooms may cost up to 140 euros per night. In London, Paris and Zurich the limit is 210 euros per "
            "night.",
            "On business trips abroad you receive a daily allowance of 45 euros for meals. Within Estonia the daily "
            "allowance is 25 euros.",
        ],
    ),
    (
        "Claiming expenses",
        [
            "Submit your expense claims in Ledgerly within 30 days of the expense. Attach a receipt for every expense "
            "over 20 euros.",
            "Your line manager approves expense claims. A claim of more than 1,000 euros also needs the approval of "
            "the Finance Director.",
            "Approved expenses are paid with your next monthly salary.",
        ],
    ),
]

TITLE_DOCX = "Onboarding Checklist"
DOCX_SECTIONS = [  # (heading, paragraphs, bullet points)
    (
        "Before your first day",
        [
            "The IT helpdesk prepares your laptop and your accounts. Your manager names a buddy, a colleague who "
            "answers your questions during the first month."
        ],
        [],
    ),
    (
        "Your first day",
        ["Arrive at 9:30. Pick up your badge at reception, then meet your buddy, who shows you around the office."],
        [
            "Set up two-factor authentication for email and Slack.",
            "Log in to Timeflow, where you book leave and record sick days.",
            "Log in to Ledgerly, where you claim expenses.",
        ],
    ),
    (
        "Your first week",
        [
            "Take the security awareness training and read the IT security rules.",
            "Meet the People team for a welcome session about leave, benefits and the remote work policy.",
        ],
        [],
    ),
    ("Probation", ["Your probation period lasts 4 months. It ends with a review meeting with your manager."], []),
]
DOCX_TABLE = [
    ("Day", "Who you meet"),
    ("Monday", "Your buddy and your manager"),
    ("Tuesday", "The IT helpdesk"),
    ("Wednesday", "The People team"),
]

# kind: "single" (one file answers), "cross" (two files together), "none" (not in the handbook).
# answer: alternatives, any of which in the reply counts as right; sources: (file, page) that hold the answer.
QUESTIONS: list[dict[str, Any]] = [
    {
        "q": "How many days of annual leave do full-time employees get?",
        "kind": "single",
        "answer": ["27"],
        "sources": [["people/leave.md", None]],
    },
    {
        "q": "Until when can I use leave days carried over from last year?",
        "kind": "single",
        "answer": ["31 March", "March 31"],
        "sources": [["people/leave.md", None]],
    },
    {
        "q": "From which day of sickness do I need a doctor's certificate?",
        "kind": "single",
        "answer": ["fourth", "4th", "day 4"],
        "sources": [["people/leave.md", None]],
    },
    {
        "q": "How long is the parental leave of the birth parent?",
        "kind": "single",
        "answer": ["16 weeks"],
        "sources": [["people/leave.md", None]],
    },
    {
        "q": "How big is the learning budget per year?",
        "kind": "single",
        "answer": ["800"],
        "sources": [["people/benefits.md", None]],
    },
    {
        "q": "What are the core hours when working from home?",
        "kind": "single",
        "answer": ["10:00", "10 am"],
        "sources": [["ways-of-working/remote-work.md", None]],
    },
    {
        "q": "How much is the home office allowance?",
        "kind": "single",
        "answer": ["400"],
        "sources": [["ways-of-working/remote-work.md", None]],
    },
    {
        "q": "What is the hotel limit per night in London?",
        "kind": "single",
        "answer": ["210"],
        "sources": [["travel-and-expenses.pdf", 2]],
    },
    {
        "q": "When is business class allowed on a flight?",
        "kind": "single",
        "answer": ["6 hours", "six hours"],
        "sources": [["travel-and-expenses.pdf", 1]],
    },
    {
        "q": "Within how many days must I submit an expense claim?",
        "kind": "single",
        "answer": ["30 days"],
        "sources": [["travel-and-expenses.pdf", 3]],
    },
    {
        "q": "What are the opening hours of the Tallinn office?",
        "kind": "single",
        "answer": ["7:00", "7 am"],
        "sources": [["office-guide.html", None]],
    },
    {
        "q": "Where is the fire assembly point?",
        "kind": "single",
        "answer": ["car park"],
        "sources": [["office-guide.html", None]],
    },
    {
        "q": "How long does the probation period last?",
        "kind": "single",
        "answer": ["4 months", "four months"],
        "sources": [["onboarding.docx", None]],
    },
    {
        "q": "How long must a password be?",
        "kind": "single",
        "answer": ["14"],
        "sources": [["ways-of-working/it-security.md", None]],
    },
    {
        "q": "How many months after joining does the health insurance start?",
        "kind": "cross",
        "answer": ["4 months", "four months"],
        "sources": [["people/benefits.md", None], ["onboarding.docx", None]],
    },
    {
        "q": "Who must approve an expense claim of 1,500 euros?",
        "kind": "cross",
        "answer": ["Marta Kask"],
        "sources": [["travel-and-expenses.pdf", 3], ["welcome.md", None]],
    },
    {
        "q": "What email address do I write to for approval to work from abroad?",
        "kind": "cross",
        "answer": ["people@larkspur.example"],
        "sources": [["ways-of-working/remote-work.md", None], ["welcome.md", None]],
    },
    {
        "q": "On which floor do new employees pick up their badge?",
        "kind": "cross",
        "answer": ["second floor"],
        "sources": [["onboarding.docx", None], ["office-guide.html", None]],
    },
    {"q": "Does Larkspur provide company cars?", "kind": "none", "answer": [], "sources": []},
    {"q": "What is the dress code in the office?", "kind": "none", "answer": [], "sources": []},
    {"q": "How many vacation days do interns get?", "kind": "none", "answer": [], "sources": []},
    {"q": "What is the salary of a junior analyst?", "kind": "none", "answer": [], "sources": []},
]
DEMO_SCRIPT = [
    "How many days of annual leave do full-time employees get?",
    "What is the hotel limit per night in London?",
    "Who must approve an expense claim of 1,500 euros?",
    "What is the dress code in the office?",
]


def judge_answer(question: dict, memory) -> dict:
    """How the checked system handled a question: an answerable one is `correct` when the reply holds one of its
    answers and is no "I don't know", and `cited` when a cited source is one of its files (and page, for a PDF); an
    unanswerable one should be `refused` (outcome "abstained", or a reply that only says it does not know)."""
    from augmenter.verification.splitter import is_abstention, split_sentences

    reply = memory.response or ""
    refused = memory.outcome == "abstained" or all(is_abstention(s) for s in (split_sentences(reply) or [reply]))
    sources, _ = memory.sources()
    cited = [(r.location.path, r.location.page) for r in sources if r.location is not None]
    wanted = [tuple(s) for s in question["sources"]]
    answerable = question["kind"] != "none"
    correct = answerable and not refused and any(a.lower() in reply.lower() for a in question["answer"])
    right_place = any(
        path == w_path and (w_page is None or page == w_page) for path, page in cited for w_path, w_page in wanted
    )
    return {
        "answerable": answerable,
        "correct": correct,
        "cited": right_place,
        "refused": refused,
        "cited_files": [p + (f", page {pg}" if pg else "") for p, pg in cited],
        "cites_both_files": len({w[0] for w in wanted} & {c[0] for c in cited}) == 2 if len(wanted) == 2 else None,
        "handled": (correct and right_place) if answerable else refused,
    }


def handbook_dir() -> Path:
    """The sample folder, as installed with the package."""
    return Path(str(resources.files("augmenter.documents") / "handbook"))


def write_pdf(path: Path) -> None:
    from datetime import datetime, timezone

    from augmenter.extras import require

    require("dev", "regenerating the sample handbook's PDF", ("fpdf",))
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_title(TITLE_PDF)
    pdf.set_author("Larkspur Analytics (fictional), written by augmenter")
    pdf.set_creation_date(datetime(2024, 1, 1, tzinfo=timezone.utc))
    pdf.set_margins(25, 25, 25)
    pdf.set_auto_page_break(False)  # one page per section, the page number at its foot
    for n, (section, paragraphs) in enumerate(PDF_PAGES, 1):
        pdf.add_page()
        if n == 1:
            pdf.set_font("Helvetica", "B", 18)
            pdf.multi_cell(0, 10, TITLE_PDF, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(4)
        pdf.start_section(section)
        pdf.set_font("Helvetica", "B", 14)
        pdf.multi_cell(0, 8, section, new_x="LMARGIN", new_y="NEXT")
        pdf.ln(2)
        pdf.set_font("Helvetica", "", 11)
        for paragraph in paragraphs:
            pdf.multi_cell(0, 6, paragraph, new_x="LMARGIN", new_y="NEXT")
            pdf.ln(4)
        pdf.set_y(-20)
        pdf.set_font("Helvetica", "", 9)
        pdf.cell(0, 6, f"Page {n} of {len(PDF_PAGES)}", align="C")
    pdf.output(str(path))


def write_docx(path: Path) -> None:
    import datetime

    import docx

    document = docx.Document()
    document.core_properties.title = TITLE_DOCX
    document.core_properties.author = "Larkspur Analytics (fictional), written by augmenter"
    stamp = datetime.datetime(2024, 1, 1)
    document.core_properties.created = document.core_properties.modified = stamp
    document.add_heading(TITLE_DOCX, 0)
    document.add_paragraph("Welcome to Larkspur Analytics. This checklist walks you through your first weeks.")
    for heading, paragraphs, bullets in DOCX_SECTIONS:
        document.add_heading(heading, 1)
        for paragraph in paragraphs:
            document.add_paragraph(paragraph)
        for bullet in bullets:
            document.add_paragraph(bullet, style="List Bullet")
        if heading == "Your first week":
            table = document.add_table(rows=0, cols=2)
            for row in DOCX_TABLE:
                cells = table.add_row().cells
                cells[0].text, cells[1].text = row
    document.save(str(path))


def build(directory: Path) -> list[Path]:
    """Write the PDF and the Word file of the handbook into `directory`."""
    targets = [directory / "travel-and-expenses.pdf", directory / "onboarding.docx"]
    write_pdf(targets[0])
    write_docx(targets[1])
    return targets


if __name__ == "__main__":
    for written in build(Path(sys.argv[1]) if len(sys.argv) > 1 else handbook_dir()):
        print(f"wrote {written} ({written.stat().st_size} bytes)")
