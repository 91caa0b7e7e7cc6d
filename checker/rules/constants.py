"""A ``const:`` entry written like an ``inputs:`` declaration (``const/001``, 01 §const).

Spec 01's discriminator: an object carrying both ``type`` and ``value`` is a typed constant; an
object missing either key is a bare literal object. ``{type: integer, default: 30}`` is therefore
the object ``{"type": "integer", "default": 30}``, not the number 30: authors coming from
``inputs:`` write it by mistake, and every comparison on it then fails at run. The check says so as
a hint on ``default:``, with the rename to ``value:`` as its fix: safe when no expression reads the
object's ``type`` or ``default`` member (a read of ``const.X`` itself wants the value the author
meant), unsafe when one does (the rename takes that member away).
"""

from __future__ import annotations

from collections.abc import Iterator

from checker.core.codes import lint
from checker.core.diagnostics import Diagnostic, Edit, Fix
from checker.parse.values import MapValue
from checker.rules.support.context import RuleContext

RULE = "const/001"
_SHAPE_KEYS = ("type", "default")


def check_const_shapes(ctx: RuleContext) -> Iterator[Diagnostic]:
    for c in ctx.workflow.const:
        v = c.value
        if c.type is not None or not isinstance(v, MapValue) or "value" in v:
            continue
        default = v.entry("default")
        if default is None or "type" not in v:
            continue
        unsafe = _reads_the_shape(ctx, c.name)
        fix = Fix(
            "Rename `default:` to `value:` (a typed constant)",
            (Edit(default.key.span, "value"),),
            "unsafe" if unsafe else "safe",
        )
        yield lint(
            RULE,
            default.key.span,
            f"`const.{c.name}` has `type:` and `default:` but no `value:`, so it is the literal object "
            f"{{type, default}}, not a typed constant: `${{{{ const.{c.name} }}}}` is that object",
            "A typed constant is `{ type: …, value: … }` (`default:` belongs to `inputs:`)"
            + (f"; an expression reads `const.{c.name}.type` or `.default`: change it too." if unsafe else "."),
            fixes=(fix,),
        )


def _reads_the_shape(ctx: RuleContext, name: str) -> bool:
    """Whether an expression reads the ``type`` or ``default`` member of ``const.<name>``."""
    for site in ctx.sites:
        for _island, ref, _span in site.references():
            if ref.root != "const" or not ref.path or ref.path[0] != name:
                continue
            if len(ref.path) >= 2 and ref.path[1] in _SHAPE_KEYS:
                return True
    return False
