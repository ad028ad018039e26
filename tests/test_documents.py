"""Your own documents: every format read from real files (made here with fpdf2 and python-docx, or the
shipped handbook), chunks that keep their file, page, headings and span, the persisted incremental index (add,
change, delete, touch, a run killed half-way), every bad file as one warning line while the rest is indexed, and
`augmenter index` / `--status`."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from augmenter.cli.main import main
from augmenter.documents import IndexStore, Unreadable, load_documents, read_document, split_document, update_index
from augmenter.documents.handbook import DOCX_SECTIONS, PDF_PAGES, QUESTIONS, TITLE_PDF, build, handbook_dir
from augmenter.documents.model import Block, Document
from augmenter.errors import InputError

HANDBOOK = handbook_dir()


# ---- files of every format, made here --------------------------------------------------------------------------
def make_pdf(
    path: Path,
    pages: list[tuple[str, str]],
    title: str = "Made Here",
    outline: bool = True,
    user_password: str | None = None,
    owner_password: str | None = None,
) -> Path:
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_title(title)
    pdf.set_auto_page_break(False)
    if user_password is not None or owner_password is not None:
        pdf.set_encryption(owner_password=owner_password or "owner", user_password=user_password or "")
    for heading, text in pages:
        pdf.add_page()
        if outline:
            pdf.start_section(heading)
        pdf.set_font("Helvetica", "B", 14)
        pdf.multi_cell(0, 8, heading, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 11)
        pdf.multi_cell(0, 6, text, new_x="LMARGIN", new_y="NEXT")
    pdf.output(str(path))
    return path


def make_scanned_pdf(path: Path) -> Path:
    """A PDF whose pages hold only drawings: no text layer, as a scan without OCR."""
    from fpdf import FPDF

    pdf = FPDF()
    for _ in range(2):
        pdf.add_page()
        pdf.rect(20, 20, 100, 60, style="F")
    pdf.output(str(path))
    return path


def make_docx(path: Path) -> Path:
    import docx

    document = docx.Document()
    document.add_heading("Garden Rules", 0)
    document.add_heading("Watering", 1)
    document.add_paragraph("Water the tomatoes every evening at 19:00.")
    document.add_heading("Tools", 1)
    document.add_paragraph("The shed key hangs behind the kitchen door.")
    table = document.add_table(rows=0, cols=2)
    for row in (("Tool", "Shelf"), ("Rake", "top"), ("Spade", "bottom")):
        cells = table.add_row().cells
        cells[0].text, cells[1].text = row
    document.save(str(path))
    return path


MARKDOWN = """\
---
title: Kitchen Manual
---
# Ignored heading

The kitchen opens at 06:30.

## Oven

Preheat the oven to **220 degrees** for [bread](bread.md).

### Cleaning

Clean the oven every Friday.

