"""Static checker for Nika workflows: one parser, one compiled model, one rule engine.

Public API::

    from checker import compile_text, compile_bytes, check_paths
"""

from checker.engine import compile_bytes, compile_source, compile_text

__all__ = ["compile_bytes", "compile_source", "compile_text"]
