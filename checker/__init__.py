"""Static checker for Nika workflows: one parser, one compiled model, one rule engine.

Public API::

    from checker import compile_text, compile_bytes, compile_source

(``checker.project.files.check_paths`` finds and reads workflow files for the command line.)
"""

from checker.engine.pipeline import compile_bytes, compile_source, compile_text

__all__ = ["compile_bytes", "compile_source", "compile_text"]