| Part | Cleaner |
|---|---|
| Door | glass spray |
"""
HTML = """<html><head><title>Boat Guide</title><script>document.write('evil')</script>
<link rel="stylesheet" href="http://192.0.2.1/never-fetched.css"></head>
<body><nav>menu | links</nav><h1>Boat Guide</h1><p>Life jackets are under the <b>front seat</b>.</p>
<h2>Engine</h2><ul><li>Check the oil before every trip.</li><li>Fuel is stored ashore.</li></ul>
<div hidden>invisible text</div><img src="http://192.0.2.1/pixel.png" alt=""></body></html>"""


@pytest.fixture
def folder(tmp_path) -> Path:
    """A folder with one good file of every format, nested, plus a hidden file and an unsupported one."""
    root = tmp_path / "docs"
    (root / "manuals" / "deep").mkdir(parents=True)
    (root / "kitchen.md").write_text(MARKDOWN, encoding="utf-8")
    (root / "manuals" / "boat.html").write_text(HTML, encoding="utf-8")
    make_pdf(
        root / "manuals" / "deep" / "bikes.pdf",
        [("Tyres", "Pump the tyres to 4 bar every week."), ("Chains", "Oil the chain once a month.")],
        "Bike Care",
    )
    make_docx(root / "garden.docx")
    (root / "notes.txt").write_text("Plain notes.\n\nThe wifi password is on the fridge.\n", encoding="utf-8")
    (root / ".secret.md").write_text("# Hidden\n\nnever indexed\n", encoding="utf-8")
    (root / "photo.png").write_bytes(b"\x89PNG\r\n\x1a\n")
    return root


def quiet(_line):
    pass


# ---- readers ------------------------------------------------------------------------------------------------------
def test_markdown_headings_front_matter_tables_and_source_spans():
    text = MARKDOWN
    doc = read_document("kitchen.md", text.encode())
    assert doc.title == "Kitchen Manual" and doc.format == "markdown"
    by_text = {b.text: b for b in doc.blocks}
    assert by_text["Preheat the oven to 220 degrees for bread."].heading == ("Ignored heading", "Oven")
    assert by_text["Clean the oven every Friday."].heading == ("Ignored heading", "Oven", "Cleaning")
    assert "Part: Door; Cleaner: glass spray" in by_text
    spans = {b.text: text[b.start : b.end] for b in doc.blocks}  # the span is the block's own lines in the file
    assert (
        spans["Preheat the oven to 220 degrees for bread."]
        == "Preheat the oven to **220 degrees** for [bread](bread.md)."
    )
    assert spans["Part: Door; Cleaner: glass spray"] == "| Door | glass spray |"
    assert spans["The kitchen opens at 06:30."] == "The kitchen opens at 06:30."


def test_html_is_read_as_it_is_on_disk(monkeypatch):
    import socket

    def no_network(*args, **kwargs):
        raise AssertionError("the HTML reader opened a connection")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    doc = read_document("boat.html", HTML.encode())
    texts = [b.text for b in doc.blocks]
    assert doc.title == "Boat Guide" and texts[0] == "Life jackets are under the front seat."
    assert [b.heading for b in doc.blocks][1:] == [("Engine",), ("Engine",)]
    joined = " ".join(texts)
    assert "evil" not in joined and "menu" not in joined and "invisible" not in joined


def test_pdf_pages_and_headings_from_its_bookmarks(tmp_path):
    doc = read_document(
        "bikes.pdf",
        make_pdf(
            tmp_path / "b.pdf", [("Tyres", "Pump to 4 bar."), ("Chains", "Oil monthly.")], "Bike Care"
        ).read_bytes(),
    )
    assert doc.title == "Bike Care" and doc.pages == 2
    assert [(b.page, b.heading, b.text) for b in doc.blocks] == [
        (1, ("Tyres",), "Pump to 4 bar."),
        (2, ("Chains",), "Oil monthly."),
    ]


def test_docx_headings_title_and_table_rows(tmp_path):
    doc = read_document("garden.docx", make_docx(tmp_path / "g.docx").read_bytes())
    assert doc.title == "Garden Rules" and doc.format == "word"
    assert [(b.heading, b.text) for b in doc.blocks] == [
        (("Watering",), "Water the tomatoes every evening at 19:00."),
        (("Tools",), "The shed key hangs behind the kitchen door."),
        (("Tools",), "Tool | Shelf"),
        (("Tools",), "Tool: Rake; Shelf: top"),
        (("Tools",), "Tool: Spade; Shelf: bottom"),
    ]


def test_the_shipped_handbook_reads_in_every_format():
    formats = {}
    for path in sorted(HANDBOOK.rglob("*.*")):
        doc = read_document(path.name, path.read_bytes())
        formats[path.suffix] = doc
        assert doc.blocks and not doc.notes, path
    assert set(formats) == {".md", ".html", ".pdf", ".docx"}
    pdf = formats[".pdf"]
    assert pdf.title == TITLE_PDF and pdf.pages == len(PDF_PAGES)
    assert [b.heading for b in pdf.blocks] == [(section,) for section, _ in PDF_PAGES]
    assert [h for h, _, _ in DOCX_SECTIONS] == list(
        dict.fromkeys(b.heading[0] for b in formats[".docx"].blocks if b.heading)
    )


def test_the_committed_pdf_and_word_file_are_what_the_generator_writes(tmp_path):
    pytest.importorskip("fpdf", reason="fpdf2 (augmenter[dev]) regenerates the sample PDF")
    for made in build(tmp_path):
        shipped = HANDBOOK / made.name
        fresh, committed = read_document(made.name, made.read_bytes()), read_document(made.name, shipped.read_bytes())
        assert (fresh.title, [(b.text, b.heading, b.page) for b in fresh.blocks]) == (
            committed.title,
            [(b.text, b.heading, b.page) for b in committed.blocks],
        )


def test_every_handbook_answer_is_in_the_files_it_names():
    texts = {p.relative_to(HANDBOOK).as_posix(): read_document(p.name, p.read_bytes()) for p in HANDBOOK.rglob("*.*")}
    kinds = {q["kind"] for q in QUESTIONS}
    assert kinds == {"single", "cross", "none"}
    for question in QUESTIONS:
        for rel, page in question["sources"]:
            assert rel in texts and (page is None or page <= (texts[rel].pages or 0))
        if question["kind"] == "single":
            rel, page = question["sources"][0]
            blocks = [b.text for b in texts[rel].blocks if page is None or b.page == page]
            assert any(a.lower() in " ".join(blocks).lower() for a in question["answer"]), question["q"]


# ---- chunks -------------------------------------------------------------------------------------------------------
def test_chunks_keep_to_their_size_never_cross_a_heading_or_page_and_overlap_by_whole_sentences():
    sentences = [f"Sentence number {i} says something about topic {i % 7}." for i in range(60)]
    blocks = [
        Block(" ".join(sentences[:30]), ("A",), 1, 0, 100),
        Block(" ".join(sentences[30:]), ("A",), 2, 0, 90),
        Block("A short tail.", ("B",), 2, 95, 110),
    ]
    chunks = split_document(Document("T", blocks, "pdf"), words=40, overlap=10)
    assert all(len(c.text.split()) <= 40 for c in chunks)
    assert {(c.heading, c.page) for c in chunks} == {(("A",), 1), (("A",), 2), (("B",), 2)}
    page1 = [c for c in chunks if c.page == 1]
    for before, after in zip(page1, page1[1:]):  # the next chunk starts with the last sentence of the one before
        assert after.text.split(". ")[0] + "." == before.text.split(". ")[-1] or before.text.endswith(
            after.text.split(". ")[0] + "."
        )
    covered = " ".join(c.text for c in page1)
    assert all(s in covered for s in sentences[:30])
    assert chunks[-1].text == "A short tail." and (chunks[-1].start, chunks[-1].end) == (95, 110)


def test_a_sentence_longer_than_a_chunk_is_cut_into_overlapping_windows():
    words = [f"w{i}" for i in range(100)]
    chunks = split_document(Document("T", [Block(" ".join(words), (), None, 0, 500)], "text"), words=30, overlap=5)
    assert all(len(c.text.split()) <= 30 for c in chunks)
    assert chunks[1].text.split()[0] == "w25" and chunks[-1].text.split()[-1] == "w99"
    with pytest.raises(ValueError):
        split_document(Document("T", [], "text"), words=10, overlap=10)


# each chunk's own span: the windows of a long paragraph have their own offsets
_VOCAB = [
    "a",
    "an",
    "oven",
    "bread",
    "is",
    "warm",
    "door",
    "kept",
    "shut",
    "on",
    "friday,",
    "so",
    "it's",
    "well-made",
    "twenty",
    "degrees",
    "x",
    "glass",
]
_ENDS = [".", "!", "?", '."', ".)"]
_SEPARATORS = [" ", " ", " ", "  ", "\t", "\n", " \n", "\n  "]  # inside a paragraph: no blank line, no markup
_sections = st.lists(
    st.lists(
        st.lists(
            st.tuples(
                st.lists(st.sampled_from(_VOCAB), min_size=1, max_size=40), st.sampled_from(_ENDS), st.booleans()
            ),
            min_size=1,
            max_size=3,
        ),
        min_size=1,
        max_size=3,
    ),
    min_size=1,
    max_size=4,
)


def _words_of(sentence) -> list[str]:
    """A generated sentence's words: the first capitalised (after an opening bracket, sometimes), an end mark."""
    words, end, bracket = sentence
    words = [("(" if bracket else "") + words[0].capitalize(), *words[1:]]
    words[-1] += end
    return words


def _render(sections, rnd, paged: bool):
    """(the text(s) the spans are in, the blocks, each sentence's words with their (page, start, end)): as a
    Markdown file (a heading per section) or as pages of plain paragraphs (a page may begin at any paragraph)."""
    from augmenter.documents.readers.text import paragraphs

    texts: dict = {}
    page = 1 if paged else None
    out = "" if paged else "# The title\n\n"
    sentences, blocks = [], []
    for number, section in enumerate(sections, 1):
        if not paged:
            out += f"## Section {number}\n\n"
        for paragraph in section:
            if paged and out and rnd.random() < 0.4:  # a new page
                texts[page], out, page = out, "", page + 1
            start = len(out)
            for sentence in paragraph:
                placed = []
                for word in _words_of(sentence):
                    if placed or out[start:]:
                        out += rnd.choice(_SEPARATORS)
                    placed.append((word, page, len(out), len(out) + len(word)))
                    out += word
                sentences.append(((f"Section {number}",), placed))
            if paged:
                ((a, b),) = paragraphs(out[start:], start)
                blocks.append(Block(" ".join(out[a:b].split()), (f"Section {number}",), page, a, b))
            out += rnd.choice(["\n\n", "\n \n", "\n\n\n"])
    texts[page] = out
    if paged:
        return texts, blocks, sentences
    document = read_document("fuzz.md", out.encode())
    return out, document.blocks, sentences


