"""The compiler's one reporter and the helpers every part of it shares.

:class:`Builder` collects findings and expression sites while the node tree is turned into
model values. It owns the generic, grammar-driven checks (unknown keys, closed values, scalar
types and ranges, durations), so the dedicated code in the other modules only says what the
grammar table cannot.
"""

from __future__ import annotations

from collections.abc import Callable

from checker.codes import report
from checker.diagnostics import Diagnostic, Edit, Fix, Label
from checker.durations import parse_duration
from checker.expr import has_island, parse_template
from checker.grammar import Block, Field, Kind
from checker.model import Duration, ExprSite
from checker.nodes import Entry, Mapping, Node, Scalar, Sequence, describe
from checker.source import SourceText, Span
from checker.suggest import did_you_mean
from checker.values import Entry as VEntry
from checker.values import ListValue, Literal, MapValue, ScalarValue, TemplateValue, Value
from checker.vocab import Where


def shown(node: Node) -> str:
    """How a value is quoted back in a message: the scalar as written, else a noun."""
    return node.raw if isinstance(node, Scalar) else describe(node)


def is_template_text(node: Node | None) -> bool:
    """A string scalar holding at least one ``${{`` island (the one template test)."""
    return isinstance(node, Scalar) and isinstance(node.value, str) and has_island(node.value)


