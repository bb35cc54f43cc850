"""Russian words that name nothing and carry no topic: what the BM25 and names lanes leave out of a
query, as they leave out "the", "of", "what" and "my" (each lane keeps its own English list).

The pilot's vault is Russian and English, and these lanes had English lists only: "что" was
searched by BM25 and "и" counted as a word of a note's name. Written with е for ё: both lanes
fold ё to е before they compare (lexical.fold, names.words).
"""

from __future__ import annotations

# Conjunctions, prepositions, pronouns and particles; then question words, as the English lists hold.
RUSSIAN = frozenset(
    """
    и или а но в во на о об обо про с со у к ко по для из за от до при без над под через
    это этот эта эти мой моя мое мои наш наша наше наши я мы ты вы он она они не ли же бы
    что как где когда почему зачем кто какой какая какие каком чем чего куда откуда сколько
    кого кому кем чему какое какую каких каким какими какого какому
    """.split()
)