def _check_spans(chunks, source, blocks, sentences, words: int, overlap: int) -> None:
    text_of = (lambda page: source[page]) if isinstance(source, dict) else (lambda page: source)

    def norm(s):
        return " ".join(s.split())

    for chunk in chunks:  # the span reproduces the chunk's text, up to whitespace
        assert norm(text_of(chunk.page)[chunk.start : chunk.end]) == norm(chunk.text), chunk
        assert len(chunk.text.split()) <= words
        # never across a heading or a page: every block the span touches is of the chunk's heading and page
        touched = [b for b in blocks if b.page == chunk.page and b.start < chunk.end and chunk.start < b.end]
        assert touched and all((b.heading, b.page) == (chunk.heading, chunk.page) for b in touched), chunk
    for before, after in zip(chunks, chunks[1:]):  # each chunk brings text of its own
        if (before.heading, before.page) == (after.heading, after.page):
            assert before.start < after.start and before.end < after.end, (before, after)
    starts = {(c.page, c.start): c for c in chunks}
    step = words - overlap
    for heading, placed in sentences:  # a sentence longer than a chunk: windows of `words` that overlap by `overlap`
        if len(placed) <= words:
            continue
        windows = []
        for k in range(0, len(placed), step):
            _, page, start, _ = placed[k]
            chunk = starts[(page, start)]  # a window starts a chunk, at its own first word
            window = [w for w, *_ in placed[k : k + words]]
            assert chunk.heading == heading and chunk.text.split()[: len(window)] == window
            if k + words <= len(placed):  # a whole window is a chunk of its own, ending at its own last word
                assert chunk.end == placed[k + words - 1][3]
            windows.append(chunk)
            if k + words >= len(placed):
                break
        assert len(windows) >= 2
        for before, after in zip(windows, windows[1:]):
            shared = text_of(after.page)[after.start : before.end].split() if after.start < before.end else []
            assert len(shared) == overlap and before.start < after.start


@settings(max_examples=150, deadline=None)
@given(_sections, st.integers(3, 12), st.floats(0, 0.99), st.randoms(use_true_random=False), st.booleans())
def test_every_chunk_span_is_its_own_text_in_the_file_or_page(sections, words, share, rnd, paged):
    overlap = int(share * words)
    source, blocks, sentences = _render(sections, rnd, paged)
    chunks = split_document(Document("T", blocks, "pdf" if paged else "markdown"), words, overlap, text=source)
    _check_spans(chunks, source, blocks, sentences, words, overlap)


def test_the_windows_of_a_1000_word_paragraph_have_their_own_increasing_offsets():
    words = [f"word{i}" for i in range(1000)]
    text = (
        "A heading line\n\n"
        + "".join(w + ("\n" if i % 13 == 12 else "  " if i % 7 == 6 else " ") for i, w in enumerate(words)).rstrip()
        + "\n"
    )
    document = read_document("long.txt", text.encode())
    for chunks in (
        split_document(document, 200, 40, text=text),  # as the index does
        split_document(
            Document("T", [Block(" ".join(words), (), None, 10, 10 + len(" ".join(words)))], "word"), 200, 40
        ),
    ):  # a block that is its span verbatim: no text needed
        windows = chunks[-6:] if len(chunks) == 7 else chunks
        assert [c.text.split()[0] for c in windows] == ["word0", "word160", "word320", "word480", "word640", "word800"]
        starts = [c.start for c in windows]
        assert starts == sorted(set(starts)) and all(b.end > a.end for a, b in zip(windows, windows[1:]))
    chunks = split_document(document, 200, 40, text=text)
    assert chunks[0].text == "A heading line" and (chunks[0].start, chunks[0].end) == (0, 14)
    for chunk in chunks:
        assert " ".join(text[chunk.start : chunk.end].split()) == chunk.text
    for before, after in zip(chunks[1:], chunks[2:]):
        assert len(text[after.start : before.end].split()) == 40


def test_chunks_keep_closing_quotes_and_markdown_windows_start_at_their_word():
    said = 'He said "Stop here." Then he left (at noon.) And that was all.'
    chunks = split_document(Document("T", [Block(said, (), None, 0, len(said))], "word"), words=5, overlap=0)
    assert [c.text for c in chunks] == ['He said "Stop here."', "Then he left (at noon.)", "And that was all."]
    assert [said[c.start : c.end] for c in chunks] == [c.text for c in chunks]
    markdown = "# T\n\nThe oven is **very hot** so keep [the door](door.md) shut during every bake.\n"
    chunks = split_document(read_document("m.md", markdown.encode()), words=5, overlap=2, text=markdown)
    assert [c.text for c in chunks] == [
        "The oven is very hot",
        "very hot so keep the",
        "keep the door shut during",
        "shut during every bake.",
    ]
    assert [markdown[c.start : c.end] for c in chunks] == [
        "The oven is **very hot",
        "very hot** so keep [the",
        "keep [the door](door.md) shut during",
        "shut during every bake.",
    ]


