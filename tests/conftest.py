"""Settings for the whole suite.

Property tests run under one Hypothesis profile: no per-example deadline and no "input
generation is slow" health check, because CI machines are shared and a loaded core makes both
fire on tests that are fine (the suite runs on every core with pytest-xdist); the examples are
derived from each test's name (``derandomize``), so a CI run is reproducible and a failure
replays. ``NIKA_HYPOTHESIS=explore`` keeps the checks' speed limits off but draws fresh random
examples, for a longer search by hand.
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "suite", deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large], derandomize=True
)
settings.register_profile("explore", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("explore" if os.environ.get("NIKA_HYPOTHESIS") == "explore" else "suite")
