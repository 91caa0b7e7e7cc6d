"""A document compiled without its rules: what a parent needs to know of a child workflow."""

from __future__ import annotations

from checker.compiler import compile_tree
from checker.model.workflow import Workflow
from checker.parse.nodes import decode_source, parse_yaml


def model_of_bytes(data: bytes, path: str) -> tuple[bool, Workflow | None]:
    """The model of a document compiled without its rules: what a parent needs to know about a
    child workflow it invokes. ``(False, None)`` when the bytes are over the size cap or not UTF-8,
    ``(True, None)`` when they are not a workflow mapping."""
    from checker.parse.nodes import MAX_DOCUMENT_BYTES

    if len(data) > MAX_DOCUMENT_BYTES:
        return False, None
    src, problems = decode_source(data, path)
    if problems:
        return False, None
    parsed = parse_yaml(src)
    if parsed.root is None:
        return True, None
    wf, _, _ = compile_tree(src, parsed.root, parsed.duplicates)
    return True, wf
