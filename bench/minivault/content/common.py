"""Shared helpers for the content tables: the registry of notes and small formatting utilities."""

from __future__ import annotations

import datetime

# Links that deliberately point at notes that do not exist (an Obsidian vault always has some).
DANGLING = {
    "Warehouse safety checklist",
    "Driver onboarding pack",
    "Q2 2025 planning",
    "Kafka consumer tuning",
    "Pharma pricing sheet 2026",
    "Tagine",
}

MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]


def parse(d: str) -> datetime.date:
    y, m, dd = (int(x) for x in d.split("-"))
    return datetime.date(y, m, dd)


def human(d: str, style: int = 0) -> str:
    """'2025-03-18' -> '18 March 2025' (0), 'March 18, 2025' (1), '18 Mar' (2), 'March 2025' (3)."""
    x = parse(d)
    if style == 0:
        return f"{x.day} {MONTHS[x.month - 1]} {x.year}"
    if style == 1:
        return f"{MONTHS[x.month - 1]} {x.day}, {x.year}"
    if style == 2:
        return f"{x.day} {MONTHS[x.month - 1][:3]}"
    return f"{MONTHS[x.month - 1]} {x.year}"


def weekday(d: str) -> str:
    return ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"][parse(d).weekday()]


def link(title: str, alias: str | None = None, heading: str | None = None) -> str:
    inner = title
    if heading:
        inner += "#" + heading
    if alias:
        inner += "|" + alias
    return f"[[{inner}]]"


def join_names(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


PRONOUNS = {
    "he": {"he": "he", "He": "He", "him": "him", "his": "his", "His": "His"},
    "she": {"he": "she", "He": "She", "him": "her", "his": "her", "His": "Her"},
    "they": {"he": "they", "He": "They", "him": "them", "his": "their", "His": "Their"},
}


class Context:
    """Registry shared by all content modules while the vault is built."""

    def __init__(self, note_cls, expand):
        self.Note = note_cls
        self.expand = expand
        self.notes = []
        self.by_title = {}
        self.data: dict = {}

    def add(self, folder: str, title: str, kind: str, aliases=()):
        n = self.Note(folder, title, kind)
        n.aliases = list(aliases)
        if n.title in self.by_title:
            raise SystemExit(f"duplicate title {title}")
        self.notes.append(n)
        self.by_title[n.title] = n
        return n

    def get(self, title: str):
        return self.by_title[title]

    def of_kind(self, kind: str):
        return sorted((n for n in self.notes if n.kind == kind), key=lambda n: n.path)


def sections(blocks: list[str]) -> str:
    """Join non-empty markdown blocks with blank lines."""
    return "\n\n".join(b.strip("\n") for b in blocks if b and b.strip()) + "\n"


def bullets(items: list[str], marker: str = "-") -> str:
    return "\n".join(f"{marker} {x}" for x in items)