# ---- the index ------------------------------------------------------------------------------------------------------
def test_a_folder_of_every_format_is_indexed_with_citable_chunks(folder, tmp_path):
    report = update_index([folder], tmp_path / "index", warn=quiet)
    assert report.documents == 5 and not report.skipped and report.unsupported == {".png": 1} and report.hidden == 1
    kb = load_documents(str(folder), str(tmp_path / "index"), update=False)
    by_file = {}
    for s in kb.snippets:
        by_file.setdefault(s.location.path, []).append(s)
    assert set(by_file) == {"kitchen.md", "manuals/boat.html", "manuals/deep/bikes.pdf", "garden.docx", "notes.txt"}
    tyres = next(s for s in by_file["manuals/deep/bikes.pdf"] if "4 bar" in s.text)
    assert tyres.location.page == 1 and tyres.location.heading == ["Bike Care", "Tyres"]
    assert tyres.entity_name == "Bike Care > Tyres" and tyres.id == "manuals/deep/bikes.pdf#1"
    assert tyres.location.label() == "manuals/deep/bikes.pdf, page 1, Bike Care > Tyres"
    oven = next(s for s in by_file["kitchen.md"] if "220" in s.text)
    assert oven.location.heading == ["Kitchen Manual", "Ignored heading", "Oven"]
    assert MARKDOWN[oven.location.start : oven.location.end].startswith("Preheat the oven")
    names = {e.name for e in kb.entities}
    assert names == {"Kitchen Manual", "Boat Guide", "Bike Care", "Garden Rules", "Notes"}
    # retrieval indexes the title and headings too: "tyres" is only a heading of the PDF
    from augmenter.knowledge import BM25sRetriever, KnowledgeConsolidator

    consolidator = KnowledgeConsolidator(kb, BM25sRetriever(), k=1, opinions=False)
    assert consolidator.retrieve("How hard should tyres be pumped?")[1][0].id == tyres.id


def test_the_index_is_reused_at_start_up_from_bm25s_own_files(folder, tmp_path, monkeypatch):
    from augmenter.knowledge import BM25sRetriever, KnowledgeConsolidator

    update_index([folder], tmp_path / "index", warn=quiet)
    kb = load_documents(str(folder), str(tmp_path / "index"))
    assert (kb.generation.bm25_dir / "params.index.json").exists()
    monkeypatch.setattr(BM25sRetriever, "index", lambda self, texts: pytest.fail("indexed again at start-up"))
    consolidator = KnowledgeConsolidator(kb, BM25sRetriever(), k=2, opinions=False)
    assert consolidator.retrieve("When does the kitchen open?")[1][0].location.path == "kitchen.md"
    other = BM25sRetriever(k1=1.2)  # other BM25 parameters than the saved index's: indexed in memory, same texts
    assert not other.load(kb.generation.bm25_dir, len(kb.snippets))


def test_an_update_reads_only_added_and_changed_files_and_drops_deleted_ones(folder, tmp_path, monkeypatch):
    index = tmp_path / "index"
    update_index([folder], index, warn=quiet)
    read = []
    import augmenter.documents.indexer as indexer

    real = indexer.read_document
    monkeypatch.setattr(indexer, "read_document", lambda name, data: read.append(name) or real(name, data))
    (folder / "new.md").write_text("# New Page\n\nThe printer is in room 4.\n", encoding="utf-8")
    (folder / "notes.txt").write_text("The wifi password changed: ask the office manager.\n", encoding="utf-8")
    (folder / "garden.docx").unlink()
    os.utime(folder / "kitchen.md", None)  # touched, not changed: hashed, not read again
    report = update_index([folder], index, warn=quiet)
    assert sorted(read) == ["new.md", "notes.txt"]
    assert (report.added, report.changed, report.deleted) == (["new.md"], ["notes.txt"], ["garden.docx"])
    assert report.unchanged == 3 and report.written
    kb = load_documents(str(folder), str(index), update=False)
    texts = " ".join(s.text for s in kb.snippets)
    assert "room 4" in texts and "office manager" in texts and "fridge" not in texts and "tomatoes" not in texts
    read.clear()
    again = update_index([folder], index, warn=quiet)
    assert not read and not again.written and again.unchanged == 5


def test_the_updated_bm25_index_ranks_as_bm25s_does_from_scratch(folder, tmp_path):
    from augmenter.knowledge import BM25sRetriever

    index = tmp_path / "index"
    update_index([folder], index, warn=quiet)
    (folder / "extra.md").write_text("# Extra\n\nThe oven and the tyres are checked on Fridays.\n", encoding="utf-8")
    (folder / "notes.txt").unlink()
    update_index([folder], index, warn=quiet)  # kept chunks' term ids reused, new ones tokenised
    kb = load_documents(str(folder), str(index), update=False)
    saved, fresh = BM25sRetriever(), BM25sRetriever()
    assert saved.load(kb.generation.bm25_dir, len(kb.snippets))
    fresh.index(kb.search_texts)
    for query in ("oven Friday", "tyres pressure bar", "kitchen opens", "life jackets seat", "tomatoes water"):
        assert [r for r, _ in saved.search([query], 5)[0]] == [r for r, _ in fresh.search([query], 5)[0]]
        assert saved.scores(query) == pytest.approx(fresh.scores(query), rel=1e-5)


def test_dense_embeddings_are_cached_by_content_hash(folder, tmp_path, monkeypatch):
    pytest.importorskip("faiss", reason="dense retrieval needs augmenter[chat]")
    from augmenter.knowledge import DenseRetriever, KnowledgeConsolidator

    encoded = []
    real = DenseRetriever.encode
    monkeypatch.setattr(
        DenseRetriever,
        "encode",
        lambda self, texts, progress=False: encoded.extend(texts) or real(self, texts, progress),
    )
    index = tmp_path / "index"
    kb = load_documents(str(folder), str(index))
    KnowledgeConsolidator(kb, DenseRetriever(progress=False), k=2, opinions=False)
    assert len(encoded) == len(kb.snippets)
    encoded.clear()
    (folder / "notes.txt").write_text("The wifi password is taped under the router.\n", encoding="utf-8")
    kb = load_documents(str(folder), str(index))  # the update at start-up reads the changed file
    consolidator = KnowledgeConsolidator(kb, DenseRetriever(progress=False), k=2, opinions=False)
    assert encoded == [t for t in kb.search_texts if "router" in t]  # only the changed chunk is embedded again
    hits = consolidator.retrieve("where is the wifi password")[1]
    assert hits[0].location.path == "notes.txt"


def test_new_chunk_settings_read_every_file_again(folder, tmp_path):
    index = tmp_path / "index"
    first = update_index([folder], index, words=200, warn=quiet)
    second = update_index([folder], index, words=5, overlap=0, warn=quiet)
    assert len(second.changed) == 5 and second.chunks > first.chunks
    third = update_index([folder], index, warn=quiet)  # left unset: the index's own settings
    assert not third.written and third.chunks == second.chunks


