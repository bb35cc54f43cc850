"""The record every note table uses."""

from __future__ import annotations


def note(folder: str, title: str, lang: str, body: str, **frontmatter) -> dict:
    """One note: its folder, title (the file name), language ("en" or "ru"), markdown body, frontmatter.

    Frontmatter keys are written in the order given, after ``lang``; lists become YAML lists.
    """
    return {"folder": folder, "title": title, "lang": lang, "body": body.strip("\n") + "\n", "frontmatter": frontmatter}
