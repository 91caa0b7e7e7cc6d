"""Project configuration: ``[tool.nika]`` in ``pyproject.toml`` or a ``nika.toml``, found upward.

For each checked file the nearest directory (starting at the file's own) holding a ``nika.toml``
(whole file, or its ``[tool.nika]`` table) or a ``pyproject.toml`` with a ``[tool.nika]`` table
supplies the settings; ``nika.toml`` wins when both sit in one directory. Keys::

    select = ["NIKA", "native-first"]      # only these codes, namespaces, lint families or rules
    ignore = ["one-obvious-way/005"]        # never these
    native-strict = true                    # native-first findings fail the check
    strict = true                           # any warning fails the check
    exclude = ["tests/fixtures/**"]         # skipped when a directory is searched (gitignore-style
                                            # path globs relative to the config file's directory)
    [tool.nika.per-file-ignores]
    "legacy/**" = ["native-first"]          # globs relative to the config file's directory
    [tool.nika.severity]
    "NIKA-DAG-006" = "warning"              # per code, namespace, family or rule
    max-cost-usd = 2.5                      # `nika run`: the run's cost cap (`--max-cost-usd` wins)
    fetch-allow-private = ["127.0.0.1", "10.0.0.0/8"]  # `nika run`: hosts and CIDR ranges the SSRF
                                            # floor lets through, joined to NIKA_FETCH_ALLOW_PRIVATE

Structural findings (NIKA-PARSE, NIKA-YAML) are never filtered out or demoted. A malformed file
is a :class:`SettingsError` naming the file and the key, with a did-you-mean for unknown keys.
"""

from __future__ import annotations

import fnmatch
import math
import os
from functools import lru_cache
from typing import Any

from checker.core.diagnostics import Diagnostic, Severity
from checker.core.records import field, record, replace
from checker.project.config_files import SettingsError

KEYS = (
    "select",
    "ignore",
    "per-file-ignores",
    "severity",
    "native-strict",
    "strict",
    "exclude",
    "max-cost-usd",
    "serve",  # `nika serve`'s schedules and webhooks (nika/serve/config.py judges the table)
    "fetch-allow-private",
)
STRUCTURAL = ("NIKA-PARSE", "NIKA-YAML")
FAMILIES = ("native-first", "one-obvious-way", "suppression")
_LEVELS = {s.value: s for s in Severity}


@record(slots=False)
class Settings:
    """What applies to one file; ``origin`` is the configuration file (``None``: defaults)."""

    origin: str | None = None
    root: str | None = None  # the directory per-file-ignores globs are relative to
    select: tuple[str, ...] | None = None
    ignore: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    severity: tuple[tuple[str, Severity], ...] = ()
    native_strict: bool = False
    strict: bool = False
    exclude: tuple[str, ...] = ()
    explicit: frozenset[str] = field(default_factory=frozenset)  # keys the file set
    max_cost_usd: float | None = None  # read by `nika run` (runtime.providers.cost), not by the checker
    fetch_allow_private: tuple[str, ...] = ()  # read by `nika run` (runtime.net.ssrf), not by the checker

    def excludes(self, path: str) -> bool:
        """Whether an ``exclude`` glob (relative to the configuration's directory) covers ``path``."""
        if not self.exclude or self.root is None:
            return False
        from checker.core.globs import match_path

        rel = os.path.relpath(os.path.abspath(path), self.root).replace(os.sep, "/")
        return any(match_path(glob, rel) for glob in self.exclude)

    def ignored_for(self, path: str) -> tuple[str, ...]:
        """The selectors ``ignore`` and the matching ``per-file-ignores`` globs give ``path``."""
        out = list(self.ignore)
        for glob, sels in self.per_file_ignores:
            if _glob_hits(self, path, glob):
                out.extend(sels)
        return tuple(out)


DEFAULT = Settings()


def matches(selector: str, d: Diagnostic) -> bool:
    """A selector names a code (``NIKA-DAG-002`` or ``DAG-002``), a code prefix or namespace
    (``NIKA-DAG``, ``NIKA``), a lint rule (``native-first/001``) or a lint family (``native-first``)."""
    s = selector.strip()
    if d.rule is not None and (s == d.rule or d.rule.startswith(s + "/")):
        return True
    if d.code is None:
        return False
    code = d.code
    full = s if s.startswith("NIKA") else "NIKA-" + s
    return code == full or code.startswith(full + "-")


def known_selector(selector: str) -> bool:
    from checker.core.codes import lints, registry

    s = selector.strip()
    if not s:
        return False
    rules = lints()
    if s in rules or any(r.startswith(s + "/") for r in rules):
        return True
    full = s if s.startswith("NIKA") else "NIKA-" + s
    return any(c == full or c.startswith(full + "-") for c in registry())


