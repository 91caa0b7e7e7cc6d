"""Seeded mutation fuzzing of ``nika check``: real workflows, damaged in many small ways.

The seeds are the project's own examples and golden cases, and the upstream templates when
``../shared/nika-spec`` is present. Each mutant (bytes deleted, duplicated, swapped or inserted;
lines moved; tokens replaced; YAML-significant characters, huge numbers, odd line breaks and
invalid UTF-8 spliced in) must come out of the checker with:

- no internal-error finding (NIKA-IMPL-*),
- every span inside the file, and in the JSON report a line and column that agree with the byte
  offset, recomputed here from the raw bytes,
- a JSON report that parses, and every other format rendering without an exception,
Everything is deterministic (fixed seeds). ``scripts/fuzz_check.py`` runs the same mutator for
as long as you like, saves what breaks, and bounds the time per file (a measure, so never a test's:
a loaded machine is not a broken checker).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from checker import compile_bytes, compile_text
from checker.model.workflow import CompiledWorkflow
from checker.project.report import CheckRun, FileReport
from nika.output import FORMATS, render

ROOT = Path(__file__).resolve().parents[2]
TEMPLATES = ROOT.parent / "shared" / "nika-spec" / "templates"

_TOKENS = [
    ": ", "- ", "-", ":", "[", "]", "{", "}", ",", "#", "? ", "|", "|-", ">", "'", '"', "\\", "\t",
    "&a ", "*a", "!!str ", "!!int ", "!custom ", "<<: ", "~", "null", "true", "no", ".nan", "-.inf",
    "${{", "}}", "${{ tasks.a.output }}", "${{ with.x", "tasks.", "---\n", "...\n", "%YAML 1.2\n",
    "0x1F", "0o17", "1e999", "0755", "é", "e\u0301", "🍰", "\u200b", "\x00", "\x1b", "\x7f",
    "\ufeff", "\u2028", "\x85", "after: { ghost: success }", "types:\n  A: A\n  B: A\n",
]  # fmt: skip
_HUGE = [
    "9" * 4301, "-" + "1" * 5000, "0x" + "f" * 4000, "0o" + "7" * 6000, "1" * 4300, "1e" + "9" * 500,
    "0." + "3" * 5000, "[" + ", ".join(["7" * 4400] * 3) + "]", "x" * 70_000,
]  # fmt: skip
_BREAKS = ["\r", "\r\n", "\n", "\r\r", "\n\r"]
_BAD_UTF8 = [b"\xff", b"\xfe\xff", b"\xc3", b"\xe2\x82", b"\xed\xa0\x80", b"\xf0\x9f\x8d", b"\x80", b"\xc0\xaf"]
_WORD = re.compile(rb"[A-Za-z0-9_]+|\S")
_BREAK = re.compile(rb"\r\n?|\n")


def _cut(rng: random.Random, n: int, longest: int = 40) -> tuple[int, int]:
    a = rng.randrange(n + 1)
    return a, min(n, a + rng.randint(0, longest))


def mutate(data: bytes, rng: random.Random, tokens: list[bytes]) -> bytes:
    """One random damage to ``data`` (a workflow file's bytes)."""
    n = len(data)
    kind = rng.randrange(14)
    if kind == 0:  # delete a range
        a, b = _cut(rng, n)
        return data[:a] + data[b:]
    if kind == 1:  # duplicate a range
        a, b = _cut(rng, n)
        return data[:b] + data[a:b] + data[b:]
    if kind == 2:  # swap two ranges
        a, b = sorted(_cut(rng, n))
        c, d = sorted(_cut(rng, n))
        if b <= c:
            return data[:a] + data[c:d] + data[b:c] + data[a:b] + data[d:]
        return data[::-1] if rng.random() < 0.05 else data
    if kind == 3:  # insert a random byte
        a = rng.randrange(n + 1)
        return data[:a] + bytes([rng.randrange(256)]) + data[a:]
    if kind in (4, 5):  # insert a YAML-significant token
        a = rng.randrange(n + 1)
        return data[:a] + rng.choice(_TOKENS).encode("utf-8") + data[a:]
    if kind == 6:  # a huge number or a huge scalar, after some `: `
        spots = [m.end() for m in re.finditer(rb": ", data)] or [n]
        a = rng.choice(spots)
        b = a + len(re.match(rb"[^\r\n,}\]]*", data[a:]).group())  # type: ignore[union-attr]
        return data[:a] + rng.choice(_HUGE).encode() + data[b:]
    if kind == 7:  # odd line breaks: replace some or all
        new = rng.choice(_BREAKS).encode()
        if rng.random() < 0.5:
            return _BREAK.sub(new, data)
        return _BREAK.sub(lambda m: new if rng.random() < 0.3 else m.group(), data)
    if kind == 8:  # invalid UTF-8
        a = rng.randrange(n + 1)
        return data[:a] + rng.choice(_BAD_UTF8) + data[a:]
    lines = data.splitlines(keepends=True) or [b""]
    if kind == 9:  # line-level: delete, duplicate, swap or re-indent
        i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
        op = rng.randrange(4)
        if op == 0:
            del lines[i]
        elif op == 1:
            lines.insert(j, lines[i])
        elif op == 2:
            lines[i], lines[j] = lines[j], lines[i]
        else:
            lines[i] = (b" " * rng.randint(1, 3) + lines[i]) if rng.random() < 0.5 else lines[i].lstrip(b" ")
        return b"".join(lines)
    words = list(_WORD.finditer(data))
    if not words:
        return data + rng.choice(tokens)
    m = rng.choice(words)
    if kind in (10, 11):  # replace a token with one seen elsewhere in the corpus
        return data[: m.start()] + rng.choice(tokens) + data[m.end() :]
    if kind == 12:  # delete a token
        return data[: m.start()] + data[m.end() :]
    return data[: m.start()] + m.group() + m.group() + data[m.end() :]  # duplicate a token


def mutants(seeds: list[bytes], count: int, seed: int, depth: int = 3) -> Iterator[bytes]:
    """``count`` mutants of the seed files, one to ``depth`` damages each, reproducible from ``seed``.

    One mutant in ten starts as a splice of two seed files (the head of one, the tail of another).
    """
    rng = random.Random(seed)
    tokens = sorted({m.group() for s in seeds for m in _WORD.finditer(s)})
    for _ in range(count):
        data = rng.choice(seeds)
        if rng.random() < 0.1:
            other = rng.choice(seeds)
            data = data[: rng.randrange(len(data) + 1)] + other[rng.randrange(len(other) + 1) :]
        for _ in range(rng.randint(1, depth)):
            data = mutate(data, rng, tokens)
        yield data


def _expected_position(data: bytes, breaks: list[int], offset: int) -> tuple[int, int]:
    """Line and column of a byte offset, computed from the raw bytes (breaks: offsets after each break)."""
    import bisect

    line = bisect.bisect_right(breaks, offset)
    start = breaks[line - 1] if line else 0
    return line + 1, len(data[start:offset].decode("utf-8", "surrogateescape")) + 1


def check_one(data: bytes) -> list[str]:
    """Every broken promise for one input (empty when the checker behaved)."""
    try:
        compiled = compile_bytes(data, "fuzz.nika.yaml")
    except Exception as exc:  # compile_bytes promises never to raise
        return [f"compile_bytes raised {type(exc).__name__}: {exc}"]
    return _judge(compiled, data)


def _judge(compiled: CompiledWorkflow, data: bytes | None) -> list[str]:
    problems = []
    src = compiled.source
    size = len(src.text)
    for d in compiled.diagnostics:
        if d.namespace == "NIKA-IMPL":
            problems.append(f"internal error: {d.message}")
        spans = [d.span, *(lb.span for lb in d.related), *(e.span for f in d.fixes for e in f.edits)]
        for sp in spans:
            if not 0 <= sp.start <= sp.end <= size:
                problems.append(f"{d.code or d.rule}: span {sp} outside 0..{size}")
    run = CheckRun((FileReport("fuzz.nika.yaml", src, compiled.diagnostics),))
    for fmt in FORMATS:
        try:
            out = render(run, fmt)
        except Exception as exc:
            problems.append(f"{fmt} rendering raised {type(exc).__name__}: {exc}")
            continue
        if fmt != "json":
            continue
        try:
            doc = json.loads(out)
        except ValueError as exc:
            problems.append(f"json output does not parse: {exc}")
            continue
        if data is None:
            continue
        breaks = [m.end() for m in _BREAK.finditer(data)]
        for f in doc["reports"][0]["findings"]:
            for end in ("start", "end"):
                pos = f["span"][end]
                off = pos["offset"]
                if not 0 <= off <= len(data):
                    problems.append(f"{f['code'] or f['rule']}: byte offset {off} outside 0..{len(data)}")
                elif (pos["line"], pos["column"]) != _expected_position(data, breaks, off):
                    want = _expected_position(data, breaks, off)
                    problems.append(f"{f['code'] or f['rule']}: {pos} but the bytes say line/column {want}")
    return problems


def check_text(text: str) -> list[str]:
    """The language server's path: a str that may hold lone surrogates."""
    try:
        compiled = compile_text(text, "fuzz.nika.yaml")
    except Exception as exc:
        return [f"compile_text raised {type(exc).__name__}: {exc}"]
    return _judge(compiled, None)


def own_seeds() -> list[bytes]:
    files = sorted((ROOT / "examples").glob("*.nika.yaml"))
    files += sorted((ROOT / "tests" / "checker" / "cases").rglob("*.nika.yaml"))
    return [p.read_bytes() for p in files]


def template_seeds() -> list[bytes]:
    return [p.read_bytes() for p in sorted(TEMPLATES.glob("*.nika.yaml"))] if TEMPLATES.is_dir() else []


def _run(seeds: list[bytes], count: int, seed: int) -> None:
    failures = []
    for i, data in enumerate(mutants(seeds, count, seed)):
        problems = check_one(data)
        if problems:
            failures.append(f"mutant #{i} (seed {seed}): {problems[:3]}\n  input: {data[:300]!r}")
    assert not failures, f"{len(failures)} of {count} mutants broke a promise:\n" + "\n".join(failures[:5])


def test_seed_files_are_present() -> None:
    assert len(own_seeds()) >= 10


@pytest.mark.parametrize("seed", [1, 2])
def test_fuzz_project_files(seed: int) -> None:
    _run(own_seeds(), 150, seed)  # a fixed slice: the campaign is scripts/fuzz_check.py (`.ci/run campaigns`)


def test_fuzz_templates() -> None:
    seeds = template_seeds()
    if not seeds:
        pytest.skip(f"templates not found at {TEMPLATES} (clone nika-spec next to the project)")
    _run(seeds, 200, 3)


def test_fuzz_lone_surrogates_in_text() -> None:
    rng = random.Random(4)
    failures = []
    for data in mutants(own_seeds(), 100, 5):
        text = data.decode("utf-8", "replace")
        at = rng.randrange(len(text) + 1)
        text = text[:at] + chr(rng.randrange(0xD800, 0xE000)) + text[at:]
        if problems := check_text(text):
            failures.append(f"{problems[:3]} in {text[:200]!r}")
    assert not failures, "\n".join(failures[:5])


def test_expected_position_counts_every_break_and_bad_bytes_as_one_column() -> None:
    data = b"a\rb\r\nc\xff\xfed\n"
    breaks = [m.end() for m in _BREAK.finditer(data)]
    assert _expected_position(data, breaks, 0) == (1, 1)
    assert _expected_position(data, breaks, 2) == (2, 1)
    assert _expected_position(data, breaks, 8) == (3, 4)  # c, \xff, \xfe count one column each
