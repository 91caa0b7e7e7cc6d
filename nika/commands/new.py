"""``nika new TEMPLATE [NAME]``: write a workflow and its test from a built-in template (the
templates are package data, ``nika/templates/``, read by :mod:`nika.commands.init`). Existing
files are never overwritten."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from nika.commands.init import NAME, SAMPLES, TEMPLATE_SUFFIX, TEST_SUFFIX, render, template_data, templates


def register(sub: Any) -> None:
    n = sub.add_parser(
        "new",
        help="write a workflow (and its test) from a template: nika new --list",
        description=(
            "Write NAME.nika.yaml and NAME.nika-test.yaml from one of the built-in templates, with the "
            "workflow id set to NAME (default: the template's name). Existing files are never overwritten."
        ),
        epilog="exit status: 0 written; 1 unknown template, bad name, or a file already exists",
    )
    n.add_argument("template", nargs="?", metavar="TEMPLATE", help="a template name (see --list)")
    n.add_argument("name", nargs="?", metavar="NAME", help="the workflow id and file name (kebab-case)")
    n.add_argument("--list", action="store_true", help="list the templates and exit")
    n.add_argument("--dir", default=".", metavar="DIR", help="where to write the files (default: .)")


def run(args: Any) -> int:
    return new(args.template, args.name, directory=args.dir, list_only=args.list)


def new(template: str | None, name: str | None, *, directory: str = ".", list_only: bool = False) -> int:
    available = templates()
    if list_only or template is None:
        width = max(len(t) for t in available)
        for t, summary in available.items():
            print(f"{t:<{width}}  {summary}")
        if template is None and not list_only:
            print("nika new: give a TEMPLATE (one of the above) and optionally a NAME", file=sys.stderr)
            return 1
        return 0
    if template not in available:
        from checker.core.suggest import did_you_mean

        near = did_you_mean(template, available)
        hint = f"; did you mean `{near}`?" if near else f" (templates: {', '.join(available)})"
        print(f"nika new: no template `{template}`{hint}", file=sys.stderr)
        return 1
    name = name or template
    if not NAME.match(name):
        print(f"nika new: `{name}` is not kebab-case (lowercase letters, digits and `-`)", file=sys.stderr)
        return 1
    root = Path(directory)
    targets = [root / f"{name}{TEMPLATE_SUFFIX}", root / f"{name}{TEST_SUFFIX}"]
    existing = [str(p) for p in targets if p.exists()]
    if existing:
        print(f"nika new: {', '.join(existing)} already exist{'s' if len(existing) == 1 else ''}", file=sys.stderr)
        return 1
    workflow, test = render(template, name)
    try:
        root.mkdir(parents=True, exist_ok=True)
        for path, text in zip(targets, (workflow, test), strict=True):
            path.write_text(text, encoding="utf-8")
            print(f"created  {path}")
        if template in SAMPLES:
            source, target, inputs = SAMPLES[template]
            if not any(root.glob(inputs)):
                (root / target).parent.mkdir(parents=True, exist_ok=True)
                (root / target).write_text(template_data(source), encoding="utf-8")
                print(f"created  {root / target} (a sample input)")
    except OSError as exc:
        print(f"nika new: {directory}: {(exc.strerror or str(exc)).lower()}", file=sys.stderr)
        return 1
    print(f"next: nika check {targets[0]} && nika test {targets[1]}")
    return 0