# -- discovery ------------------------------------------------------------------------------


def settings_for(path: str) -> Settings:
    """The settings that apply to ``path`` (``-`` means standard input: search from the cwd)."""
    from checker.project.config_files import config_file_for, signature

    found = config_file_for(path)
    return DEFAULT if found is None else _load_cached(*found, signature(found[0]))


@lru_cache(maxsize=64)
def _load_cached(path: str, is_pyproject: bool, sig: tuple[int, int, int] | None) -> Settings:
    """:func:`load`, remembered for as long as the file's signature stays the same."""
    return load(path, is_pyproject)


def load(path: str, is_pyproject: bool) -> Settings:
    import tomllib

    from checker.core.reader import FileReadError, read_file
    from checker.project.config_files import MAX_CONFIG_BYTES

    try:
        data = tomllib.loads(read_file(path, MAX_CONFIG_BYTES).decode("utf-8"))
    except FileReadError as exc:
        raise SettingsError(path, None, f"cannot read ({exc.reason})") from None
    except UnicodeDecodeError:
        raise SettingsError(path, None, "not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(path, None, f"not valid TOML ({exc})") from None
    table: Any = data.get("tool", {}).get("nika") if isinstance(data.get("tool"), dict) else None
    if table is None:
        if is_pyproject:
            return Settings(origin=path, root=os.path.dirname(path))
        table = data
    prefix = "tool.nika." if (is_pyproject or "tool" in data) else ""
    if not isinstance(table, dict):
        raise SettingsError(path, prefix.rstrip(".") or None, "must be a table")
    return parse(table, path, prefix)


def parse(table: dict[str, Any], path: str, prefix: str = "") -> Settings:
    from checker.core.suggest import did_you_mean

    for key in table:
        if key not in KEYS:
            guess = did_you_mean(key, KEYS) or did_you_mean(key.replace("_", "-"), KEYS)
            hint = f"; did you mean `{guess}`?" if guess else f"; known keys: {', '.join(KEYS)}"
            raise SettingsError(path, prefix + key, "unknown setting" + hint)
    kw: dict[str, Any] = {"origin": path, "root": os.path.dirname(os.path.abspath(path)), "explicit": frozenset(table)}
    if "select" in table:
        kw["select"] = _selectors(table["select"], path, prefix + "select")
    if "ignore" in table:
        kw["ignore"] = _selectors(table["ignore"], path, prefix + "ignore")
    for key, attr in (("native-strict", "native_strict"), ("strict", "strict")):
        if key in table:
            if not isinstance(table[key], bool):
                raise SettingsError(path, prefix + key, "must be true or false")
            kw[attr] = table[key]
    if "max-cost-usd" in table:
        cap = table["max-cost-usd"]
        if isinstance(cap, bool) or not isinstance(cap, int | float) or not math.isfinite(cap) or cap < 0:
            raise SettingsError(path, prefix + "max-cost-usd", "must be a non-negative number of US dollars")
        kw["max_cost_usd"] = float(cap)
    if "fetch-allow-private" in table:
        allow = table["fetch-allow-private"]
        if not isinstance(allow, list) or not all(
            isinstance(x, str) and x.strip() and "," not in x and not any(c.isspace() for c in x.strip()) for x in allow
        ):
            raise SettingsError(
                path,
                prefix + "fetch-allow-private",
                'must be a list of host names and CIDR ranges, one per string, e.g. ["127.0.0.1", "10.0.0.0/8"]',
            )
        kw["fetch_allow_private"] = tuple(x.strip() for x in allow)
    if "serve" in table and not isinstance(table["serve"], dict):
        raise SettingsError(path, prefix + "serve", "must be a table (schedules and webhooks of `nika serve`)")
    if "exclude" in table:
        ex = table["exclude"]
        if not isinstance(ex, list) or not all(isinstance(x, str) and x for x in ex):
            raise SettingsError(path, prefix + "exclude", 'must be a list of path globs, e.g. ["tests/fixtures/**"]')
        kw["exclude"] = tuple(ex)
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise SettingsError(path, prefix + "per-file-ignores", 'must be a table of glob = ["selector", …]')
        kw["per_file_ignores"] = tuple(
            (glob, _selectors(sels, path, f'{prefix}per-file-ignores."{glob}"')) for glob, sels in pfi.items()
        )
    if "severity" in table:
        sev = table["severity"]
        if not isinstance(sev, dict):
            raise SettingsError(path, prefix + "severity", 'must be a table of selector = "error|warning|info|hint"')
        out = []
        for sel, level in sev.items():
            key = f'{prefix}severity."{sel}"'
            _check_selector(sel, path, key)
            if level not in _LEVELS:
                raise SettingsError(path, key, f"`{level}` is not a severity; use one of {', '.join(_LEVELS)}")
            if _structural(sel):
                raise SettingsError(path, key, "structural findings (NIKA-PARSE, NIKA-YAML) keep their severity")
            out.append((sel, _LEVELS[level]))
        kw["severity"] = tuple(out)
    return Settings(**kw)


def _structural(sel: str) -> bool:
    full = sel if sel.startswith("NIKA") else "NIKA-" + sel
    return any(full == ns or full.startswith(ns + "-") for ns in STRUCTURAL)


def _selectors(value: Any, path: str, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise SettingsError(path, key, "must be a list of strings (codes, namespaces, lint families or rules)")
    for sel in value:
        _check_selector(sel, path, key)
    return tuple(value)


def _check_selector(sel: str, path: str, key: str) -> None:
    if known_selector(sel):
        return
    from checker.core.codes import lints, nearest
    from checker.core.suggest import did_you_mean

    if "/" in sel or sel[:1].islower():
        guess = did_you_mean(sel, [*lints(), *FAMILIES])
    else:
        guess = next(iter(nearest(sel, 1)), None)
    hint = f"; did you mean `{guess}`?" if guess else ""
    raise SettingsError(path, key, f"`{sel}` is not a code, namespace, lint family or rule{hint}")


# -- applying -------------------------------------------------------------------------------


def apply(
    diags: tuple[Diagnostic, ...], settings: Settings, path: str, *, native_strict: bool = False
) -> tuple[Diagnostic, ...]:
    """Filter and re-grade findings as ``settings`` (and the command line) ask."""

    ignored = settings.ignored_for(path)
    strict_native = native_strict or settings.native_strict
    out: list[Diagnostic] = []
    for d in diags:
        structural = d.namespace in STRUCTURAL
        if not structural:
            if settings.select is not None and not any(matches(s, d) for s in settings.select):
                continue
            if any(matches(s, d) for s in ignored):
                continue
            level = _override(d, settings)
            if strict_native and d.rule is not None and d.rule.startswith("native-first/"):
                level = Severity.ERROR
            if level is not None and level is not d.severity:
                d = replace(d, severity=level)
        out.append(d)
    return tuple(out)


def _override(d: Diagnostic, settings: Settings) -> Severity | None:
    """The most specific severity override matching ``d`` (a longer selector is more specific)."""
    best: tuple[int, Severity] | None = None
    for sel, level in settings.severity:
        if matches(sel, d) and (best is None or len(sel) > best[0]):
            best = (len(sel), level)
    return best[1] if best else None


def describe(settings: Settings, path: str) -> str:
    """``--show-settings``: what applies to ``path`` and where it came from, in TOML spelling."""
    import json

    def origin(key: str) -> str:
        return f"# from {settings.origin}" if key in settings.explicit else "# default"

    def show(key: str, value: object) -> str:
        left = f"{key} = {value}"
        return f"{left:<48} {origin(key)}"

    pfi = {g: list(s) for g, s in settings.per_file_ignores}
    applied = [g for g in pfi if _glob_hits(settings, path, g)]
    lines = [
        f"# file: {path}",
        f"# configuration: {settings.origin or 'none found (defaults)'}",
        show("select", json.dumps(list(settings.select)))
        if settings.select is not None
        else "# select: not set (every code and rule)",
        show("ignore", json.dumps(list(settings.ignore))),
        show("native-strict", str(settings.native_strict).lower()),
        show("strict", str(settings.strict).lower()),
        show("per-file-ignores", json.dumps(pfi)),
        f"#   matching this file: {json.dumps(applied)}",
        show("severity", json.dumps({s: lv.value for s, lv in settings.severity})),
        show("exclude", json.dumps(list(settings.exclude))),
        f"#   this file is {'excluded from' if settings.excludes(path) else 'included in'} directory searches",
        f"# in effect for this file: ignore {json.dumps(list(settings.ignored_for(path)))}",
        "# read by `nika run`:",
        show("max-cost-usd", json.dumps(settings.max_cost_usd))
        if settings.max_cost_usd is not None
        else "# max-cost-usd: not set (no run-wide cost cap)",
        show("fetch-allow-private", json.dumps(list(settings.fetch_allow_private))),
    ]
    return "\n".join(lines) + "\n"


def _glob_hits(settings: Settings, path: str, glob: str) -> bool:
    if settings.root is None:
        return False
    rel = os.path.relpath(os.path.abspath(path), settings.root).replace(os.sep, "/")
    return fnmatch.fnmatchcase(rel, glob) or fnmatch.fnmatchcase(os.path.basename(rel), glob)
