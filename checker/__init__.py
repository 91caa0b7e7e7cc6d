"""Static checker for Nika workflows: one parser, one compiled model, one rule engine.

Public API::

    from checker import compile_text, compile_bytes, compile_source

(``checker.project.files.check_paths`` finds and reads workflow files for the command line.)

The three names load the pipeline when first asked for (PEP 562): importing a leaf of the
package (``checker.core.records``, say) does not load the YAML layer and every rule with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from checker.engine.pipeline import compile_bytes, compile_source, compile_text

__all__ = ["compile_bytes", "compile_source", "compile_text"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from checker.engine import pipeline

        return getattr(pipeline, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
