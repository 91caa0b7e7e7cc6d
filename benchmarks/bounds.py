"""The speed bounds the test suite proves by events and typed results, measured (a benchmark, not a test).

Run from the project root:

    python benchmarks/bounds.py [--rounds 5]

Each row is a median over the rounds, against a floor measured in the same run where one exists
(the machine is shared and noisy: quote the ratios). The tests prove what happens (a refusal comes
before the parser, a timeout's code, which reply comes first); these rows say how fast. Exit 1
when a row is over its goal.

1. fold: rendering 2,000 findings on one line (full and concise: three shown, the rest folded)
   against 2,000 findings on a line each (tests: test_robustness.py::test_many_findings_on_one_line_fold).
   Goal: ≤ 1x (a snippet of the long line per finding would cost hundreds of times more).
2. sse line: one 2 MB SSE line trickled in 1 KiB reads against the same line in one read (tests:
   test_providers_stream.py::test_a_long_line_in_small_reads_is_read_whole). Goal: ≤ 5x (a
   rescan per read is quadratic: thousands of x).
3. deep page: refusing a page nested 50,000 deep against one nested 2,000 deep: the depth scan
   stops at the limit, so the cost does not grow with the depth (tests:
   test_fetch_bad_input.py::test_deep_nesting_is_refused_before_parsing…). Goal: ≤ 2x.
4. timeouts: how long after its `timeout:` a task that would hang ends, for a hanging provider
   (300 ms) and an exec (400 ms) (tests: test_providers_wire.py, test_pipeline.py). Goal: ≤ 1 s late.
5. agent clock: a run whose agent hits `NIKA_AGENT_TIMEOUT` (500 ms) during a 3 s model call
   (tests: test_agent_envelope.py::test_a_run_wall_clock_stops_an_agent_without_timeout). Goal: ≤ 1.5 s.

6. otel: a run exporting to an endpoint that accepts and never answers, with a 0.3 s bound,
   against the same run without telemetry (tests: test_otel_export.py::test_a_silent_endpoint…).
   Goal: ≤ 1 s more (the bound, the 0.25 s grace after it, the SDK set up).
7. lsp: a small document's `semanticTokens/full` answered while a 1 MB one is checked, against
   the same request with nothing else open (tests: test_semantic_tokens_bounds.py); and how soon
   the server exits once the editor's pipe closes during the analysis of 2,000 tasks (tests:
   test_lifecycle.py::test_closing_stdin_during_analysis_exits_promptly). Goals: ≤ 1.5 s, ≤ 1.5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar

ROOT = Path(__file__).resolve().parents[1]
# the fake model servers and the raw LSP client of the tests
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "runtime"), str(ROOT / "tests" / "lsp")]


def median_of(rounds: int, fn: Callable[[], float]) -> float:
    return statistics.median(fn() for _ in range(rounds))


def _clock(fn: Callable[[], object]) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def fold(rounds: int) -> tuple[float, float]:
    from checker.engine.pipeline import compile_text
    from checker.project.report import CheckRun, FileReport
    from nika.output import render

    tail = 'tasks:\n  t: { infer: { model: mock/echo, prompt: "${{ const.x }}" } }\n'

    def run_of(const: str) -> CheckRun:
        c = compile_text("nika: v1\nworkflow: { id: w }\nconst:\n" + const + tail)
        assert [d.code for d in c.diagnostics] == ["NIKA-YAML-008"] * 2000
        return CheckRun((FileReport("x", c.source, c.diagnostics),))

    one_line = run_of("  x: [" + ", ".join([".nan"] * 2000) + "]\n")  # three shown, the rest folded
    own_lines = run_of("  x:\n" + "    - .nan\n" * 2000)  # all 2,000 shown

    def both(run: CheckRun) -> float:
        return _clock(lambda: (render(run, "full"), render(run, "concise")))

    return median_of(rounds, lambda: both(one_line)), median_of(rounds, lambda: both(own_lines))


def sse_line(rounds: int) -> tuple[float, float]:
    from runtime.providers.registry import endpoint_for
    from runtime.providers.stream import sse_events
    from runtime.providers.wire_openai import OpenAIChat

    line = b"data: " + b"x" * 2_000_000 + b"\n\n"

    def read(step: int) -> float:
        class Resp:
            headers: ClassVar[dict[str, str]] = {}

            async def aiter_raw(self):  # type: ignore[no-untyped-def]
                for i in range(0, len(line), step):
                    yield line[i : i + step]

        async def go() -> None:
            wire = OpenAIChat(endpoint_for("openai", {}), None)
            assert [e async for e in sse_events(wire._lines(Resp(), [0]))] == [("message", "x" * 2_000_000)]

        return _clock(lambda: asyncio.run(go()))

    return median_of(rounds, lambda: read(1024)), median_of(rounds, lambda: read(len(line)))


def deep_page(rounds: int) -> tuple[float, float]:
    from runtime.errors import TaskError
    from runtime.extract import Page, extractor

    def page(n: int) -> Page:
        return Page("https://d.example/", b"<html><body>" + b"<div>" * n + b"x" + b"</div>" * n, "text/html")

    def refuse(p: Page) -> float:
        t0 = time.perf_counter()
        try:
            extractor("markdown")(p, {})
        except TaskError:
            return time.perf_counter() - t0
        raise AssertionError("the deep page was not refused")

    deep, shallower = page(50_000), page(2_000)
    refuse(shallower)  # the extractor and its parser load on first use: not part of either side
    return median_of(rounds, lambda: refuse(deep)), median_of(rounds, lambda: refuse(shallower))


def _run(text: str, env: dict[str, str] | None = None) -> float:
    from checker.engine.pipeline import compile_text
    from runtime.engine.options import Options
    from runtime.engine.run import Run
    from runtime.verbs import VERBS

    with tempfile.TemporaryDirectory() as d:
        compiled = compile_text(text, str(Path(d) / "w.nika.yaml"), d)
        run = Run(compiled, {}, Options(trace_dir=None, engine_env=env or {}), verbs=VERBS, workdir=Path(d))
        return _clock(lambda: asyncio.run(run.execute()))


def timeouts(rounds: int) -> tuple[float, float]:
    from fake_llm import Reply, serve

    def provider() -> float:
        with serve([Reply(200, {"choices": []}, delay_s=2.0)]) as fake:
            wf = "nika: v1\nworkflow: { id: t }\ntasks:\n  t:\n    timeout: 300ms\n"
            wf += '    infer: { model: ollama/m, prompt: "hi" }\n'
            return _run(wf, {"NIKA_OLLAMA_BASE_URL": fake.url}) - 0.3

    def exec_() -> float:
        wf = 'nika: v1\nworkflow: { id: t }\npermits: { exec: ["sleep"] }\ntasks:\n  t:\n    timeout: 400ms\n'
        wf += '    exec: { command: ["sleep", "30"] }\n'
        return _run(wf) - 0.4

    return median_of(rounds, provider), median_of(rounds, exec_)


def agent_clock(rounds: int) -> float:
    import json

    from fake_llm import openai, serve
    from test_agent_loop import compose, env, wf

    def once() -> float:
        slow = openai(calls=[compose(2)])
        slow.delay_s = 3.0
        with serve([slow, openai("late")]) as fake:
            clock = json.dumps({"loop": "500ms", "*": "10m"})
            return _run(
                wf('      prompt: "go"\n      tools: ["nika:compose"]'), env(fake.url, NIKA_AGENT_TIMEOUT=clock)
            )

    return median_of(rounds, once)


def otel(rounds: int) -> tuple[float, float]:
    """(a run exporting to a silent endpoint, the same run without telemetry) in seconds."""
    import io
    import os
    import socket

    from nika.commands.run import run_command

    def once(endpoint: str | None) -> float:
        with tempfile.TemporaryDirectory() as d:
            wf = Path(d) / "w.nika.yaml"
            wf.write_text('nika: v1\nworkflow: { id: o }\ntasks:\n  a: { infer: { model: mock/echo, prompt: "x" } }\n')
            saved = dict(os.environ)
            if endpoint:
                os.environ.update({"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_EXPORTER_OTLP_TIMEOUT": "0.3"})
            try:
                return _clock(lambda: run_command(str(wf), trace_dir=d, out=io.StringIO(), err=io.StringIO()))
            finally:
                os.environ.clear()
                os.environ.update(saved)

    silent = socket.socket()  # accepts connections (the backlog) and never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    try:
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        return median_of(rounds, lambda: once(url)), median_of(rounds, lambda: once(None))
    finally:
        silent.close()


def lsp(rounds: int) -> tuple[float, float, float]:
    """(small answer during the big check, the same alone, exit after the pipe closed) in seconds."""
    from raw_client import RawClient
    from test_semantic_tokens_bounds import OTHER, _huge, _open

    from checker.parse.nodes import MAX_DOCUMENT_BYTES

    def tokens(with_big: bool) -> float:
        c = RawClient()
        try:
            c.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
            c.notify("initialized", {})
            _open(c, "file:///b/other.nika.yaml", OTHER)
            c.call("textDocument/semanticTokens/full", {"textDocument": {"uri": "file:///b/other.nika.yaml"}})
            if with_big:
                _open(c, "file:///b/big.nika.yaml", _huge(MAX_DOCUMENT_BYTES - 1024))
                c.request("textDocument/semanticTokens/full", {"textDocument": {"uri": "file:///b/big.nika.yaml"}})
            return _clock(
                lambda: c.call(
                    "textDocument/semanticTokens/full", {"textDocument": {"uri": "file:///b/other.nika.yaml"}}
                )
            )
        finally:
            c.proc.kill()
            c.proc.wait()

    def exit_after_close() -> float:
        c = RawClient()
        c.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
        c.notify("initialized", {})
        big = "nika: v1\nworkflow:\n  id: big\ntasks:\n" + "".join(
            f'  t{i}:\n    infer: {{ prompt: "step {i}" }}\n' for i in range(2000)
        )
        _open(c, "file:///b/big.nika.yaml", big)
        c.request("textDocument/diagnostic", {"textDocument": {"uri": "file:///b/big.nika.yaml"}})
        assert c.proc.stdin is not None
        t0 = time.perf_counter()
        c.proc.stdin.close()
        c.proc.wait(timeout=60)
        return time.perf_counter() - t0

    return (
        median_of(rounds, lambda: tokens(True)),
        median_of(rounds, lambda: tokens(False)),
        median_of(rounds, exit_after_close),
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    rounds = ap.parse_args().rounds
    rows: list[tuple[str, str, bool]] = []
    many, few = fold(rounds)
    rows.append(
        (
            "fold",
            f"2,000 findings on one line {many * 1000:.0f} ms vs on a line each {few * 1000:.0f} ms: "
            f"{many / few:.2f}x (≤ 1x)",
            many <= few,
        )
    )
    small, whole = sse_line(rounds)
    rows.append(
        (
            "sse line",
            f"1 KiB reads {small * 1000:.0f} ms vs one read {whole * 1000:.0f} ms: {small / whole:.1f}x (≤ 5x)",
            small / whole <= 5,
        )
    )
    deep, flat = deep_page(rounds)
    rows.append(
        (
            "deep page",
            f"refusing 50,000 levels {deep * 1000:.1f} ms vs 2,000 levels {flat * 1000:.1f} ms: "
            f"{deep / flat:.1f}x (≤ 2x)",
            deep / flat <= 2,
        )
    )
    provider, exec_late = timeouts(rounds)
    late = max(provider, exec_late)
    rows.append(
        (
            "timeouts",
            f"ended {provider * 1000:.0f} ms (provider) and {exec_late * 1000:.0f} ms (exec) after the timeout (≤ 1 s)",
            late <= 1.0,
        )
    )
    agent = agent_clock(rounds)
    rows.append(("agent clock", f"a 500 ms agent clock stopped the run in {agent:.2f} s (≤ 1.5 s)", agent <= 1.5))
    exporting, plain = otel(rounds)
    rows.append(
        (
            "otel",
            f"a silent endpoint with a 0.3 s bound added {(exporting - plain) * 1000:.0f} ms to the run (≤ 1 s)",
            exporting - plain <= 1.0,
        )
    )
    during, alone, gone = lsp(rounds)
    rows.append(
        (
            "lsp",
            f"small document answered in {during * 1000:.0f} ms during a 1 MB check ({alone * 1000:.0f} ms alone); "
            f"exit {gone * 1000:.0f} ms after the pipe closed (≤ 1.5 s each)",
            during <= 1.5 and gone <= 1.5,
        )
    )
    for name, text, ok in rows:
        print(f"{'ok  ' if ok else 'OVER'}  {name:<12} {text}")
    return 0 if all(ok for _, _, ok in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
