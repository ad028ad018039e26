"""reStructuredText (.rst) with docutils, as Sphinx projects write it: sections give the heading path (the document's
title is its first one), and each paragraph, list item, definition, table row and literal block is a block. Sphinx's
roles (`:class:`, `:ref:`, ...) keep the text they show; its directives that only build the site (toctree,
autodoc, index, module) are dropped, those that hold prose (versionadded, seealso, only) keep it, and code
directives are literal blocks. Nothing outside the file is read: docutils' `include` and `raw` are off. Spans are
in the text as extracted (blocks joined by blank lines)."""

from __future__ import annotations

import io
import re
from functools import lru_cache

from augmenter.documents.model import BlockList, Document, HeadingPath, clean, title_from_name
from augmenter.documents.readers.text import decode

# Sphinx's cross-reference and inline roles: shown as their text ("installed <install>" -> "installed";
# "~requests.Response" -> "Response")
SPHINX_ROLES = """ref doc class func meth attr mod data exc obj const term option envvar command file program kbd
abbr guilabel menuselection samp download any numref keyword token regexp mimetype dfn newsgroup makevar manpage
py:class py:func py:meth py:attr py:mod py:data py:exc py:obj py:const py:function py:method py:attribute
py:module std:ref std:doc confval""".split()
DROPPED = """toctree autoclass autofunction automodule automethod autodata autoexception autoattribute autosummary
module currentmodule py:module py:currentmodule index highlight literalinclude include raw tabularcolumns
sectionauthor codeauthor moduleauthor only-html rst-class""".split()
PROSE = {
    "versionadded": "New in version",
    "versionchanged": "Changed in version",
    "deprecated": "Deprecated since version",
    "seealso": "See also",
    "only": "",
    "hlist": "",
    "glossary": "",
    "centered": "",
    "tab": "",
    "card": "",
}
VERSIONED = ("versionadded", "versionchanged", "deprecated")
CODE = ["code-block", "sourcecode", "testcode", "doctest", "ipython", "code-cell", "jupyter-execute"]
_TARGET = re.compile(r"^(.*?)\s*<[^<>]*>$", re.DOTALL)
_INTERPRETED = re.compile(r":[\w:.+-]+:`(.*)`", re.DOTALL)


def _shown(text: str) -> str:
    m = _TARGET.match(text)
    shown = m.group(1) if m and m.group(1) else text
    if shown.startswith("~"):
        shown = shown[1:].rsplit(".", 1)[-1]
    return shown.lstrip("!")


@lru_cache(maxsize=1)
def _registered() -> bool:
    """Register Sphinx's roles and directives with docutils (once per process)."""
    from docutils import nodes
    from docutils.parsers.rst import Directive, directives, roles

    def role(name, rawtext, text, lineno, inliner, options=None, content=None):
        return [nodes.literal(rawtext, _shown(text))], []

    for name in SPHINX_ROLES:
        roles.register_local_role(name, role)

    class Dropped(Directive):
        optional_arguments, final_argument_whitespace, has_content = 10, True, True
        option_spec = None

        def run(self):
            return []

    Dropped.option_spec = _AnyOptions()

    class Prose(Directive):
        optional_arguments, final_argument_whitespace, has_content = 1, True, True
        option_spec = _AnyOptions()

        def run(self):
            node = nodes.container()
            argument = " ".join(" ".join(self.arguments).split())
            if self.name in VERSIONED and argument:  # "2.4 The timeout may be ..." -> "New in version 2.4: The ..."
                version, _, said = argument.partition(" ")
                lead = f"{PROSE[self.name]} {version}" + (f": {said}" if said else "")
            else:
                lead = " ".join(p for p in (PROSE.get(self.name, ""), argument) if p)
            if lead:
                node += nodes.paragraph(text=lead + ":" if self.content and not lead.endswith(":") else lead)
            self.state.nested_parse(self.content, self.content_offset, node)
            return [node]

    class Code(Directive):
        optional_arguments, final_argument_whitespace, has_content = 10, True, True
        option_spec = _AnyOptions()

        def run(self):
            return [nodes.literal_block(text="\n".join(self.content))]

    for name in DROPPED:
        directives.register_directive(name, Dropped)
    for name in PROSE:
        directives.register_directive(name, Prose)
    for name in CODE:
        directives.register_directive(name, Code)
    return True


