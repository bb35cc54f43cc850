"""The turn ledger: one row per Claude Code assistant turn, written by a Stop hook.

``transcript`` reads the last turn off the end of a transcript, ``redact`` masks secrets,
``store`` writes and queries the ``turns`` table, ``hook`` is the Stop hook itself,
``install`` edits Claude Code's settings, ``cli`` is the click layer. Everything the hook
touches is standard library only.
"""
