"""Text formats for ``nika:convert`` and ``nika:validate``: YAML, TOML and CSV readers and writers.

Readers return JSON values (objects, arrays, strings, numbers, booleans, null) or raise
:class:`FormatError`; writers take JSON values and return text, or raise :class:`FormatError`
when the value has no faithful form in the target format (a TOML document must be a table and
has no null). Nothing here touches the filesystem.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import tomllib
from datetime import date, datetime, time
from typing import Any


class FormatError(ValueError):
    """Text that does not parse, or a value that cannot be written, in a given format."""


# ── YAML ──────────────────────────────────────────────────────────────────────────────────────


def _yaml(pure: bool = True) -> Any:
    from ruamel.yaml import YAML

    y = YAML(typ="safe", pure=pure)
    y.default_flow_style = False
    y.allow_unicode = True
    y.sort_base_mapping_type_on_output = False
    return y


def load_yaml(text: str) -> Any:
    """One YAML 1.2 document as a JSON value; timestamps become ISO 8601 strings."""
    from ruamel.yaml.error import YAMLError

    try:
        value = _yaml().load(text)
    except YAMLError as e:
        raise FormatError(_first_line(str(e))) from None
    except RecursionError:
        raise FormatError("it nests too deeply") from None
    # Aliases share nodes, so a short text can stand for an exponential tree ("billion laughs")
    # or a cycle. Without aliases a document has fewer nodes than characters; the expansion is
    # bounded by that, so a bomb is refused while any alias-free document (and modest reuse) passes.
    budget = [len(text) + ALIAS_SLACK_NODES]
    try:
        return _jsonable(value, "", budget)
    except RecursionError:
        raise FormatError("it nests too deeply (or an alias refers to itself)") from None


def dump_yaml(value: Any) -> str:
    buf = io.StringIO()
    _yaml().dump(value, buf)
    return buf.getvalue()


ALIAS_SLACK_NODES = 10_000


def _jsonable(value: Any, where: str, budget: list[int] | None = None) -> Any:
    if budget is not None:
        budget[0] -= 1
        if budget[0] < 0:
            raise FormatError(
                f"its aliases expand past {ALIAS_SLACK_NODES} nodes more than the text has characters"
                " (an alias expansion bomb, or an alias that refers to itself)"
            )
    if isinstance(value, dict):
        return {_key(k, where): _jsonable(v, f"{where}/{k}", budget) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v, f"{where}/{i}", budget) for i, v in enumerate(value)]
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, float) and not math.isfinite(value):
        raise FormatError(f"{value} at `{where or '/'}` is not a JSON number")
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise FormatError(f"a {type(value).__name__} at `{where or '/'}` has no JSON form")


def _key(key: Any, where: str) -> str:
    if isinstance(key, str):
        return key
    if key is None or isinstance(key, (bool, int, float)):
        return json.dumps(key)
    raise FormatError(f"a mapping key at `{where or '/'}` is a {type(key).__name__}, not a scalar")


def _first_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return "; ".join(lines[:3]) if lines else "it does not parse"


# ── TOML ──────────────────────────────────────────────────────────────────────────────────────


def load_toml(text: str) -> Any:
    try:
        return _jsonable(tomllib.loads(text), "")
    except tomllib.TOMLDecodeError as e:
        raise FormatError(str(e)) from None


_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def dump_toml(value: Any) -> str:
    """A TOML document for an object: plain keys first, then ``[tables]`` and ``[[arrays]]``."""
    if not isinstance(value, dict):
        raise FormatError("a TOML document is a table, so the value must be an object")
    out: list[str] = []
    _toml_table(value, [], out)
    return "\n".join(out).lstrip("\n") + "\n" if out else ""


def _toml_table(table: dict[str, Any], path: list[str], out: list[str]) -> None:
    nested: list[tuple[str, Any]] = []
    for k, v in table.items():
        if isinstance(v, dict) or (isinstance(v, list) and v and all(isinstance(x, dict) for x in v)):
            nested.append((k, v))
        else:
            out.append(f"{_toml_key(k)} = {_toml_value(v, [*path, k])}")
    for k, v in nested:
        sub = [*path, k]
        header = ".".join(_toml_key(p) for p in sub)
        if isinstance(v, dict):
            out.extend(["", f"[{header}]"])
            _toml_table(v, sub, out)
        else:
            for item in v:
                out.extend(["", f"[[{header}]]"])
                _toml_table(item, sub, out)


def _toml_key(key: str) -> str:
    return key if _BARE_KEY.fullmatch(key) else _toml_string(key)


def _toml_string(text: str) -> str:
    body = "".join(_ESCAPES.get(c, f"\\u{ord(c):04x}" if ord(c) < 0x20 or ord(c) == 0x7F else c) for c in text)
    return f'"{body}"'


def _toml_value(value: Any, path: list[str]) -> str:
    if value is None:
        raise FormatError(f"TOML has no null, and `{'.'.join(path)}` is null")
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "nan"
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        text = repr(value)
        return text if any(c in text for c in ".en") else text + ".0"
    if isinstance(value, str):
        return _toml_string(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(x, [*path, str(i)]) for i, x in enumerate(value)) + "]"
    if isinstance(value, dict):
        inner = ", ".join(f"{_toml_key(k)} = {_toml_value(v, [*path, k])}" for k, v in value.items())
        return "{ " + inner + " }" if inner else "{}"
    raise FormatError(f"a {type(value).__name__} at `{'.'.join(path)}` has no TOML form")


# ── CSV ───────────────────────────────────────────────────────────────────────────────────────


def load_csv(text: str, has_header: bool) -> list[Any]:
    """Rows as objects keyed by the header, or as arrays of strings. Cells stay strings."""
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), strict=True))
    except csv.Error as e:
        raise FormatError(str(e)) from None
    if not has_header:
        return rows
    if not rows:
        return []
    header, body = rows[0], rows[1:]
    if len(set(header)) != len(header):
        dupes = sorted({h for h in header if header.count(h) > 1})
        raise FormatError(f"the header names {', '.join(map(repr, dupes))} more than once")
    out = []
    for n, row in enumerate(body, 2):
        if len(row) != len(header):
            raise FormatError(f"row {n} has {len(row)} fields where the header has {len(header)}")
        out.append(dict(zip(header, row, strict=True)))
    return out


_FORMULA_START = ("=", "+", "-", "@")


def dump_csv(value: Any, has_header: bool, formula_guard: bool) -> str:
    """An array of objects (columns in first-seen key order) or of arrays, as CSV text."""
    if not isinstance(value, list):
        raise FormatError("CSV holds rows, so the value must be an array of objects or of arrays")
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")

    def cell(v: Any) -> str:
        text = "" if v is None else v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
        if formula_guard and (text[:1] in ("\t", "\r") or text.lstrip()[:1] in _FORMULA_START):
            return "'" + text
        return text

    if value and all(isinstance(r, dict) for r in value):
        columns: dict[str, None] = {}
        for row in value:
            columns.update(dict.fromkeys(row))
        if has_header:
            writer.writerow([cell(c) for c in columns])
        for row in value:
            writer.writerow([cell(row.get(c)) for c in columns])
    elif all(isinstance(r, list) for r in value):
        for row in value:
            writer.writerow([cell(c) for c in row])
    else:
        raise FormatError("every CSV row must be an object, or every row an array")
    return buf.getvalue()
