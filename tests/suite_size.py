"""How big the default suite's searches are, and how big a campaign's (``.ci/run campaigns``).

The default ``pytest`` run keeps a small, fixed-seed slice of every property test and corpus
sweep, so the suite stays within its time budget (docs/test-suite.md); a campaign runs them at
full size. ``NIKA_CAMPAIGN=1`` (or ``NIKA_HYPOTHESIS=explore``, fresh random examples) selects
the full size. The slice is the same search with fewer draws: what the test asserts is unchanged.
"""

from __future__ import annotations

import os

CAMPAIGN = os.environ.get("NIKA_CAMPAIGN") == "1" or os.environ.get("NIKA_HYPOTHESIS") == "explore"


def examples(full: int, suite: int) -> int:
    """``full`` in a campaign, ``suite`` in the default run (a Hypothesis ``max_examples``, a
    number of generated cases, a corpus sample's size)."""
    return full if CAMPAIGN else suite
