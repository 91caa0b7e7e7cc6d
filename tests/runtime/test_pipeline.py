"""The dispatch pipeline: retry/backoff, timeout, on_error, output bindings, for_each, on_finally."""

from __future__ import annotations

import pytest
from rt_helpers import statuses

from runtime import builtins
from runtime.engine.retry import backoff_ms as _backoff_ms
from runtime.errors import TaskError


@pytest.fixture
def flaky(monkeypatch):
    """`nika:log` replaced by a tool failing transiently (or not) a given number of times."""
    calls: list[str] = []

    def install(failures: int, *, transient: bool = True, code: str = "NIKA-BUILTIN-001") -> list[str]:
        async def impl(args, ctx):
            calls.append(args["message"])
            if len(calls) <= failures:
                raise TaskError(code, "flaky", transient=transient)
            return f"ok after {len(calls)}"

        monkeypatch.setitem(builtins.REGISTRY, "nika:log", impl)
        return calls

    return install


RETRY_WF = """\
nika: v1
workflow: {{ id: retry }}
tasks:
  t:
    retry: {{ max_attempts: 3, backoff_ms: 1, backoff_strategy: {strategy}{extra} }}
    invoke: {{ tool: "nika:log", args: {{ message: "hi" }} }}
"""


@pytest.mark.parametrize("strategy", ["fixed", "linear", "exponential"])
def test_transient_errors_are_retried(run, flaky, strategy):
    calls = flaky(2)
    result = run(RETRY_WF.format(strategy=strategy, extra=""))
    assert result.tasks["t"].status == "success"
    assert result.tasks["t"].output == "ok after 3"
    assert len(calls) == 3
    assert [e["attempt"] for e in result.events if e["type"] == "task.retrying"] == [1, 2]


def test_max_attempts_is_honoured_and_the_last_error_surfaces(run, flaky):
    calls = flaky(5)
    result = run(RETRY_WF.format(strategy="fixed", extra=""))
    assert result.tasks["t"].status == "failure"
    assert len(calls) == 3
    assert result.tasks["t"].error["attempt"] == 3


def test_non_transient_errors_are_not_retried(run, flaky):
    calls = flaky(1, transient=False)
    result = run(RETRY_WF.format(strategy="fixed", extra=""))
    assert result.tasks["t"].status == "failure" and len(calls) == 1


def test_on_codes_retries_listed_codes_even_when_not_transient(run, flaky):
    calls = flaky(1, transient=False, code="NIKA-BUILTIN-001")
    result = run(RETRY_WF.format(strategy="fixed", extra=", on_codes: [NIKA-BUILTIN-001]"))
    assert result.tasks["t"].status == "success" and len(calls) == 2


def test_backoff_strategies_and_cap():
    assert [_backoff_ms("fixed", 100, 1000, a) for a in (1, 2, 3)] == [100, 100, 100]
    assert [_backoff_ms("linear", 100, 1000, a) for a in (1, 2, 3)] == [100, 200, 300]
    assert [_backoff_ms("exponential", 100, 1000, a) for a in (1, 2, 3, 5)] == [100, 200, 400, 1000]


def test_timeout_stops_the_verb_and_is_never_retried(run):
    result = run(
        """\
        nika: v1
        workflow: { id: slow }
        permits: { exec: true }
        tasks:
          t:
            timeout: "200ms"
            retry: { max_attempts: 3, backoff_ms: 1, on_codes: [NIKA-TIMEOUT-001] }
            exec: { command: ["sleep", "5"] }
        """
    )
    rec = result.tasks["t"]
    assert rec.status == "failure" and rec.error["code"] == "NIKA-TIMEOUT-001" and rec.attempts == 1
    assert not [e for e in result.events if e["type"] == "task.retrying"]