# ---- the manifest and the update's steps ------------------------------------------------------------------------
CURRENT_MANIFEST = {  # as the indexer writes it (and the store adds its format)
    "root": "/srv/docs",
    "sources": ["/srv/docs"],
    "settings": {"words": 200, "overlap": 40, "reader_version": 3},
    "include": ["*.md"],
    "exclude": [],
    "documents": {
        "a.md": {
            "size": 10,
            "mtime_ns": 5,
            "sha": "f00",
            "format": "markdown",
            "title": "A",
            "pages": None,
            "chunks": 2,
            "words": 30,
            "notes": ["not UTF-8: read as cp1252"],
        }
    },
    "skipped": {
        "b.pdf": {"size": 3, "mtime_ns": 6, "sha": "ba4", "retry": True, "reason": "reading it needs pypdf"},
        "c.md": {"size": 4, "mtime_ns": 7, "reason": "cannot be read (Permission denied)"},
    },
    "scan_skipped": {"big.pdf": "too large (60 MB; the limit is 50 MB)"},
    "unsupported": {".png": 2},
    "hidden": 1,
    "built_at": "2025-01-01T00:00:00+0000",
    "bm25": {"k1": 1.5, "b": 0.75},
    "format": 2,
}


def test_the_manifest_reads_the_current_format_and_writes_it_back_key_for_key():
    from augmenter.documents.manifest import DocumentEntry, Manifest, Settings, SkippedEntry

    manifest = Manifest.from_json(CURRENT_MANIFEST)
    assert manifest.settings == Settings(200, 40, 3) and manifest.include == ["*.md"] and manifest.hidden == 1
    assert manifest.documents["a.md"] == DocumentEntry(
        10, 5, "f00", "markdown", "A", None, 2, 30, ["not UTF-8: read as cp1252"]
    )
    assert manifest.skipped == {
        "b.pdf": SkippedEntry(3, 6, "ba4", True, "reading it needs pypdf"),
        "c.md": SkippedEntry(4, 7, None, False, "cannot be read (Permission denied)"),
    }
    assert manifest.to_json() == {k: v for k, v in CURRENT_MANIFEST.items() if k != "format"}
    older = Manifest.from_json({"root": "/srv/docs", "documents": {}, "settings": {"words": 200, "overlap": 40}})
    assert older.settings.reader_version is None and older.skipped == {} and older.scan_skipped == {}


def test_the_manifest_an_update_writes_round_trips(folder, tmp_path):
    from augmenter.documents.manifest import Manifest

    update_index([folder], tmp_path / "index", warn=quiet)
    written = IndexStore(tmp_path / "index").current().manifest
    assert Manifest.from_json(written).to_json() == {k: v for k, v in written.items() if k != "format"}
    assert written["documents"]["kitchen.md"]["title"] == "Kitchen Manual" and written["settings"]["words"] == 200


def test_the_plan_names_the_files_to_read_and_a_settings_change_reads_them_all(folder, tmp_path):
    from augmenter.documents.indexer import Request, needs_writing, plan, read

    index = tmp_path / "index"
    update_index([folder], index, warn=quiet)
    store = IndexStore(index)
    unchanged = plan(store.current(with_chunks=False), Request([folder]))
    assert not unchanged.rebuild and not unchanged.to_read and len(unchanged.kept) == 5
    assert not needs_writing(unchanged, read(unchanged, progress=False))
    (folder / "notes.txt").write_text("The wifi password changed.\n", encoding="utf-8")
    (folder / "garden.docx").unlink()
    changed = plan(store.current(with_chunks=False), Request([folder]))
    assert [c.rel for c in changed.to_read] == ["notes.txt"] and changed.removed == ["garden.docx"]
    assert not changed.rebuild and not changed.is_new("notes.txt") and "notes.txt" not in changed.kept
    contents = read(changed, progress=False)
    assert contents.changed == ["notes.txt"] and not contents.added and contents.chunks["kitchen.md"] is None
    assert needs_writing(changed, contents)
    resized = plan(store.current(with_chunks=False), Request([folder], words=50, overlap=10))
    assert resized.rebuild and not resized.kept and len(resized.to_read) == 4
    assert (resized.settings.words, resized.settings.overlap) == (50, 10)
    assert all(chunks is not None for chunks in read(resized, progress=False).chunks.values())


KILLER = """
import os, signal, sys
import augmenter.documents.indexer as indexer
import augmenter.documents.store as store
from augmenter.documents import update_index
mode, folder, index = sys.argv[1:4]
def kill(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)
if mode == "reading":  # killed while reading the files
    real, seen = indexer.read_document, []
    def read(name, data):
        seen.append(name)
        if len(seen) == 2:
            kill()
        return real(name, data)
    indexer.read_document = read
elif mode == "assembled":  # killed after every file is read and the chunks assembled, before anything is written
    store.IndexStore.write = kill
elif mode == "half-written":  # killed in the new generation's write: chunks.jsonl and terms on disk, BM25 not yet
    indexer.save_bm25 = kill
else:  # "renamed": the new generation complete and renamed into place, killed before CURRENT names it
    real_write = store.write_atomic
    def write_atomic(path, data):
        if os.path.basename(path) == "CURRENT":
            kill()
        return real_write(path, data)
    store.write_atomic = write_atomic
update_index([folder], index, warn=lambda line: None)
"""


@pytest.mark.parametrize("mode", ["reading", "assembled", "half-written", "renamed"])
def test_a_run_killed_half_way_leaves_the_previous_index_usable(folder, tmp_path, mode):
    from augmenter.knowledge import BM25sRetriever

    index = tmp_path / "index"
    update_index([folder], index, warn=quiet)
    before = IndexStore(index).current()
    (folder / "notes.txt").write_text("Changed notes.\n", encoding="utf-8")
    (folder / "extra.md").write_text("# Extra\n\nMore text.\n", encoding="utf-8")
    (folder / "more.md").write_text("# More\n\nEven more text.\n", encoding="utf-8")
    killed = subprocess.run([sys.executable, "-c", KILLER, mode, str(folder), str(index)], capture_output=True)
    assert killed.returncode == -signal.SIGKILL, killed.stderr[-2000:]
    left = {p.name for p in index.iterdir()} - {".lock", "CURRENT", before.directory.name}
    if mode == "half-written":  # what the kill left: part of the new generation, aside
        (tmp,) = [index / name for name in left if name.endswith(".tmp")]
        assert {p.name for p in tmp.iterdir()} >= {"chunks.jsonl", "terms.json"}
        assert not (tmp / "manifest.json").exists() and not (tmp / "bm25").exists()
    elif mode == "renamed":  # a complete new generation beside the current one, which CURRENT still names
        assert left == {"gen-000002"} and (index / "gen-000002" / "manifest.json").exists()
    else:
        assert not left
    after = IndexStore(index).current()
    assert after.directory == before.directory and after.chunks == before.chunks
    kb = load_documents(str(folder), str(index), update=False)  # usable as it was
    assert "fridge" in " ".join(s.text for s in kb.snippets)
    assert BM25sRetriever().load(kb.generation.bm25_dir, len(kb.snippets))
    report = update_index([folder], index, warn=quiet)  # the next run completes the update and clears the debris
    assert sorted(report.added) == ["extra.md", "more.md"] and report.changed == ["notes.txt"]
    fresh = update_index([folder], tmp_path / "fresh", warn=quiet)  # the same as an index built from scratch
    done, scratch = IndexStore(index).current(), IndexStore(tmp_path / "fresh").current()
    assert done.chunks == scratch.chunks and done.manifest["documents"] == scratch.manifest["documents"]
    assert report.chunks == fresh.chunks
    kb = load_documents(str(folder), str(index), update=False)
    assert BM25sRetriever().load(kb.generation.bm25_dir, len(kb.snippets))
    # kept: the new current generation and the one current before it (not one the killed run left behind)
    assert {p.name for p in index.iterdir() if p.name != "embeddings"} == {
        ".lock",
        "CURRENT",
        before.directory.name,
        report.generation,
    }


