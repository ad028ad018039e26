"""Documentation as people have it: reStructuredText from Sphinx projects, Jupyter notebooks, MkDocs' Markdown
extensions (admonitions, content tabs, block markers, include directives, heading ids, emoji), and code blocks and
tables kept with their line breaks, read into blocks and chunks that show no markup."""

from __future__ import annotations

import json

import pytest

from augmenter.documents import Unreadable, load_documents, read_document, split_document
from augmenter.documents.model import strip_markup

RST = b"""\
.. _quickstart:

Quickstart
==========

.. module:: requests.models

Make sure that Requests is :ref:`installed <install>` and read :class:`~requests.Response`.

.. toctree::
   :maxdepth: 2

   user/install

Timeouts
--------

You can tell Requests to stop waiting after a given number of seconds with the ``timeout`` parameter::

    >>> requests.get('https://github.com/', timeout=0.001)
    Traceback (most recent call last):
      File "<stdin>", line 1, in <module>

.. versionadded:: 2.4
   The timeout may be a tuple of connect and read timeouts.

.. code-block:: python

   s = requests.Session()
   s.auth = ('user', 'pass')

.. note:: Nearly all production code should use this parameter.

.. include:: /etc/passwd

=======  =========
Option   Default
=======  =========
verify   True
stream   False
=======  =========

:unknownrole:`shown text` stays readable.
"""


def test_rst_reads_sections_roles_code_and_tables_as_sphinx_writes_them():
    document = read_document("quickstart.rst", RST)
    assert document.title == "Quickstart" and document.format == "rst"
    texts = [b.text for b in document.blocks]
    assert "Make sure that Requests is installed and read Response." in texts
    assert not any("toctree" in t or "maxdepth" in t or "user/install" in t for t in texts)  # site-building only
    code = [b for b in document.blocks if b.code]
    assert code[0].text.startswith(">>> requests.get('https://github.com/', timeout=0.001)\nTraceback")
    assert code[1].text == "s = requests.Session()\ns.auth = ('user', 'pass')"
    assert "New in version 2.4: The timeout may be a tuple of connect and read timeouts." in " ".join(texts)
    assert "Note: Nearly all production code should use this parameter." in texts
    assert "Option: verify; Default: True" in texts and "Option: stream; Default: False" in texts
    assert "shown text stays readable." in " ".join(texts)
    assert not any("root:" in t for t in texts)  # include is off: nothing outside the file is read
    timeouts = [b for b in document.blocks if "timeout" in b.text]
    assert all(b.heading == ("Timeouts",) for b in timeouts)


def test_rst_that_docutils_cannot_make_sense_of_is_still_read_or_skipped_with_one_line():
    document = read_document("odd.rst", b"Title\n=====\n\n.. unknown-directive:: x\n\n   body\n\n`unclosed\n")
    assert document.title == "Title"
    with pytest.raises(Unreadable):
        read_document("empty.rst", b"   \n")


def test_a_notebook_reads_its_markdown_and_code_cells_in_order():
    notebook = {
        "cells": [
            {"cell_type": "markdown", "source": ["# Loading data\n", "\n", "Use `read_csv` to load a file."]},
            {
                "cell_type": "code",
                "source": "import pandas as pd\ndf = pd.read_csv('a.csv')",
                "outputs": [{"output_type": "stream", "text": "secret output"}],
            },
            {"cell_type": "markdown", "source": "## Saving\n\nCall `to_parquet`."},
        ]
    }
    document = read_document("load.ipynb", json.dumps(notebook).encode())
    assert document.title == "Loading data" and document.format == "notebook"
    assert [b.text for b in document.blocks] == [
        "Use read_csv to load a file.",
        "import pandas as pd\ndf = pd.read_csv('a.csv')",
        "Call to_parquet.",
    ]
    assert document.blocks[1].code and document.blocks[2].heading == ("Saving",)
    with pytest.raises(Unreadable, match="not a notebook: invalid JSON at line 1"):
        read_document("broken.ipynb", b"{not json")


MKDOCS = """\
# Timeouts { #timeouts }

{* docs_src/timeouts/tutorial001.py hl[3] *}

/// tip | Good to know

The default timeout is **five seconds** :rocket:.

///

!!! warning "Careful"
    Setting `timeout=None` disables timeouts completely.

=== "Python 3.10+"

    Run it with the `--fast` flag.

## Pool limits {#pool-limits}

| Setting | Default |
|---|---|
| max_connections | 100 |

```console
$ python main.py --help
<b>Usage:</b> main.py [OPTIONS]
```
"""


def test_mkdocs_markup_is_read_as_the_content_it_marks():
    document = read_document("timeouts.md", MKDOCS.encode())
    assert document.title == "Timeouts"
    texts = [b.text for b in document.blocks]
    assert "The default timeout is five seconds :rocket:." in texts  # emoji left for the display step
    body = next(b for b in document.blocks if "disables" in b.text)
    assert not body.code and body.text == "Setting timeout=None disables timeouts completely."  # prose, not code
    tab = next(b for b in document.blocks if "--fast" in b.text)
    assert not tab.code
    assert not any(t.startswith(("///", "!!!", "===", "{*")) for t in texts)
    assert document.blocks[-2].heading == ("Pool limits",) and texts[-2] == "Setting: max_connections; Default: 100"
    assert document.blocks[-1].code and texts[-1] == "$ python main.py --help\n<b>Usage:</b> main.py [OPTIONS]"


@pytest.mark.parametrize(
    "text, shown",
    [
        ("Install { #install }", "Install"),
        ("{* docs_src/a.py hl[3] *}", ""),
        ("/// tip | Title\nUse it.\n///", "Use it."),
        ('!!! note "TL;DR" Use it :rocket: now', "Use it now"),
        ("{% alert %} Employees {% endalert %}", "Employees"),
        ("Did you mean &apos;create&apos;?", "Did you mean 'create'?"),
        ("<b>Usage:</b> main.py", "Usage: main.py"),
        ("Time 12:30: ok, keep {x} and a: b:", "Time 12:30: ok, keep {x} and a: b:"),
        ("code:\n    x = {'a': 1}  {: .note }", "code:\n    x = {'a': 1}"),
        ('Read [Overtime]({% page "/tools/hrlinks/" %}) first.', "Read Overtime first."),
        ("files. !!! tip Use IPython to try it.", "files. Use IPython to try it."),
    ],
)
def test_strip_markup_drops_what_is_no_content_and_keeps_what_is(text, shown):
    assert strip_markup(text) == shown


def test_code_blocks_keep_their_line_breaks_in_chunks_and_in_the_knowledge(tmp_path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "cli.md").write_text(
        "# CLI { #cli }\n\nRun this:\n\n```console\n$ app --help\n  Usage: app\n```\n\n"
        "/// note\nIt prints :sparkles: the usage.\n///\n"
    )
    chunks = split_document(read_document("cli.md", (folder / "cli.md").read_bytes()))
    assert chunks[0].text == "Run this:\n$ app --help\n  Usage: app\nIt prints :sparkles: the usage."
    knowledge = load_documents(str(folder), index_dir=str(tmp_path / "index"))
    snippet = knowledge.snippets[0]
    assert snippet.text == "Run this:\n$ app --help\n  Usage: app\nIt prints the usage."  # shown without markup
    assert snippet.location.heading == ["CLI"] and knowledge.entities[0].name == "CLI"
    assert "sparkles" in knowledge.search_texts[0]  # the index keeps what it read