def test_recover_substitutes_before_output_bindings(run):
    result = run(
        """\
        nika: v1
        workflow: { id: recover }
        permits: { exec: ["false", "echo"] }
        const:
          fallback: { data: { title: "cached" } }
        tasks:
          t:
            exec: { command: ["false"] }
            on_error: { recover: "${{ const.fallback }}" }
            output: { title: ".data.title" }
          r:
            with: { title: "${{ tasks.t.title }}" }
            exec: { command: ["echo", "${{ with.title }}"] }
        """
    )
    assert statuses(result) == {"t": "success", "r": "success"}
    assert result.tasks["r"].output == "cached"


def test_skip_keeps_the_error_readable(run):
    result = run(
        """\
        nika: v1
        workflow: { id: skip }
        permits: { exec: ["false", "echo"] }
        tasks:
          t:
            exec: { command: ["false"] }
            on_error: { skip: true }
          r:
            with: { e: "${{ tasks.t.error }}" }
            when: "${{ with.e != null }}"
            exec: { command: ["echo", "${{ with.e.code }}"] }
        """
    )
    assert statuses(result) == {"t": "skipped", "r": "success"}
    assert result.tasks["t"].error["code"] == "NIKA-EXEC-001"
    assert result.tasks["r"].output == "NIKA-EXEC-001"
    assert result.workflow_state == "success"


def test_on_codes_narrows_on_error(run):
    result = run(
        """\
        nika: v1
        workflow: { id: narrow }
        permits: { exec: ["false"] }
        tasks:
          t:
            exec: { command: ["false"] }
            on_error: { on_codes: [NIKA-TIMEOUT-001], recover: 0 }
        """
    )
    assert result.tasks["t"].status == "failure"


def test_a_binding_error_is_a_boundary_failure_outside_on_error(run):
    result = run(
        """\
        nika: v1
        workflow: { id: boundary }
        inputs:
          n: { type: { union: [integer, string] }, default: 1 }  # a string would compare: not a check finding
        tasks:
          t:
            with: { x: "${{ inputs.n == 'one' }}" }
            on_error: { recover: "fallback" }
            infer: { model: mock/echo, prompt: "${{ with.x }}" }
        """
    )
    assert result.tasks["t"].status == "failure"
    assert result.tasks["t"].error["code"] == "NIKA-VAR-006"


def test_output_binding_must_yield_one_value(run):
    result = run(
        """\
        nika: v1
        workflow: { id: bind }
        const:
          items: [1, 2, 3]
        tasks:
          t:
            with: { xs: "${{ const.items }}" }
            infer: { model: mock/echo, prompt: "${{ with.xs }}" }
            output: { each: "fromjson | .[]", count: "fromjson | length" }
        """
    )
    assert result.tasks["t"].error["code"] == "NIKA-VAR-002"


# each iteration waits until all four have started (a barrier of files, 60 s at most): only
# iterations that run at the same time get past it, so passing it proves for_each is parallel by
# default; then each sleeps its own delay, so they finish out of input order
BARRIER = (
    "touch started-$1; for i in $(seq 6000); do [ $(ls started-* | wc -l) -ge 4 ] && break; sleep 0.01; done; "
    "[ $(ls started-* | wc -l) -ge 4 ] || exit 9"
)


def test_for_each_runs_in_parallel_keeps_input_order_and_nulls_skipped_iterations(run):
    result = run(
        """\
        nika: v1
        workflow: { id: fan }
        permits: { exec: ["sh"] }
        const:
          delays: [0.3, 0.0, 0.15, 0.05]
        tasks:
          t:
            for_each: "${{ const.delays }}"
            on_error: { skip: true }
            exec: { command: ["sh", "-c", "STEP", "${{ item }}", "${{ index }}"] }
          joined:
            with: { all: "${{ tasks.t.output }}" }
            infer: { model: mock/echo, prompt: "${{ with.all }}" }
        """.replace("STEP", BARRIER + "; sleep $0; [ $1 != 2 ] && echo $0-$1")
    )
    assert result.tasks["t"].status == "success"
    assert result.tasks["t"].output == ["0.3-0", "0.0-1", None, "0.05-3"]  # every iteration passed the barrier
    assert result.tasks["joined"].output == '["0.3-0","0.0-1",null,"0.05-3"]'


