"""Migrations of the brain database, in order. Never edit a released one; append."""

from __future__ import annotations

import sqlite3

from .db import MIGRATIONS


@MIGRATIONS
def m001_turns(conn: sqlite3.Connection) -> None:
    """The turn ledger: one row per assistant turn, written by the Stop hook."""
    raise NotImplementedError("turns table: written with the ledger (issue 4)")


@MIGRATIONS
def m002_ab_recall(conn: sqlite3.Connection) -> None:
    """A/B telemetry of `brain ask --ab`: dense vs dense+graph, one row per query."""
    raise NotImplementedError("ab_recall table: written with recall (issue 3)")
