"""``nika explain``: what a code or lint rule means, and ``--list`` of them all."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from functools import cache
from typing import Any

CHECKER_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "checker")


def register(sub: Any) -> None:
    e = sub.add_parser("explain", help="explain a NIKA code or lint rule")
    e.add_argument("code", nargs="?", help="e.g. NIKA-DAG-001 (or DAG-001), native-first/001")
    e.add_argument("--list", nargs="?", const="", metavar="FILTER", help="list codes and rules (matching FILTER)")
    e.set_defaults(usage_error=e.error)


def run(args: Any) -> int:
    if args.list is not None:
        return explain_list(args.list)
    if not args.code:
        args.usage_error("give a code or rule, or --list")
    return explain(args.code)


def _emit(lines: Iterator[str] | list[str]) -> int:
    """Print ``lines``; a reader that goes away (``| head -1``) ends the output quietly."""
    try:
        for line in lines:
            sys.stdout.write(line + "\n")
        sys.stdout.flush()
    except BrokenPipeError:
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
    return 0


@cache
def _checker_sources() -> str:
    """The checker's code and contract data (not the registry), to tell which codes it emits today."""
    chunks = []
    for dirpath, _dirs, files in os.walk(CHECKER_DIR):
        for name in files:
            if name.endswith(".py") or (name.endswith(".toml") and name != "codes.toml"):
                with open(os.path.join(dirpath, name), encoding="utf-8") as fh:
                    chunks.append(fh.read())
    return "\n".join(chunks)


def judged_statically(code: str) -> bool:
    return f'"{code}"' in _checker_sources() or f"'{code}'" in _checker_sources()


def explain(code: str) -> int:
    from checker.core.codes import lints, lookup, nearest, registry

    raw = code.strip()
    if "/" in raw:
        from checker.core.suggest import did_you_mean

        rule = raw.lower()
        if rule not in lints():
            guess = did_you_mean(rule, lints())
            hint = f"; did you mean {guess}?" if guess else ""
            print(f"nika explain: unknown lint rule `{code}`{hint}", file=sys.stderr)
            return 1
        info = lints()[rule]
        return _emit(
            [
                f"{info.rule}: {info.title}",
                f"lint rule · phase: {info.phase} · severity: {info.severity.value}",
                "",
                info.teaching,
            ]
        )
    key = raw.upper()
    if not key.startswith("NIKA-"):
        key = "NIKA-" + key
    if key not in registry():
        hint = nearest(key)
        msg = f"nika explain: unknown code `{code}`"
        if hint:
            msg += f"; did you mean {', '.join(hint)}?"
        print(msg, file=sys.stderr)
        return 1
    cinfo = lookup(key)
    lines = [
        f"{cinfo.code}: {cinfo.title}",
        f"category: {cinfo.category} · phase: {cinfo.phase} · severity: {cinfo.severity.value}",
    ]
    if cinfo.phase == "run" and judged_statically(cinfo.code):
        lines.append(
            "(raised while a workflow runs; `nika check` accepts the file and warns where every run fails)"
        )
    elif cinfo.phase == "run":
        lines.append("(raised while a workflow runs; `nika check` does not report it)")
    elif cinfo.phase == "both":
        lines.append(
            "(`nika check` refuses what it can decide statically; the rest is raised while a workflow runs)"
        )
    elif not judged_statically(cinfo.code):
        lines.append("(`nika check` does not judge this code yet: it is registered, not implemented)")
    lines += ["", cinfo.teaching]
    if cinfo.code == "NIKA-IMPL-002":
        lines += _unavailable()
    lines += ["", f"docs: https://nika.sh/errors/{cinfo.code}"]
    return _emit(lines)


def _unavailable() -> list[str]:
    """What this build lacks: the one list (the runtime's registries and ``runtime/unbuilt.toml``,
    read as data by :func:`checker.contracts.built_features.built`) that ``nika check`` notes and
    every NIKA-IMPL-002 names."""
    from checker.contracts import tables as contracts
    from checker.contracts.built_features import built
    from checker.grammar.table import SECRET_SOURCES

    have = built()
    if have is None:
        return ["", "(the runtime is not installed beside the checker: nothing here can run)"]
    tools = sorted(set(contracts.tool_ids()) - have.tools)
    sources = sorted(set(SECRET_SOURCES) - have.secret_sources)
    lines = [
        "",
        "Not in this build (details.feature of the NIKA-IMPL-002 it raises):",
        f"  builtin            builtins with no implementation: {', '.join(tools) or 'none'}",
        f"  secret-source      secret sources: {', '.join(sources) or 'none'}",
    ]
    if have.thinking_providers is not None:
        takers = ", ".join(p for p in sorted(have.thinking_providers))
        lines.append(f"  thinking           `infer.thinking:` on any provider but {takers}")
    if have.mock_models is not None:
        lines.append(f"  mock-model         `mock/` models but {', '.join(sorted(have.mock_models))}")
    if have.extract_modes is not None:
        spec = next((a for a in contracts.contract("nika:fetch").args if a.name == "mode"), None)  # type: ignore[union-attr]
        missing = sorted(set(spec.values if spec is not None else ()) - have.extract_modes)
        lines.append(f"  extract-mode       `nika:fetch` extract modes: {', '.join(missing) or 'none'}")
    for u in have.unbuilt:
        lines.append(f"  {u.id:<18} {u.what}" + (f" (planned: {u.until})" if u.until else ""))
    return lines


def explain_list(pattern: str) -> int:
    """One line per code and lint rule whose id or title contains ``pattern`` (case-insensitive)."""
    from checker.core.codes import lints, registry

    needle = pattern.strip().lower()
    rows = [(c, i.title, i.phase) for c, i in registry().items()]
    rows += [(r, i.title, "lint") for r, i in lints().items()]
    hits = [r for r in rows if needle in r[0].lower() or needle in r[1].lower()]
    if not hits:
        print(f"nika explain: nothing matches `{pattern}`", file=sys.stderr)
        return 1
    width = max(len(r[0]) for r in hits)
    return _emit(f"{c:<{width}}  {phase:<5}  {title}" for c, title, phase in hits)
