"""The compiler's one reporter and the helpers every part of it shares.

:class:`Builder` collects findings and expression sites while the value tree is typed into
the model. It owns the generic, grammar-driven checks (unknown keys, closed values, scalar
types and ranges, durations), so the dedicated code in the other modules only says what the
grammar table cannot.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from checker.core.codes import report
from checker.core.diagnostics import Diagnostic, Edit, Fix, Label
from checker.core.durations import parse_duration
from checker.core.source import SourceText, Span
from checker.core.suggest import did_you_mean
from checker.core.vocab import Where
from checker.grammar.table import Block, Field, Kind, misplaced
from checker.model.workflow import Duration, ExprSite
from checker.parse.values import (
    Entry,
    ListValue,
    Literal,
    MapValue,
    ScalarValue,
    TemplateValue,
    Value,
    describe,
    templates,
)

if TYPE_CHECKING:
    from checker.compiler.tasks import TaskMemo


def shown(node: Value) -> str:
    """How a value is quoted back in a message: the scalar as written, else a noun."""
    return node.raw if isinstance(node, ScalarValue) else describe(node)


def is_template_text(node: Value | None) -> bool:
    """A string holding at least one ``${{`` island: the YAML layer already made it a template."""
    return isinstance(node, TemplateValue)


class Builder:
    """Findings and expression sites for one document."""

    def __init__(self, src: SourceText, duplicates: tuple[tuple[ScalarValue, ScalarValue], ...] = ()) -> None:
        self.src = src
        self.diags: list[Diagnostic] = []
        self.sites: list[ExprSite] = []
        self.duplicates = duplicates
        self.task_keys: set[int] = set()
        # Set by the language server's incremental analysis: compiled tasks kept across versions.
        self.task_memo: TaskMemo | None = None

    # -- reporting ---------------------------------------------------------------------------
    def err(self, code: str, span: Span, message: str, help: str | None = None, **kw: object) -> None:
        self.diags.append(report(code, span, message, help, **kw))  # type: ignore[arg-type]

    def duplicate_keys(self) -> None:
        """The grammar-level twin of NIKA-YAML-004: no silent last-wins (NIKA-PARSE-017).

        A duplicate task id gets it too, beside the precise NIKA-PARSE-007 (a task id is a
        mapping key like any other).
        """
        for key, first in self.duplicates:
            self.err(
                "NIKA-PARSE-017",
                key.span,
                f"`{key.value}` appears twice in the same mapping",
                "Keep a single entry; merge the two values by hand.",
                related=(Label(first.span, f"`{key.value}` first written here"),),
            )

    # -- shapes ------------------------------------------------------------------------------
    def closed(
        self,
        node: MapValue,
        block: Block,
        what: str | None = None,
        *,
        task: str | None = None,
        special: Callable[[str, Entry], bool] | None = None,
    ) -> None:
        """Refuse keys outside the block's closed field set, with a did-you-mean."""
        for e in node.entries:
            k = e.key_text
            if k is None or k in block or k == "<<":
                continue
            if special is not None and special(k, e):
                continue
            guess = did_you_mean(k, block.names)
            fixes: tuple[Fix, ...] = ()
            if guess:
                help = f"Did you mean `{guess}`?"
                fixes = (Fix(f"Rename `{k}` to `{guess}`", (Edit(e.key.span, guess),)),)
            elif home := misplaced(k, block, tuple(x for x in (en.key_text for en in node.entries) if x)):
                help = home[0].upper() + home[1:] + "."
            else:
                help = f"Allowed here: {', '.join(block.names)}."
            self.err(
                block.unknown_code,
                e.key.span,
                f"unknown field `{k}` in {what or block.what}",
                help,
                fixes=fixes,
                task=task,
            )

    def expect_mapping(
        self, node: Value | None, what: str, code: str = "NIKA-PARSE-019", task: str | None = None
    ) -> MapValue | None:
        if node is None:
            return None
        if isinstance(node, MapValue):
            return node
        self.err(code, node.span, f"{what} must be a mapping, not {describe(node)}", task=task)
        return None

    def exactly_one(
        self,
        node: MapValue,
        e: Entry,
        pair: tuple[str, ...],
        missing: tuple[str, str],
        both: tuple[str, str],
        task: str | None,
    ) -> None:
        """The tagged-union law of a verb body (`command`/`shell`, `tool`/`workflow`): one of the
        pair is required (NIKA-PARSE-018 on the verb key), both is NIKA-PARSE-019 on the second."""
        first, second = pair
        if first not in node and second not in node:
            self.err("NIKA-PARSE-018", e.key.span, missing[0], missing[1], task=task)
        elif first in node and second in node:
            se = node.entry(second)
            assert se is not None
            self.err("NIKA-PARSE-019", se.key.span, both[0], both[1], task=task)

    def line_span(self, e: Entry) -> Span:
        """The whole lines an entry occupies (for fixes that delete it)."""
        src = self.src
        first = src.line_index(e.key.span.start)
        last = src.line_index(max(e.value.span.end - 1, e.value.span.start))
        start = src.line_starts[first]
        end = src.line_starts[last + 1] if last + 1 < len(src.line_starts) else len(src.text)
        return e.key.span.sibling(start, end)

    # -- grammar-driven field checks ---------------------------------------------------------
    def field_problem(self, f: Field, node: Value) -> str | None:
        """Why ``node`` does not fit field ``f`` (``None`` when it fits or only the dedicated
        code can tell). A ``${{ … }}`` string fits wherever the field takes a template."""
        k = f.kind
        if f.template and is_template_text(node):
            return None
        value = node.value if isinstance(node, ScalarValue) else None
        if k is Kind.STRING or k is Kind.MODEL:
            ok = isinstance(value, str)
        elif k is Kind.TEXT:
            ok = isinstance(value, str) and bool(value.strip())
        elif k is Kind.BOOL:
            ok = isinstance(value, bool)
        elif k is Kind.TRUE:
            ok = value is True
        elif k in (Kind.INT, Kind.NUMBER):
            numeric = (int,) if k is Kind.INT else (int, float)
            if not isinstance(value, numeric) or isinstance(value, bool):
                ok = False
            elif (
                value != value
                or (f.minimum is not None and value < f.minimum)
                or (f.maximum is not None and value > f.maximum)
            ):
                return f"`{f.name}: {shown(node)}` is out of range: it must be {f.expected()}"
            else:
                ok = True
        elif k is Kind.ENUM:
            ok = isinstance(value, str) and value in f.values
            if not ok and isinstance(node, ScalarValue):
                return f"`{shown(node)}` is not a valid `{f.name}:`"
        elif k is Kind.STRINGS:
            return self._strings_problem(f, node)
        elif k is Kind.MAPPING:
            ok = isinstance(node, MapValue)
        elif k is Kind.LIST:
            ok = isinstance(node, ListValue)
        elif k is Kind.SCHEMA:
            ok = isinstance(node, MapValue) or isinstance(value, bool)
        else:  # DURATION, TYPE and ANY have dedicated checks
            return None
        if ok:
            return None
        return f"`{f.name}:` must be {f.expected()}, not {describe(node)}"

    def _strings_problem(self, f: Field, node: Value) -> str | None:
        if not isinstance(node, ListValue):
            return f"`{f.name}:` must be a list of strings, not {describe(node)}"
        for item in node.items:
            if not (isinstance(item, ScalarValue) and isinstance(item.value, str)):
                return None  # reported per item by `check_field`
        return None

    def check_field(self, block: Block, m: MapValue, name: str, task: str | None = None) -> bool:
        """Judge ``m[name]`` against the grammar; report and return False when it does not fit."""
        node = m.get(name)
        if node is None:
            return True
        f = block[name]
        problem = self.field_problem(f, node)
        if problem is None and f.kind is Kind.STRINGS and isinstance(node, ListValue):
            bad = [i for i in node.items if not (isinstance(i, ScalarValue) and isinstance(i.value, str))]
            for item in bad:
                self.err(
                    block.value_code,
                    item.span,
                    f"`{name}:` entries must be strings, not {describe(item)}",
                    "Quote the entry.",
                    task=task,
                )
            return not bad
        if problem is None:
            return True
        help = None
        if f.kind is Kind.ENUM and isinstance(node, ScalarValue):
            guess = did_you_mean(str(node.raw), f.values)
            help = (f"Did you mean `{guess}`? " if guess else "") + f"Use one of {', '.join(f.values)}."
            fixes = (Fix(f"Replace with `{guess}`", (Edit(node.span, guess),)),) if guess else ()
            self.err(block.value_code, node.span, problem, help, task=task, fixes=fixes)
            return False
        if f.template and f.kind in (Kind.INT, Kind.NUMBER, Kind.BOOL):
            help = f"Write {f.expected()}, or a `${{{{ … }}}}` expression resolved at run time."
        self.err(block.value_code, node.span, problem, help, task=task)
        return False

    def check_fields(self, block: Block, m: MapValue, task: str | None = None, skip: tuple[str, ...] = ()) -> bool:
        """:meth:`check_field` for every present field of ``block`` that is not in ``skip``.
        Returns False when anything was reported."""
        ok = True
        for name in m._index:  # the fields written, usually far fewer than the block has
            if name in block and name not in skip and not self.check_field(block, m, name, task):
                ok = False
        return ok

    def duration(
        self, node: Value | None, task: str | None, what: str = "timeout", code: str = "NIKA-PARSE-010"
    ) -> Duration | None:
        """A quoted Go duration (positive, at most 24h) as a :class:`Duration`."""
        if node is None:
            return None
        if not (isinstance(node, ScalarValue) and isinstance(node.value, str)):
            self.err(
                code,
                node.span,
                f"`{what}:` must be a quoted duration string, not `{shown(node)}`",
                'Write it with a unit, e.g. `timeout: "30s"`.',
                task=task,
            )
            return None
        ms, why = parse_duration(node.value)
        if ms is None:
            self.err(
                code,
                node.span,
                f"`{node.value}` is not a valid duration: {why}",
                'Use a positive Go duration up to 24h, e.g. "45s", "5m" or "1h30m".',
                task=task,
            )
            return None
        assert isinstance(node, ScalarValue)
        return Duration(ms, node)

    # -- values ----------------------------------------------------------------------------
    def value(
        self,
        node: Value,
        where: Where | None = None,
        task: str | None = None,
        in_fe: bool = False,
        binding: str | None = None,
    ) -> Value:
        """``node`` as the model keeps it: the YAML layer already built the typed value (with
        every template parsed), so this only records, when ``where`` is given, each template
        inside it as an expression site of that position class, in source order."""
        if where is not None:
            if node.__class__ is TemplateValue:
                self.sites.append(ExprSite(task, where, node, in_fe, binding))  # type: ignore[arg-type]
            elif node.__class__ is not Literal:
                sites = self.sites
                for tv in templates(node):
                    sites.append(ExprSite(task, where, tv, in_fe, binding))
        return node