def test_a_second_writer_waits_for_nobody_and_says_so(folder, tmp_path):
    index = tmp_path / "index"
    update_index([folder], index, warn=quiet)
    store = IndexStore(index)
    with store.lock() as held:
        assert held
        code = (
            "import sys; from augmenter.documents import update_index\n"
            "try:\n    update_index([sys.argv[1]], sys.argv[2], warn=lambda l: None, wait=False)\n"
            "except Exception as e:\n    print(type(e).__name__, e)"
        )
        out = subprocess.run([sys.executable, "-c", code, str(folder), str(index)], capture_output=True, text=True)
        assert out.stdout.startswith("IndexBusy another augmenter is updating the index")
        # a chat starting meanwhile uses the index as it is
        probe = (
            "import sys; from augmenter.documents import load_documents\n"
            "print(len(load_documents(sys.argv[1], sys.argv[2]).snippets))"
        )
        out = subprocess.run([sys.executable, "-c", probe, str(folder), str(index)], capture_output=True, text=True)
        assert int(out.stdout) == len(store.current().chunks)


# ---- bad files -------------------------------------------------------------------------------------------------------
def test_every_bad_file_is_one_warning_line_and_the_rest_is_indexed(folder, tmp_path):
    bad = {
        "locked.pdf": make_pdf(folder / "locked.pdf", [("Secret", "Hidden text.")], user_password="s3cret"),
        "broken.pdf": folder / "broken.pdf",
        "scanned.pdf": make_scanned_pdf(folder / "scanned.pdf"),
        "binary.txt": folder / "binary.txt",
        "empty.md": folder / "empty.md",
        "huge.txt": folder / "huge.txt",
        "fake.docx": folder / "fake.docx",
        "escape.md": folder / "escape.md",
    }
    (folder / "broken.pdf").write_bytes(b"%PDF-1.7\n1 0 obj << /Type /Catalog >>\ngarbage")
    (folder / "binary.txt").write_bytes(bytes(range(256)) * 40)
    (folder / "empty.md").write_bytes(b"")
    with open(folder / "huge.txt", "wb") as sink:  # 200 MB, sparse: skipped by its size, never read
        sink.truncate(200 * 2**20)
    (folder / "fake.docx").write_text("not a zip at all", encoding="utf-8")
    outside = tmp_path / "outside.md"
    outside.write_text("# Outside\n\nPrivate.\n", encoding="utf-8")
    (folder / "escape.md").symlink_to(outside)
    (folder / "latin1.txt").write_bytes("Caf\xe9 opens at 8.".encode("cp1252"))
    lines = []
    report = update_index([folder], tmp_path / "index", warn=lines.append)
    reasons = {
        "locked.pdf": "encrypted PDF: it needs a password",
        "broken.pdf": "not a readable PDF",
        "scanned.pdf": "no text layer (2 pages; a scanned PDF?)",
        "binary.txt": "binary content, not text",
        "empty.md": "empty file",
        "huge.txt": "too large (200 MB; the limit is 50 MB)",
        "fake.docx": "not a Word (.docx) file",
        "escape.md": "outside",
    }
    assert set(report.skipped) == set(bad)
    for name, reason in reasons.items():
        mine = [line for line in lines if line.startswith(str(folder / name) + ":")]
        assert len(mine) == 1 and reason in mine[0] and "Traceback" not in mine[0], (name, lines)
    assert any(str(folder / "latin1.txt") in line and "read as Windows-1252" in line for line in lines)
    assert report.documents == 6  # the five good files and the Windows-1252 one
    assert "9 skipped" not in report.summary() and "8 skipped" in report.summary()
    kb = load_documents(str(folder), str(tmp_path / "index"), update=False)
    assert "Café opens at 8." in [s.text for s in kb.snippets]
    assert "Private" not in " ".join(s.text for s in kb.snippets)


def test_a_non_utf8_file_counts_in_the_summary_and_bad_symlinks_are_one_warning_each(folder, tmp_path, capsys):
    (folder / "latin1.txt").write_bytes("Caf\xe9 opens at 8.".encode("cp1252"))
    (folder / "dangling.md").symlink_to(tmp_path / "nowhere.md")  # a broken symlink
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "private.md").write_text("# Private\n\nThe safe code is 1234.\n", encoding="utf-8")
    (folder / "linked").symlink_to(elsewhere, target_is_directory=True)  # a symlink to a folder outside
    lines = []
    report = update_index([folder], tmp_path / "index", warn=lines.append)
    assert report.documents == 6 and report.noted == {
        "latin1.txt": ["not UTF-8 (byte 0xe9 at offset 3): read as Windows-1252"]
    }
    assert report.skipped == {"dangling.md": "a broken symlink", "linked": "a symlink to a folder: not followed"}
    assert sorted(lines) == sorted(
        [
            f"{folder / 'dangling.md'}: a broken symlink; skipped",
            f"{folder / 'linked'}: a symlink to a folder: not followed; skipped",
            f"{folder / 'latin1.txt'}: not UTF-8 (byte 0xe9 at offset 3): read as Windows-1252",
        ]
    )
    summary = report.summary()
    assert summary.startswith("6 documents, ") and "2 skipped (see the warnings)" in summary
    assert "1 read with a warning (1 not UTF-8, read as Windows-1252; see the warnings)" in summary
    kb = load_documents(str(folder), str(tmp_path / "index"), update=False)
    assert "Café opens at 8." in [s.text for s in kb.snippets]
    assert "1234" not in " ".join(s.text for s in kb.snippets)
    assert main(["index", str(folder), "--index-dir", str(tmp_path / "index")]) == 0  # unchanged: still counted
    out, err = capsys.readouterr()
    assert "1 read with a warning (1 not UTF-8" in out and "0 added, 0 changed, 0 deleted, 6 unchanged" in out
    assert err.count("warning: ") == 3


