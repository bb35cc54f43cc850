"""Evaluation: labelled queries → recall@k, nDCG@10, MRR and latency per recall mode.

``queries`` loads and validates a JSON Lines query file, ``metrics`` holds the (pure) metric
code, ``runner`` runs modes over the queries with one ``Recaller``, ``cli`` is `brain eval`.
"""
