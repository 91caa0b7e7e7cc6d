"""Why libjq would refuse a program: a message and where, in the program's own offsets."""

from __future__ import annotations

from checker.core.records import record


@record
class JqProblem:
    message: str
    start: int
    end: int