JUNK = [
    "~$garden.docx",
    ".~lock.garden.docx#",
    "kitchen.md~",
    "#kitchen.md#",
    "old.bak",
    "notes.txt.bak",
    "kitchen.md.orig",
    "bikes.pdf.part",
    "bikes.pdf.crdownload",
    "~WRL0001.tmp",
    ".DS_Store",
    "._bikes.pdf",
    "Thumbs.db",
    "THUMBS.DB",
    "desktop.ini",
    ".kitchen.md.swp",
    "node_modules/pkg/README.md",
    "__pycache__/notes.txt",
    "venv/lib/site.md",
    "manuals/__MACOSX/boat.html",
    "$Recycle.Bin/S-1-5/$R0ABC.docx",
    "System Volume Information/log.txt",
    ".git/HEAD.md",
]


def test_junk_is_passed_over_and_htm_is_read_as_html(folder, tmp_path, capsys):
    for rel in JUNK:
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("junk that would be indexed or skipped as broken if it were read\n", encoding="utf-8")
    (folder / "manuals" / "boat.html").rename(folder / "manuals" / "boat.htm")
    lines = []
    report = update_index([folder], tmp_path / "index", warn=lines.append)
    assert not lines and not report.skipped and report.unsupported == {".png": 1}
    hidden_dirs = {
        "node_modules",
        "__pycache__",
        "venv",
        "manuals/__MACOSX",
        "$Recycle.Bin",
        "System Volume Information",
        ".git",
    }
    assert report.hidden == 1 + len([r for r in JUNK if "/" not in r]) + len(hidden_dirs)  # 1: .secret.md
    kb = load_documents(str(folder), str(tmp_path / "index"), update=False)
    assert {s.location.path for s in kb.snippets} == {
        "kitchen.md",
        "manuals/boat.htm",
        "manuals/deep/bikes.pdf",
        "garden.docx",
        "notes.txt",
    }
    assert "junk" not in " ".join(s.text for s in kb.snippets)
    entry = kb.generation.manifest["documents"]["manuals/boat.htm"]
    assert entry["format"] == "html" and entry["title"] == "Boat Guide"
    assert "Life jackets are under the front seat." in [s.text for s in kb.snippets]
    assert main(["index", "--status", "--index-dir", str(tmp_path / "index")]) == 0
    assert f"{report.hidden} hidden or junk" in capsys.readouterr().out


def test_an_aes_encrypted_pdf_with_an_empty_password_is_read(tmp_path):
    path = make_pdf(tmp_path / "open.pdf", [("Rules", "Anyone may read this.")], owner_password="owner")
    doc = read_document("open.pdf", path.read_bytes())
    assert doc.blocks[0].text == "Anyone may read this."


def test_a_page_a_missing_decoder_cannot_read_loses_that_page_only(tmp_path, monkeypatch):
    from pypdf import PageObject
    from pypdf.errors import DependencyError

    path = make_pdf(tmp_path / "b.pdf", [("Tyres", "Pump to 4 bar."), ("Chains", "Oil monthly.")], "Bike Care")
    extract = PageObject.extract_text

    def brotli_on_page_two(page, *args, **kwargs):
        if "Chains" in extract(page):
            # not encryption: no 'docs' extra fixes it
            raise DependencyError("brotli is required to decode this stream")
        return extract(page, *args, **kwargs)

    monkeypatch.setattr(PageObject, "extract_text", brotli_on_page_two)
    doc = read_document("b.pdf", path.read_bytes())
    assert [b.text for b in doc.blocks] == ["Pump to 4 bar."] and any("2" in note for note in doc.notes)


def test_unreadable_files_raise_one_line_reasons():
    for name, data, reason in [
        ("a.pdf", b"hello", "not a PDF"),
        ("a.md", b"  \n", "empty file"),
        ("a.html", b"<html><script>x</script></html>", "no text in it"),
    ]:
        with pytest.raises(Unreadable, match=reason):
            read_document(name, data)


# ---- the command -----------------------------------------------------------------------------------------------------
def test_augmenter_index_and_status(folder, tmp_path, capsys):
    index = tmp_path / "index"
    (folder / "empty.md").write_bytes(b"")
    assert main(["index", str(folder), "--index-dir", str(index), "--exclude", "manuals/*"]) == 0
    out, err = capsys.readouterr()
    assert out.startswith("3 documents, ") and "1 skipped" in out and err.count("warning") == 1
    assert f"{folder / 'empty.md'}: empty file; skipped" in err
    assert main(["index", "--status", "--index-dir", str(index)]) == 0
    status = capsys.readouterr().out
    assert "3 documents" in status and "kitchen.md" in status and "Kitchen Manual" in status
    assert "empty.md: empty file" in status and "exclude manuals/*" in status and "1 .png" in status
    assert main(["index", str(folder), "--index-dir", str(index)]) == 0  # the exclude is the index's own
    assert "0 added" in capsys.readouterr().out


def test_augmenter_index_errors_are_one_line(tmp_path, capsys):
    assert main(["index", str(tmp_path / "missing")]) == 2
    assert capsys.readouterr().err.strip() == f"augmenter: error: no such file or folder: {tmp_path / 'missing'}"
    (tmp_path / "only.png").write_bytes(b"x")
    assert main(["index", str(tmp_path), "--index-dir", str(tmp_path / "ix")]) == 2
    assert "no document could be indexed" in capsys.readouterr().err
    assert main(["index", "--status", "--index-dir", str(tmp_path / "nothing")]) == 2
    assert "no document index at" in capsys.readouterr().err


def test_globs_files_and_include(folder, tmp_path):
    report = update_index([str(folder / "**" / "*.pdf"), str(folder / "kitchen.md")], tmp_path / "ix1", warn=quiet)
    assert report.documents == 2
    kb = load_documents([str(folder / "**" / "*.pdf"), str(folder / "kitchen.md")], str(tmp_path / "ix1"))
    assert {s.location.path for s in kb.snippets} == {"kitchen.md", "manuals/deep/bikes.pdf"}
    only = update_index([folder], tmp_path / "ix2", include=["*.md", "*.txt"], warn=quiet)
    assert only.documents == 2


