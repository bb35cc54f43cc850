"""Recall: query → notes. Stages, in order: dense → graph (gated) → rerank.

Each optional stage degrades to the previous stage's result when it fails, with a warning
in the log and a flag in the result, never a traceback.
"""
