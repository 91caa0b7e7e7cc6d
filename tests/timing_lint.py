"""Find the assertions in test code that depend on how fast the machine is (tests/test_no_timing.py).

A test that asserts how long something took, or asserts after sleeping a fixed time, passes on an
idle machine and fails on a loaded one: speed is measured in ``benchmarks/``, never asserted in a
test. This reads the source with :mod:`ast` (nothing is imported or run) and reports:

- ``timing``: an assertion whose comparison involves an elapsed time: a clock reading
  (``time.monotonic()``, ``perf_counter()``, ``time()``, their ``_ns`` forms, ``process_time()``,
  ``datetime.now()``, an event loop's ``time()``) combined arithmetically with anything (a
  difference of two readings, a reading plus or minus an offset), or a name that holds such a
  value, followed through assignments in the same function. Ordering plain readings against each
  other (``before <= stamp <= after``) stays allowed: it cannot fail by slowness.
- ``timing`` too: an ``if`` outside a poll loop that orders an elapsed time (a difference of two
  readings, or a name holding one) against anything, whatever its body does: a helper that
  collects problems (``if took > BUDGET: problems.append(...)``) fails its caller's assertion by
  the machine's speed. Inside a poll loop such an ``if`` is the loop's generous deadline.
- ``duration``: an ordering comparison (``<``, ``<=``, ``>``, ``>=``) on a recorded duration: an
  attribute or key named like ``duration_ms``, ``elapsed``, ``took``, ``latency_s`` (``>= 0`` is a
  sanity check and allowed). Exact equality stays allowed: a fake clock gives exact values.
- ``sleep``: an assertion that follows a fixed sleep (``time.sleep(x)``, ``asyncio.sleep(x)``,
  ``anyio.sleep(x)`` with ``x`` not a literal ``0``) in the same function, where the sleep is not
  the interval of a poll loop (a ``while`` loop, or a ``for`` loop that can ``break``/``return``).

An assertion is an ``assert`` statement, a call of a function named ``assert*`` (``self.assertLess``,
a helper ``assert_all_gone``), or an ``if`` whose body
calls ``pytest.fail`` or raises ``AssertionError``. Nested functions are their own scope.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

CLOCK_FUNCS = frozenset(
    {
        "monotonic",
        "monotonic_ns",
        "perf_counter",
        "perf_counter_ns",
        "time",
        "time_ns",
        "process_time",
        "process_time_ns",
        "thread_time",
        "thread_time_ns",
    }
)
SLEEP_MODULES = frozenset({"time", "asyncio", "anyio", "trio"})
# numeric helpers whose result keeps the kind of their arguments
NUMERIC = frozenset({"int", "float", "round", "abs", "min", "max", "sum", "floor", "ceil", "divmod", "fabs"})
CONVERSIONS = frozenset({"timestamp", "total_seconds", "isoformat"})
DURATION_NAME = re.compile(r"(?:^|_)(?:duration|elapsed|took|latency|wall)(?:_(?:ms|s|ns|us|seconds))?$")
ORDERING = (ast.Lt, ast.LtE, ast.Gt, ast.GtE)
READING, DERIVED, ELAPSED = 1, 2, 3  # a reading; a reading plus or minus an offset; two readings apart


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    kind: str  # timing | duration | sleep
    text: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.kind}: {self.text}"


class _Imports(ast.NodeVisitor):
    """What the module calls the clock and sleep functions (``import time as t``, ``from time import
    monotonic``)."""

    def __init__(self) -> None:
        self.modules: dict[str, str] = {}  # local name -> module (time, asyncio, datetime, ...)
        self.funcs: dict[str, tuple[str, str]] = {}  # local name -> (module, function)

    def visit_Import(self, node: ast.Import) -> None:
        for a in node.names:
            self.modules[a.asname or a.name.split(".")[0]] = a.name

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        for a in node.names:
            self.funcs[a.asname or a.name] = (node.module or "", a.name)


class _Scope:
    """One function body (or the module), walked in source order."""

    def __init__(self, imports: _Imports, path: str, out: list[Finding]) -> None:
        self.imports = imports
        self.path = path
        self.out = out
        self.kinds: dict[str, int] = {}
        self.sleep_line: int | None = None

    # -- what an expression is ------------------------------------------------------------------
    def _is_clock(self, call: ast.Call) -> bool:
        f = call.func
        if isinstance(f, ast.Name):
            mod, name = self.imports.funcs.get(f.id, ("", ""))
            return mod == "time" and name in CLOCK_FUNCS
        if not isinstance(f, ast.Attribute):
            return False
        owner = f.value
        if isinstance(owner, ast.Name):
            mod = self.imports.modules.get(owner.id)
            if mod == "time" and f.attr in CLOCK_FUNCS:
                return True
            if f.attr in ("now", "utcnow", "today") and (
                owner.id in ("datetime", "date")
                or self.imports.funcs.get(owner.id, ("", ""))[1] in ("datetime", "date")
            ):
                return True
            if f.attr == "time" and owner.id.endswith("loop"):
                return True
        if isinstance(owner, ast.Attribute) and f.attr in ("now", "utcnow") and owner.attr == "datetime":
            return True
        return (
            f.attr == "time"
            and isinstance(owner, ast.Call)
            and isinstance(owner.func, (ast.Attribute, ast.Name))
            and (owner.func.attr if isinstance(owner.func, ast.Attribute) else owner.func.id)
            in ("get_running_loop", "get_event_loop")
        )

    def kind(self, node: ast.expr | None) -> int:
        """0: no clock in it; READING: a plain clock reading; DERIVED: arithmetic on a reading;
        ELAPSED: a difference of two readings (or arithmetic on one)."""
        if node is None:
            return 0
        if isinstance(node, ast.Name):
            return self.kinds.get(node.id, DERIVED if DURATION_NAME.search(node.id) else 0)
        if isinstance(node, ast.Call):
            if self._is_clock(node):
                return READING
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if name in NUMERIC:
                return max((self.kind(a) for a in node.args), default=0)
            if name in CONVERSIONS and isinstance(node.func, ast.Attribute):  # now().timestamp()
                return self.kind(node.func.value)
            return 0
        if isinstance(node, ast.BinOp):
            left, right = self.kind(node.left), self.kind(node.right)
            k = max(left, right)
            if isinstance(node.op, ast.Sub) and left and right:
                return ELAPSED
            if isinstance(node.op, (ast.Add, ast.Sub)) and k:
                return max(k, DERIVED)
            return k
        if isinstance(node, ast.UnaryOp):
            return self.kind(node.operand)
        if isinstance(node, ast.IfExp):
            return max(self.kind(node.body), self.kind(node.orelse))
        if isinstance(node, ast.Attribute) and DURATION_NAME.search(node.attr):
            return DERIVED
        if isinstance(node, ast.Subscript):
            key = node.slice
            if isinstance(key, ast.Constant) and isinstance(key.value, str) and DURATION_NAME.search(key.value):
                return DERIVED
        return 0

    def _recorded(self, node: ast.expr) -> bool:
        """A duration the code under test recorded (a ``duration_ms`` field, a ``took`` name)."""
        if isinstance(node, ast.Name):
            return node.id not in self.kinds and bool(DURATION_NAME.search(node.id))
        if isinstance(node, ast.Attribute):
            return bool(DURATION_NAME.search(node.attr))
        if isinstance(node, ast.Subscript):
            key = node.slice
            return (
                isinstance(key, ast.Constant) and isinstance(key.value, str) and bool(DURATION_NAME.search(key.value))
            )
        return False

    # -- assertions ------------------------------------------------------------------------------
    def judge(self, test: ast.expr, line: int) -> None:
        if self.sleep_line is not None:
            self.out.append(Finding(self.path, line, "sleep", f"asserts after a fixed sleep (line {self.sleep_line})"))
            self.sleep_line = None  # one finding per sleep
        for node in ast.walk(test):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            for i, op in enumerate(node.ops):
                pair = sides[i], sides[i + 1]
                if any(self.kind(s) >= DERIVED and not self._recorded(s) for s in pair):
                    self.out.append(Finding(self.path, line, "timing", "asserts on an elapsed wall-clock time"))
                    return
                if isinstance(op, ORDERING) and any(self._recorded(s) for s in pair) and not _zero_floor(op, pair):
                    self.out.append(Finding(self.path, line, "duration", "orders a recorded duration against a bound"))
                    return

    def _orders_elapsed(self, test: ast.expr) -> bool:
        return any(
            isinstance(node, ast.Compare)
            and any(isinstance(op, ORDERING) for op in node.ops)
            and any(self.kind(side) == ELAPSED for side in (node.left, *node.comparators))
            for node in _walk_here(test)
        )

    def assertion_call(self, call: ast.Call) -> bool:
        f = call.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
        return name.startswith("assert")

    def fixed_sleep(self, call: ast.Call) -> bool:
        f = call.func
        if isinstance(f, ast.Attribute) and f.attr == "sleep" and isinstance(f.value, ast.Name):
            known = self.imports.modules.get(f.value.id, f.value.id)
            if known.split(".")[0] not in SLEEP_MODULES:
                return False
        elif isinstance(f, ast.Name):
            mod, name = self.imports.funcs.get(f.id, ("", ""))
            if name != "sleep" or mod.split(".")[0] not in SLEEP_MODULES:
                return False
        else:
            return False
        arg = (
            call.args[0] if call.args else next((k.value for k in call.keywords if k.arg in ("delay", "seconds")), None)
        )
        return not (isinstance(arg, ast.Constant) and arg.value == 0)

    # -- the walk --------------------------------------------------------------------------------
    def body(self, stmts: list[ast.stmt], in_poll: bool) -> None:
        for s in stmts:
            self.stmt(s, in_poll)

    def stmt(self, s: ast.stmt, in_poll: bool) -> None:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            walk_scope(s, self.imports, self.path, self.out)
            return
        if isinstance(s, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            self._calls(s, in_poll)
            value = s.value
            k = self.kind(value) if value is not None else 0
            if isinstance(s, ast.AugAssign):
                k = max(k, self.kinds.get(getattr(s.target, "id", ""), 0))
                if k and isinstance(s.op, (ast.Add, ast.Sub)):
                    k = DERIVED
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        if k:
                            self.kinds[n.id] = k
                        else:
                            self.kinds.pop(n.id, None)
            return
        if isinstance(s, ast.Assert):
            self._calls(s, in_poll)
            self.judge(s.test, s.lineno)
            return
        if isinstance(s, ast.If) and _fails(s.body):
            self._calls(s.test, in_poll)
            self.judge(s.test, s.lineno)
            self.body(s.orelse, in_poll)
            return
        if isinstance(s, ast.If) and not in_poll and self._orders_elapsed(s.test):
            self.out.append(Finding(self.path, s.lineno, "timing", "branches on an elapsed wall-clock time"))
        if isinstance(s, (ast.While, ast.For, ast.AsyncFor)):
            poll = isinstance(s, ast.While) or _can_leave(s.body)
            if not isinstance(s, ast.While):
                self._calls(s.iter, in_poll)
            else:
                self._calls(s.test, in_poll)
            self.body(s.body, in_poll or poll)
            self.body(s.orelse, in_poll)
            return
        if isinstance(s, (ast.If, ast.With, ast.AsyncWith, ast.Try, ast.TryStar, ast.Match)):
            for field in ("test", "subject"):
                if (e := getattr(s, field, None)) is not None:
                    self._calls(e, in_poll)
            for item in getattr(s, "items", []):
                self._calls(item.context_expr, in_poll)
            for block in ("body", "orelse", "finalbody"):
                self.body(getattr(s, block, []), in_poll)
            for h in getattr(s, "handlers", []):
                self.body(h.body, in_poll)
            for c in getattr(s, "cases", []):
                self.body(c.body, in_poll)
            return
        self._calls(s, in_poll)

    def _calls(self, node: ast.AST, in_poll: bool) -> None:
        for n in _walk_here(node):
            if not isinstance(n, ast.Call):
                continue
            if self.assertion_call(n):
                for a in n.args:
                    if self.kind(a) >= DERIVED and not self._recorded(a):
                        self.out.append(Finding(self.path, n.lineno, "timing", "asserts on an elapsed wall-clock time"))
                        break
                else:
                    if self.sleep_line is not None:
                        self.judge(ast.Constant(True), n.lineno)
            elif self.fixed_sleep(n) and not in_poll:
                self.sleep_line = n.lineno


def _walk_here(node: ast.AST) -> Iterator[ast.AST]:
    """``ast.walk`` without descending into nested functions and lambdas."""
    todo = [node]
    while todo:
        n = todo.pop()
        yield n
        for child in ast.iter_child_nodes(n):
            if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                todo.append(child)


def _zero_floor(op: ast.cmpop, pair: tuple[ast.expr, ast.expr]) -> bool:
    """``d >= 0`` (or ``0 <= d``): a sanity check no speed can fail."""
    left, right = pair
    return (isinstance(op, ast.GtE) and _is_zero(right)) or (isinstance(op, ast.LtE) and _is_zero(left))


def _is_zero(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value == 0 and not isinstance(node.value, bool)


def _fails(body: list[ast.stmt]) -> bool:
    for s in body:
        for n in _walk_here(s):
            if isinstance(n, ast.Raise) and n.exc is not None:
                exc = n.exc.func if isinstance(n.exc, ast.Call) else n.exc
                if isinstance(exc, ast.Name) and exc.id == "AssertionError":
                    return True
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "fail":
                return True
    return False


def _can_leave(body: list[ast.stmt]) -> bool:
    return any(isinstance(n, (ast.Break, ast.Return)) for s in body for n in _walk_here(s))


def walk_scope(node: ast.AST, imports: _Imports, path: str, out: list[Finding]) -> None:
    scope = _Scope(imports, path, out)
    if isinstance(node, ast.ClassDef):
        for s in node.body:
            scope.stmt(s, False)
        return
    scope.body(getattr(node, "body", []), False)


def scan_source(source: str, path: str = "<string>") -> list[Finding]:
    tree = ast.parse(source, path)
    imports = _Imports()
    imports.visit(tree)
    out: list[Finding] = []
    walk_scope(tree, imports, path, out)
    return sorted(out, key=lambda f: f.line)


# a file that spells none of these has no clock, sleep or recorded duration to judge: not parsed
_MENTIONS = re.compile(r"\b(?:monotonic|perf_counter|time|sleep|now|utcnow|today)\b|duration|elapsed|took|latency|wall")


def scan_tree(root: Path) -> list[Finding]:
    out: list[Finding] = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if _MENTIONS.search(text):
            out += scan_source(text, str(path.relative_to(root.parent)))
    return out
