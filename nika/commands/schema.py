"""``nika schema``: the JSON Schema (draft 2020-12) of the ``nika: v1`` workflow format, generated
from the checker's own field and tool data, for a ``# yaml-language-server: $schema=<file>`` modeline."""

from __future__ import annotations

import contextlib
from typing import Any


def register(sub: Any) -> None:
    sub.add_parser(
        "schema",
        help="print the workflow JSON Schema (for a `# yaml-language-server: $schema=<file>` modeline)",
        description=(
            "Print a JSON Schema (draft 2020-12) of the nika: v1 workflow format, generated from the "
            "checker's own field and tool data. Save it to a file and point yaml-language-server at it "
            "with a first line `# yaml-language-server: $schema=<file>` (or its yaml.schemas setting) "
            "for completion and structural errors in any editor; `nika check` still judges the rest."
        ),
    )


def run(args: Any) -> int:
    """Print the generated workflow JSON Schema on stdout."""
    import json

    from checker.views.workflow_schema import workflow_json_schema

    with contextlib.suppress(BrokenPipeError):
        print(json.dumps(workflow_json_schema(), indent=2))
    return 0