def test_for_each_max_parallel_one_runs_in_order(run, tmp_path):
    result = run(
        """\
        nika: v1
        workflow: { id: seq }
        permits: { exec: ["sh"] }
        const:
          items: ["a", "b", "c"]
        tasks:
          t:
            for_each: "${{ const.items }}"
            max_parallel: 1
            exec: { command: ["sh", "-c", "echo $0 >> order.txt; echo $0", "${{ item }}"] }
        """
    )
    assert result.tasks["t"].output == ["a", "b", "c"]
    assert (tmp_path / "order.txt").read_text().split() == ["a", "b", "c"]


def test_for_each_over_a_non_array_is_var_006_and_empty_skips(run):
    # an input that may be a list, given a string: the check refuses a const string, or an input
    # whose type is never a list, statically (tests/checker/test_precision.py)
    result = run(
        """\
        nika: v1
        workflow: { id: bad }
        inputs:
          one: { type: { union: [string, { array: string }] }, default: "x" }
        const:
          none: []
        tasks:
          t:
            for_each: "${{ inputs.one }}"
            infer: { model: mock/echo, prompt: "${{ item }}" }
          e:
            for_each: "${{ const.none }}"
            infer: { model: mock/echo, prompt: "${{ item }}" }
        """
    )
    assert result.tasks["t"].error["code"] == "NIKA-VAR-006"
    assert result.tasks["e"].status == "skipped"


def test_for_each_fail_fast_false_collects_every_failure(run):
    result = run(
        """\
        nika: v1
        workflow: { id: ff }
        permits: { exec: ["sh"] }
        const:
          items: [0, 1, 0, 1]
        tasks:
          t:
            for_each: "${{ const.items }}"
            fail_fast: false
            exec: { command: ["sh", "-c", "exit $0", "${{ item }}"] }
        """
    )
    rec = result.tasks["t"]
    assert rec.status == "failure" and rec.output is None
    assert [i["index"] for i in rec.error["details"]["iterations"]] == [1, 3]


def test_on_finally_runs_after_the_parent_and_its_errors_do_not_propagate(run, tmp_path):
    result = run(
        """\
        nika: v1
        workflow: { id: fin }
        permits: { exec: ["sh", "false"] }
        tasks:
          t:
            exec: { command: ["false"] }
            on_finally:
              - exec: { command: ["false"] }
              - exec: { command: ["sh", "-c", "echo $0 > cleaned.txt", "${{ tasks.t.status }}"] }
          never:
            when: false
            exec: { command: ["false"] }
            on_finally:
              - exec: { command: ["sh", "-c", "touch never.txt"] }
        """
    )
    assert result.tasks["t"].status == "failure"
    assert (tmp_path / "cleaned.txt").read_text().strip() == "failure"
    assert not (tmp_path / "never.txt").exists()
    steps = [e for e in result.events if e["type"] == "verb.invoked"]
    assert [s["status"] for s in steps] == ["failure", "success"]


def test_typed_workflow_outputs_are_checked(run):
    result = run(
        """\
        nika: v1
        workflow: { id: outs }
        tasks:
          t:
            infer: { model: mock/echo, prompt: "hello" }
        outputs:
          ok: "${{ tasks.t.output }}"
          typed:
            value: "${{ tasks.t.output }}"
            type: integer
        """
    )
    assert result.workflow_state == "failure"
    assert result.error["code"] == "NIKA-VAR-009"


