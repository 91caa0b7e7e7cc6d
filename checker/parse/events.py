"""ruamel.yaml's event parsers behind one ``get_event`` protocol: the C parser from
ruamel.yaml.clib when importable, else the pure-Python one; a leading byte order mark is
counted, so every mark indexes the text as the editor holds it."""

from __future__ import annotations

from typing import Any

from ruamel.yaml.error import YAMLError


class Mark:
    """A position the parsers' error marks are rewritten to (``index`` only)."""

    def __init__(self, index: int) -> None:
        self.index = index


def make_parser(text: str, pure: bool = False) -> Any:
    if text.startswith("\ufeff"):
        # Both parsers drop a leading byte order mark and count from the character after it,
        # while every span indexes the text as the editor holds it, BOM included.
        return _Shifted(make_parser(text[1:], pure), 1)
    if pure:
        return _pure_parser(text)
    try:
        from _ruamel_yaml import CParser  # type: ignore[import-not-found]

        return CParser(text)
    except ImportError:  # pragma: no cover - exercised only without ruamel.yaml.clib
        return _pure_parser(text)


def _pure_parser(text: str) -> Any:
    from ruamel.yaml import YAML

    return _PureEvents(YAML(typ="safe", pure=True).parse(text))


class _Shifted:
    """A parser over a suffix of the text whose marks are moved to index the whole text."""

    def __init__(self, inner: Any, by: int) -> None:
        self._inner = inner
        self._by = by

    def get_event(self) -> Any:
        by = self._by
        try:
            ev = self._inner.get_event()
        except YAMLError as exc:
            for name in ("problem_mark", "context_mark"):
                mark = getattr(exc, name, None)
                if mark is not None and isinstance(getattr(mark, "index", None), int):
                    setattr(exc, name, Mark(mark.index + by))
            if isinstance(getattr(exc, "position", None), int):
                exc.position += by  # type: ignore[attr-defined]
            raise
        if ev is not None:
            ev.start_mark = Mark(ev.start_mark.index + by)
            ev.end_mark = Mark(ev.end_mark.index + by)
        return ev


class _PureEvents:
    """Adapts the pure-Python event generator to the C parser's ``get_event`` protocol."""

    def __init__(self, gen: Any) -> None:
        self._gen = gen

    def get_event(self) -> Any:
        return next(self._gen, None)