class Builder:
    """Findings, expression sites and node → value conversion for one document."""

    def __init__(self, src: SourceText, duplicates: tuple[tuple[Scalar, Scalar], ...] = ()) -> None:
        self.src = src
        self.diags: list[Diagnostic] = []
        self.sites: list[ExprSite] = []
        self.duplicates = duplicates
        self.task_keys: set[int] = set()

    # -- reporting ---------------------------------------------------------------------------
    def err(self, code: str, span: Span, message: str, help: str | None = None, **kw: object) -> None:
        self.diags.append(report(code, span, message, help, **kw))  # type: ignore[arg-type]

    def duplicate_keys(self) -> None:
        """The grammar-level twin of NIKA-YAML-004: no silent last-wins (NIKA-PARSE-017).

        Duplicate task ids already got the precise NIKA-PARSE-007.
        """
        for key, first in self.duplicates:
            if id(key) in self.task_keys:
                continue
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
        node: Mapping,
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
        self, node: Node | None, what: str, code: str = "NIKA-PARSE-019", task: str | None = None
    ) -> Mapping | None:
        if node is None:
            return None
        if isinstance(node, Mapping):
            return node
        self.err(code, node.span, f"{what} must be a mapping, not {describe(node)}", task=task)
        return None

    def exactly_one(
        self,
        node: Mapping,
        e: Entry,
        pair: tuple[str, str],
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
        return Span(start, end)

    # -- grammar-driven field checks ---------------------------------------------------------
    def field_problem(self, f: Field, node: Node) -> str | None:
        """Why ``node`` does not fit field ``f`` (``None`` when it fits or only the dedicated
        code can tell). A ``${{ … }}`` string fits wherever the field takes a template."""
        k = f.kind
        if f.template and is_template_text(node):
            return None
        value = node.value if isinstance(node, Scalar) else None
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
            if not ok and isinstance(node, Scalar):
                return f"`{shown(node)}` is not a valid `{f.name}:`"
        elif k is Kind.STRINGS:
            return self._strings_problem(f, node)
        elif k is Kind.MAPPING:
            ok = isinstance(node, Mapping)
        elif k is Kind.LIST:
            ok = isinstance(node, Sequence)
        elif k is Kind.SCHEMA:
            ok = isinstance(node, Mapping) or isinstance(value, bool)
        else:  # DURATION, TYPE and ANY have dedicated checks
            return None
        if ok:
            return None
        return f"`{f.name}:` must be {f.expected()}, not {describe(node)}"

    def _strings_problem(self, f: Field, node: Node) -> str | None:
        if not isinstance(node, Sequence):
            return f"`{f.name}:` must be a list of strings, not {describe(node)}"
        for item in node.items:
            if not (isinstance(item, Scalar) and isinstance(item.value, str)):
                return None  # reported per item by `check_field`
        return None

    def check_field(self, block: Block, m: Mapping, name: str, task: str | None = None) -> bool:
        """Judge ``m[name]`` against the grammar; report and return False when it does not fit."""
        node = m.get(name)
        if node is None:
            return True
        f = block[name]
        problem = self.field_problem(f, node)
        if problem is None and f.kind is Kind.STRINGS and isinstance(node, Sequence):
            bad = [i for i in node.items if not (isinstance(i, Scalar) and isinstance(i.value, str))]
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
        if f.kind is Kind.ENUM and isinstance(node, Scalar):
            guess = did_you_mean(str(node.raw), f.values)
            help = (f"Did you mean `{guess}`? " if guess else "") + f"Use one of {', '.join(f.values)}."
            fixes = (Fix(f"Replace with `{guess}`", (Edit(node.span, guess),)),) if guess else ()
            self.err(block.value_code, node.span, problem, help, task=task, fixes=fixes)
            return False
        if f.template and f.kind in (Kind.INT, Kind.NUMBER, Kind.BOOL):
            help = f"Write {f.expected()}, or a `${{{{ … }}}}` expression resolved at run time."
        self.err(block.value_code, node.span, problem, help, task=task)
        return False

    def check_fields(self, block: Block, m: Mapping, task: str | None = None, skip: tuple[str, ...] = ()) -> bool:
        """:meth:`check_field` for every present field of ``block`` that is not in ``skip``.
        Returns False when anything was reported."""
        ok = True
        for name in m._index:  # the fields written, usually far fewer than the block has
            if name in block and name not in skip and not self.check_field(block, m, name, task):
                ok = False
        return ok

    def duration(
        self, node: Node | None, task: str | None, what: str = "timeout", code: str = "NIKA-PARSE-010"
    ) -> Duration | None:
        """A quoted Go duration (positive, at most 24h) as a :class:`Duration`."""
        if node is None:
            return None
        if not (isinstance(node, Scalar) and isinstance(node.value, str)):
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
        v = self.value(node)
        assert isinstance(v, ScalarValue)
        return Duration(ms, v)

    # -- node → value ------------------------------------------------------------------------
    def value(self, node: Node, where: Where | None = None, task: str | None = None, in_fe: bool = False) -> Value:
        """The model value of ``node``. Every template string met is parsed once; when
        ``where`` is given it is also recorded as an expression site of that position class."""
        cls = node.__class__
        if cls is Scalar:
            return self._scalar(node, where, task, in_fe)  # type: ignore[arg-type]
        if cls is Mapping:
            key = self.key
            value = self.value
            return MapValue(
                node.span,
                tuple([VEntry(key(e.key), value(e.value, where, task, in_fe)) for e in node.entries]),  # type: ignore[attr-defined]
                node.flow,  # type: ignore[attr-defined]
            )
        if cls is Sequence:
            value = self.value
            return ListValue(node.span, tuple([value(i, where, task, in_fe) for i in node.items]), node.flow)  # type: ignore[attr-defined]
        return Literal(node.span, None)

    def _scalar(self, node: Scalar, where: Where | None, task: str | None, in_fe: bool) -> ScalarValue:
        v = node.value
        # `"${{" in v` first: the cheap test rules out nearly every string before the exact one
        if v.__class__ is str and "${{" in v and has_island(v):
            tv = TemplateValue(node.span, v, node.raw, node.style, node.offsets, parse_template(v))
            if where is not None:
                self.sites.append(ExprSite(task, where, tv, in_fe))
            return tv
        return Literal(node.span, v, node.raw, node.style, node.offsets)

    @staticmethod
    def key(node: Node) -> ScalarValue:
        if node.__class__ is Scalar:
            return Literal(node.span, node.value, node.raw, node.style, node.offsets)  # type: ignore[attr-defined]
        return Literal(node.span, None, "", "")

    def mapping(
        self, node: Mapping, done: dict[str, Value], where: Where | None = None, task: str | None = None
    ) -> MapValue:
        """``node`` as a :class:`MapValue`, reusing values already built for some keys (so a
        model field and its entry in the enclosing mapping are the same object)."""
        entries = []
        key = self.key
        index = node._index
        for e in node.entries:
            k = e.key_text
            v = done.get(k) if k is not None and index.get(k) is e else None  # type: ignore[arg-type]
            entries.append(VEntry(key(e.key), v if v is not None else self.value(e.value, where, task)))
        return MapValue(node.span, tuple(entries), node.flow)