def test_knowledge_docs_settings_are_checked_when_composed():
    from augmenter.config import compose
    from augmenter.errors import ConfigError

    cfg = compose("chat", ["knowledge=docs", "knowledge.path=/some/folder", "knowledge.words=120"])
    assert cfg.knowledge.words == 120
    with pytest.raises(ConfigError, match=r"knowledge.words=0 is invalid: expected null or an integer >= 1"):
        compose("chat", ["knowledge=docs", "knowledge.path=/x", "knowledge.words=0"])
    with pytest.raises(ConfigError, match="knowledge.max_file_mb"):
        compose("chat", ["knowledge=docs", "knowledge.path=/x", "knowledge.max_file_mb=-1"])


def test_an_empty_folder_is_a_clear_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="hold no text augmenter can read"):
        load_documents(str(tmp_path / "empty"), str(tmp_path / "ix"))


# ---- a reader's library not installed -------------------------------------------------------------------------------
def test_a_missing_reader_library_is_one_line_at_start_up_naming_the_extra(folder, tmp_path, monkeypatch, capsys):
    import pypdf

    from augmenter.extras import MissingExtra

    monkeypatch.setitem(sys.modules, "pypdf", None)  # pypdf not installed: find_spec finds nothing, import fails
    index = tmp_path / "index"
    assert main(["index", str(folder), "--index-dir", str(index)]) == 2
    err = capsys.readouterr().err
    assert err == (
        "augmenter: error: augmenter index needs pypdf, which the 'docs' extra brings: pip install 'augmenter[docs]'\n"
    )
    with pytest.raises(
        MissingExtra,
        match=r"^reading manuals/deep/bikes.pdf needs pypdf, which the 'docs' extra "
        r"brings: pip install 'augmenter\[docs\]'$",
    ):
        load_documents(str(folder), str(index))  # knowledge=docs in chat, serve, eval and the API
    assert IndexStore(index).current() is None  # stopped before anything was read or written, not a skip
    script = tmp_path / "turns.txt"
    script.write_text("When does the kitchen open?\n", encoding="utf-8")
    code = main(
        [
            "chat",
            "knowledge=docs",
            f"knowledge.path={folder}",
            f"knowledge.index_dir={index}",
            "llm=fake",
            "utility=kf1",
            "--script",
            str(script),
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "Traceback" not in err, err
    assert err.startswith("augmenter: error: reading manuals/deep/bikes.pdf needs pypdf") and "augmenter[docs]" in err
    monkeypatch.setitem(sys.modules, "pypdf", pypdf)
    update_index([folder], index, warn=quiet)  # built with pypdf; without it, only files to read again need it
    monkeypatch.setitem(sys.modules, "pypdf", None)
    (folder / "notes.txt").write_text("The wifi password changed.\n", encoding="utf-8")
    assert {s.location.path for s in load_documents(str(folder), str(index)).snippets} >= {"manuals/deep/bikes.pdf"}
    make_pdf(folder / "new.pdf", [("New", "A new page.")])
    (folder / "new.htm").write_text(HTML, encoding="utf-8")
    monkeypatch.setitem(sys.modules, "selectolax", None)
    with pytest.raises(MissingExtra, match=r"^reading new.htm and 1 other file needs selectolax, pypdf, which"):
        update_index([folder], index, warn=quiet)


def test_a_file_skipped_because_a_library_was_missing_is_read_again_next_time(folder, tmp_path, monkeypatch):
    import pypdf

    import augmenter.extras

    index = tmp_path / "index"
    real = augmenter.extras.find_spec
    # a broken install: pypdf's files are found (the start-up check passes) but importing it fails
    monkeypatch.setattr(augmenter.extras, "find_spec", lambda name: real("json") if name == "pypdf" else real(name))
    monkeypatch.setitem(sys.modules, "pypdf", None)
    lines = []
    first = update_index([folder], index, warn=lines.append)
    assert first.skipped == {
        "manuals/deep/bikes.pdf": "reading it needs pypdf, which the 'docs' extra brings: pip install 'augmenter[docs]'"
    }
    assert [line for line in lines if "bikes.pdf" in line] == [
        f"{folder / 'manuals/deep/bikes.pdf'}: reading it needs pypdf, which the 'docs' extra brings: "
        "pip install 'augmenter[docs]'; skipped"
    ]
    still = update_index([folder], index, warn=quiet)  # still missing: read again, skipped again, nothing changed
    assert list(still.skipped) == ["manuals/deep/bikes.pdf"] and not still.written and still.unchanged == 5
    monkeypatch.setitem(sys.modules, "pypdf", pypdf)  # installed now: the unchanged file is read, not kept as skipped
    fixed = update_index([folder], index, warn=quiet)
    assert fixed.changed == ["manuals/deep/bikes.pdf"] and not fixed.skipped and fixed.documents == 5
    kb = load_documents(str(folder), str(index), update=False)
    assert any("4 bar" in s.text for s in kb.snippets)


def test_an_index_written_before_chunks_had_their_own_spans_is_read_again(folder, tmp_path, monkeypatch):
    import augmenter.documents.indexer as indexer

    long = " ".join(f"word{i}" for i in range(450)).replace(" word2", "  \r\nword2")  # Windows line ends too
    (folder / "notes.txt").write_bytes(f"Plain notes.\n\n{long}\n".encode())
    index = tmp_path / "index"
    with monkeypatch.context() as patched:
        patched.setattr(indexer, "READER_VERSION", 1)
        update_index([folder], index, words=200, overlap=40, warn=quiet)
    assert load_documents(str(folder), str(index), update=False).snippets  # the older index loads as it is
    report = update_index([folder], index, warn=quiet)  # and the next update reads every file again
    assert report.written and len(report.changed) == 5 and report.documents == 5
    assert IndexStore(index).current().manifest["settings"]["reader_version"] == indexer.READER_VERSION
    kb = load_documents(str(folder), str(index), update=False)
    text = (folder / "notes.txt").read_bytes().decode()
    notes = [s for s in kb.snippets if s.location.path == "notes.txt"]
    assert len(notes) == 4 and len({s.location.start for s in notes}) == 4
    for snippet in notes:
        assert " ".join(text[snippet.location.start : snippet.location.end].split()) == snippet.text


def test_a_blank_line_with_windows_line_ends_separates_paragraphs_of_a_text_file():
    from augmenter.documents.readers.text import read_text

    data = b"First paragraph, line one.\r\nLine two.\r\n\r\nSecond paragraph.\r\n \r\nThird.\r\n"
    document = read_text(data, "notes.txt")
    text = data.decode()
    assert [b.text for b in document.blocks] == ["First paragraph, line one. Line two.", "Second paragraph.", "Third."]
    assert [text[b.start : b.end] for b in document.blocks][1:] == ["Second paragraph.", "Third."]