def test_mock_echo_and_schema_zero_values(run):
    result = run(
        """\
        nika: v1
        workflow: { id: mock }
        model: mock/echo
        tasks:
          echo:
            infer: { prompt: "verbatim ${{ 'text' }}" }
          shaped:
            infer:
              prompt: "x"
              schema:
                type: object
                required: [name, n, ok, tags, inner]
                properties:
                  name: { type: string }
                  n: { type: integer }
                  ok: { type: boolean }
                  tags: { type: array }
                  inner: { type: object, required: [a], properties: { a: { type: number } } }
          remote:
            infer: { model: openai/gpt-4o, prompt: "x" }
        outputs:
          echo: "${{ tasks.echo.output }}"
        """,
        engine_env={},
    )
    assert result.tasks["echo"].output == "verbatim text"
    assert result.tasks["shaped"].output == {"name": "", "n": 0, "ok": False, "tags": [], "inner": {"a": 0}}
    assert result.tasks["remote"].error["code"] == "NIKA-INFER-001"  # no key in the engine env
    assert result.outputs == {"echo": "verbatim text"}


def test_cancellation_cancels_in_flight_work_runs_on_finally_and_settles_the_rest(tmp_path):
    import asyncio

    from checker.engine.pipeline import compile_text
    from runtime.engine.options import Options
    from runtime.engine.run import Run
    from runtime.verbs import VERBS

    src = """\
nika: v1
workflow: { id: cancel }
permits: { exec: ["sleep", "sh", "echo"] }
tasks:
  long:
    exec: { command: ["sleep", "30"] }
    on_finally:
      - exec: { command: ["sh", "-c", "touch cleaned.txt"] }
  after_long:
    after: { long: success }
    exec: { command: ["echo", "never"] }
"""
    compiled = compile_text(src, str(tmp_path / "c.nika.yaml"), str(tmp_path))

    async def go():
        run = Run(compiled, {}, Options(trace_dir=tmp_path / "t"), verbs=VERBS, workdir=tmp_path)
        asyncio.get_running_loop().call_later(0.3, run.cancel)
        return await run.execute()

    result = asyncio.run(go())
    assert result.workflow_state == "cancelled"
    assert {t: r.status for t, r in result.tasks.items()} == {"long": "cancelled", "after_long": "cancelled"}
    assert (tmp_path / "cleaned.txt").exists()
    assert any(e["type"] == "workflow.cancelled" for e in result.events)


def test_returns_is_checked_on_exec_output(run):
    result = run(
        """\
        nika: v1
        workflow: { id: ret }
        permits: { exec: ["echo"] }
        tasks:
          ok:
            exec: { command: ["echo", '{"n": 1}'], decode: json }
            returns: { object: { n: integer } }
          bad:
            exec: { command: ["echo", "[1, 2]"], decode: json }
            returns: { object: { n: integer } }
        """
    )
    assert result.tasks["ok"].status == "success"
    assert result.tasks["bad"].error["code"] == "NIKA-TYPE-101"


def test_returns_judges_the_run_time_value_itself(run, monkeypatch):
    """The one fit predicate (checker.model.typesys) reads run-time data as it is: the octets of
    `decode: bytes` fit `bytes`, a tool's tuple fits an array, and an object type is closed."""

    async def pair(args, ctx):
        return (1, 2)

    monkeypatch.setitem(builtins.REGISTRY, "nika:log", pair)
    result = run(
        """\
        nika: v1
        workflow: { id: ret }
        permits: { exec: ["printf"], tools: ["nika:log"] }
        tasks:
          octets:
            exec: { command: ["printf", "hi"], decode: bytes }
            returns: bytes
          tupled:
            invoke: { tool: "nika:log", args: { message: "x" } }
            returns: { array: integer }
          extra:
            exec: { command: ["printf", '{"n": 1, "m": 2}'], decode: json }
            returns: { object: { n: integer } }
        """
    )
    assert statuses(result) == {"octets": "success", "tupled": "success", "extra": "failure"}
    assert result.tasks["extra"].error["code"] == "NIKA-TYPE-101"
