"""Table + text knowledge (Wiki QA): tables whose cells link to passages, by the passages' "/wiki/..." keys."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Cell:
    text: str
    links: list[str] = field(default_factory=list)  # "/wiki/..." keys of linked passages


@dataclass
class Table:
    table_id: str
    title: str
    header: list[str]
    rows: list[list[Cell]]

    def row_text(self, i: int) -> str:
        """A table segment (CORE): the page title, then each header with its cell in row `i`."""
        cells = " ; ".join(f"{h}: {c.text}" for h, c in zip(self.header, self.rows[i]) if c.text.strip())
        return f"{self.title} | {cells}"

    def row_links(self, i: int) -> list[str]:
        return list(dict.fromkeys(link for cell in self.rows[i] for link in cell.links))


def passage_title(link: str) -> str:
    return link.rsplit("/", 1)[-1].replace("_", " ")