class _AnyOptions(dict):
    """A directive option spec that accepts every option (Sphinx's directives have many)."""

    def __getitem__(self, key):
        return lambda value: value

    def __contains__(self, key) -> bool:
        return True


def _text(node) -> str:
    """A node's text, with an unknown role's interpreted text (left as `problematic`) shown as its text."""
    from docutils import nodes

    if isinstance(node, nodes.problematic):
        m = _INTERPRETED.search(node.astext())
        return _shown(m.group(1)) if m else node.astext()
    if isinstance(node, (nodes.system_message, nodes.comment, nodes.substitution_definition, nodes.target)):
        return ""
    if isinstance(node, nodes.Text):
        return str(node)
    return "".join(_text(child) for child in node.children)


def read_rst(data: bytes, name: str) -> Document:
    from docutils import nodes
    from docutils.core import publish_doctree

    _registered()
    text, note = decode(data)
    settings = {
        "report_level": 5,
        "halt_level": 5,
        "warning_stream": io.StringIO(),
        "file_insertion_enabled": False,
        "raw_enabled": False,
        "syntax_highlight": "none",
        "doctitle_xform": False,
        "sectsubtitle_xform": False,
        "input_encoding": "unicode",
        "line_length_limit": 100_000,
    }
    tree = publish_doctree(text, settings_overrides=settings)
    out, headings = BlockList(), HeadingPath()
    title = None

    def table_rows(table) -> None:
        header: list[str] = []
        for part in table.findall(lambda n: isinstance(n, (nodes.thead, nodes.tbody))):
            for row in part.findall(nodes.row):
                cells = [clean(_text(entry)) for entry in row.findall(nodes.entry)]
                if isinstance(part, nodes.thead):
                    header = cells
                    continue
                labelled = [f"{h}: {c}" if h else c for h, c in zip(header + [""] * len(cells), cells) if c]
                out.add("; ".join(labelled), headings.path)

    def walk(node, depth: int) -> None:
        nonlocal title
        for child in node.children:
            if isinstance(child, nodes.section):
                words = clean(_text(child[0])) if child.children and isinstance(child[0], nodes.title) else ""
                if title is None and not out.blocks:
                    title = words
                    walk(child, depth)
                else:
                    headings.enter(depth + 1, words)
                    walk(child, depth + 1)
                    headings.leave(depth + 1)
            elif isinstance(child, nodes.title):
                continue
            elif isinstance(child, (nodes.literal_block, nodes.doctest_block)):
                out.add(child.astext(), headings.path, code=True)
            elif isinstance(child, nodes.paragraph):
                out.add(_text(child), headings.path)
            elif isinstance(child, nodes.table):
                table_rows(child)
            elif isinstance(child, nodes.definition_list_item):
                term = clean(" ".join(_text(t) for t in child.findall(nodes.term)))
                body = [c for c in child.children if isinstance(c, nodes.definition)]
                first = body[0].children[0] if body and body[0].children else None
                if isinstance(first, nodes.paragraph):
                    out.add(f"{term}: {_text(first)}", headings.path)
                    rest = nodes.container()
                    rest.children = body[0].children[1:]
                    walk(rest, depth)
                else:
                    out.add(term, headings.path)
                    for b in body:
                        walk(b, depth)
            elif isinstance(child, nodes.field):
                out.add(f"{clean(_text(child[0]))}: {_text(child[1])}", headings.path)
            elif isinstance(
                child,
                (
                    nodes.system_message,
                    nodes.comment,
                    nodes.target,
                    nodes.substitution_definition,
                    nodes.raw,
                    nodes.image,
                ),
            ):
                continue
            elif isinstance(child, nodes.Admonition) and not isinstance(child, nodes.admonition):
                lead = child.tagname.capitalize()
                paragraphs = [c for c in child.children if isinstance(c, nodes.paragraph)]
                if paragraphs and paragraphs[0] is child.children[0]:
                    out.add(f"{lead}: {_text(paragraphs[0])}", headings.path)
                    rest = nodes.container()
                    rest.children = child.children[1:]
                    walk(rest, depth)
                else:
                    walk(child, depth)
            elif isinstance(child, nodes.Element):
                walk(child, depth)

    walk(tree, 0)
    return Document(title or title_from_name(name), out.blocks, "rst", notes=[note] if note else [])
