"""The server's settings: one typed, frozen object, parsed once from whatever the client sends.

Settings arrive as ``initializationOptions`` (with ``initialize``), with
``workspace/didChangeConfiguration``, or as the answer to ``workspace/configuration`` for the
``nika`` section. Clients shape them differently; all of these are read:

* ``{"inlayHints": false}`` (our section itself: initialization options, a configuration answer),
* ``{"nika": {"inlayHints": false}}`` (the section under its name),
* ``{"nika.inlayHints": false}`` (flattened dotted keys).

A key we do not know, or a value of the wrong type, is reported in one log line and otherwise
ignored; keys that are not sent keep their current value.
"""

from __future__ import annotations

from typing import Any

from checker.core.records import record, replace

SECTION = "nika"


@record
class Settings:
    """What a user may configure, with its defaults."""

    inlay_hints: bool = True
    """Show each task's wave and incoming edges as inlay hints."""

    run_lenses: bool = False
    """Offer a "Run task" code lens on each task (command ``nika.runTask``): off unless the client
    implements that command (the VS Code extension turns it on)."""


# The client-side (camelCase) name of each setting, and the type its value must have.
_KEYS: dict[str, tuple[str, type]] = {"inlayHints": ("inlay_hints", bool), "runLenses": ("run_lenses", bool)}

# Settings of the same section that the editor's extension reads itself (which `nika` to start, with
# which arguments, and protocol tracing): a client that synchronises the whole section sends them
# too, so they are not "unknown" here, only not ours.
_CLIENT_KEYS = frozenset({"path", "args", "trace"})


@record
class Parsed:
    """The outcome of reading one payload: the new settings, whether the payload held our
    section at all, and one sentence per key that was ignored."""

    settings: Settings
    found: bool
    problems: tuple[str, ...]


def _section(payload: Any, *, bare: bool) -> dict[str, Any] | None:
    """Our section out of ``payload``; with ``bare``, a mapping without a ``nika`` key is taken
    as the section itself (initialization options and configuration answers are sent bare)."""
    if not isinstance(payload, dict):
        return None
    dotted = {k[len(SECTION) + 1 :]: v for k, v in payload.items() if k.startswith(SECTION + ".")}
    nested = payload.get(SECTION)
    if isinstance(nested, dict):
        return {**nested, **dotted}
    if dotted:
        return dotted
    if bare:
        return payload
    # didChangeConfiguration may carry every tool's settings: only our known keys are ours.
    own = {k: v for k, v in payload.items() if k in _KEYS}
    return own or None


def parse(payload: Any, current: Settings | None = None, *, bare: bool = False) -> Parsed:
    """``current`` updated with the settings ``payload`` gives (see the module docstring)."""
    base = current if current is not None else Settings()
    section = _section(payload, bare=bare)
    if section is None:
        return Parsed(base, False, ())
    updates: dict[str, Any] = {}
    problems: list[str] = []
    for key, value in section.items():
        known = _KEYS.get(key)
        if known is None and key in _CLIENT_KEYS:
            continue
        if known is None:
            problems.append(f"unknown setting `{SECTION}.{key}` ignored (known: {', '.join(sorted(_KEYS))})")
            continue
        attr, kind = known
        if value is None:
            continue  # unset: keep the current value
        if type(value) is not kind:
            problems.append(
                f"setting `{SECTION}.{key}` ignored: expected {kind.__name__}, got {type(value).__name__} {value!r}"
            )
            continue
        updates[attr] = value
    return Parsed(replace(base, **updates), True, tuple(problems))
