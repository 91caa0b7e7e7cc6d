"""The one did-you-mean: the closest valid spelling of a word among known choices."""

from __future__ import annotations

from collections.abc import Iterable


def did_you_mean(word: str, choices: Iterable[str]) -> str | None:
    """The closest valid spelling of ``word`` among ``choices``, if one is close enough.

    Exact case-insensitive matches win; then a close match (ratio ≥ 0.75) of the word as
    written, then of its lower-cased, ``-``→``_`` form (ratio ≥ 0.7).
    """
    pool = [c for c in choices]
    if not pool or not word:
        return None
    lowered = {c.lower(): c for c in pool}
    if word.lower() in lowered and word not in pool:
        return lowered[word.lower()]
    import difflib  # only for a word that is not known (a clean check never loads it)

    hits = difflib.get_close_matches(word, pool, n=1, cutoff=0.75)
    if not hits:
        hits = difflib.get_close_matches(word.lower().replace("-", "_"), pool, n=1, cutoff=0.7)
    return hits[0] if hits else None
