"""The docs site's generated pages (mkdocs, see mkdocs.yml): nothing here is copied by hand.

* the guide pages are README sections, cut by their headings (:data:`GUIDE`), links rewritten for
  the site;
* one page per code and an index, from the registry (``checker/core/codes.toml``);
* the builtins page, from the argument contracts (``checker/contracts/builtins.toml``);
* the CLI reference, from the argument parser (``nika.cli``).

``scripts/mkdocs_hooks.py`` adds these pages to every ``mkdocs build``/``serve``; ``python
scripts/docs_site.py OUT`` writes them to a folder (to read them without mkdocs). Pure functions:
``tests/test_docs_site.py`` checks them without mkdocs installed.
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# page → (title, README headings it is made of, in order). A `## ` heading takes its whole section
# but the `### ` subsections another page claims; a `### ` heading takes that subsection alone.
# Headings match by their start, so a heading may grow a suffix without breaking the site.
GUIDE: dict[str, tuple[str, tuple[str, ...]]] = {
    "index.md": ("nika-tools", ("",)),
    "getting-started.md": ("Getting started", ("## Set-up", "## Starting a project and testing workflows")),
    "checking.md": ("Checking", ("## Checking a workflow", "## What is checked today", "## Drawing the task graph")),
    "configuration.md": ("Configuration", ("### Configuration", "## Checking your set-up")),
    "running.md": (
        "Running",
        (
            "## Running a workflow",
            "## Models, agents and MCP servers",
            "## Builtins built in this release",
            "## The network",
        ),
    ),
    "trace.md": ("The trace", ("## The trace as a tool",)),
    "editors.md": ("Editors", ("## Editors",)),
    "agents.md": ("For coding agents", ("## For coding agents",)),
    "development.md": ("Development", ("## Layout", "## The docs site", "## Benchmarks")),
}

# Files of the docs folder a README link may point at (`docs/events.md` → `events.md`).
_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^\s*(```|~~~)")


class DocsError(Exception):
    """A page cannot be made (a README heading it names is gone)."""


def sections(readme: str) -> list[tuple[str, str]]:
    """The README as (heading line, body) pairs at `##` and `###` level; fenced code is not split.
    The text before the first `## ` is the pair ("", intro)."""
    out: list[tuple[str, list[str]]] = [("", [])]
    fenced = False
    for line in readme.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        if not fenced and re.match(r"^#{2,3} ", line):
            out.append((line.strip(), []))
        else:
            out[-1][1].append(line)
    return [(h, "\n".join(body).strip("\n")) for h, body in out]


def _claimed(page_keys: tuple[str, ...]) -> set[str]:
    others = {k for _, keys in GUIDE.values() if keys != page_keys for k in keys if k.startswith("### ")}
    return others


def guide_page(readme: str, page: str) -> str:
    title, keys = GUIDE[page]
    secs = sections(readme)
    claimed = _claimed(keys)
    parts = [f"# {title}\n"]
    for key in keys:
        if key == "":
            intro = secs[0][1]
            parts.append(re.sub(r"^# .*\n+", "", intro))
            continue
        start = next((i for i, (h, _) in enumerate(secs) if h.startswith(key)), None)
        if start is None:
            raise DocsError(f"{page}: README.md has no heading starting with {key!r}")
        level = key.split(" ")[0]
        i = start
        while i < len(secs):
            h, body = secs[i]
            if i > start and (h.startswith("## ") or level == "###"):
                break
            if not any(h.startswith(c) for c in claimed) or i == start:
                parts.append(f"{h}\n\n{body}" if h else body)
            i += 1
    return rewrite_links("\n\n".join(p for p in parts if p.strip()) + "\n")


def rewrite_links(text: str, base: str = "") -> str:
    """Links made for the repository (relative to the folder `base`) → the site: `docs/X` → `X`; a
    link to another repository file keeps its text with the path in code; web and in-page links stay."""

    def sub(m: re.Match[str]) -> str:
        bang, label, target = m.groups()
        if re.match(r"^[a-z]+:|^#", target):
            return m.group(0)
        path, _, anchor = target.partition("#")
        path = os.path.normpath(os.path.join(base, path)).replace(os.sep, "/")
        if path.startswith("docs/") and (ROOT / path).exists():
            return f"{bang}[{label}]({path[len('docs/') :]}{'#' + anchor if anchor else ''})"
        if bang:
            return f"*(image: {label})*"
        return f"{label} (`{path}` in the repository)" if label.strip("`") != path else f"`{path}`"

    return _LINK.sub(sub, text)


def _escape_prose(text: str) -> str:
    """`<` and `>` outside code spans and indented code are text, not HTML, on the site."""
    out = []
    for line in text.splitlines():
        if line.startswith("    ") or line.startswith("\t"):
            out.append(line)
            continue
        pieces = re.split(r"(`[^`]*`)", line)
        out.append("".join(p if p.startswith("`") else p.replace("<", "&lt;").replace(">", "&gt;") for p in pieces))
    return "\n".join(out)


def _registry() -> dict:  # type: ignore[type-arg]
    with open(ROOT / "checker" / "core" / "codes.toml", "rb") as fh:
        return tomllib.load(fh)


def code_pages() -> dict[str, str]:
    """`errors/NIKA-X-NNN.md` for every code (the address findings link to), and `errors/index.md`."""
    table = _registry()
    pages: dict[str, str] = {}
    by_ns: dict[str, list[tuple[str, dict]]] = {}  # type: ignore[type-arg]
    for code, row in table.get("codes", {}).items():
        by_ns.setdefault("-".join(code.split("-")[:2]), []).append((code, row))
        meta = f"**{row['category']}** · {row.get('severity', 'error')} · found at {_phase(row['phase'])}"
        body = _escape_prose(row["teaching"].strip())
        pages[f"errors/{code}.md"] = f"# {code}: {_escape_prose(row['title'])}\n\n{meta}\n\n{body}\n"
    idx = ["# Codes\n", "Every code `nika` can report, from the registry. `nika explain CODE` prints the same text.\n"]
    for ns in sorted(by_ns):
        idx.append(f"## {ns}\n\n| code | title | category |\n| --- | --- | --- |")
        idx.extend(f"| [{c}]({c}.md) | {_escape_prose(r['title'])} | {r['category']} |" for c, r in sorted(by_ns[ns]))
        idx.append("")
    idx.append("## Lint rules\n\nWarnings with a rule id and no code (`nika explain RULE`).\n")
    for rule, row in table.get("lints", {}).items():
        idx.append(f"### `{rule}`: {_escape_prose(row['title'])}\n\n{_escape_prose(row['teaching'].strip())}\n")
    pages["errors/index.md"] = "\n".join(idx) + "\n"
    return pages


def _phase(phase: str) -> str:
    return {"check": "check time", "run": "run time", "both": "check and run time"}.get(phase, phase)


def builtins_page() -> str:
    with open(ROOT / "checker" / "contracts" / "builtins.toml", "rb") as fh:
        data = tomllib.load(fh)
    out = ["# Builtins\n", "Every `nika:*` tool and its arguments, from the checker's contract data.\n"]
    for name, tool in data.get("tools", {}).items():
        effects = ", ".join(tool.get("effects", [])) or "none"
        out.append(f"## `{name}`\n\n{_escape_prose(tool.get('summary', ''))}\n")
        out.append(
            f"*{tool.get('category', '')}* · effects: {effects} · returns: {_escape_prose(tool.get('output', ''))}\n"
        )
        args = tool.get("args", {})
        if args:
            out.append("| argument | type | required | default | |\n| --- | --- | --- | --- | --- |")
            for arg, spec in args.items():
                out.append(_arg_row(arg, spec))
            out.append("")
    return "\n".join(out) + "\n"


def _arg_row(arg: str, spec: dict) -> str:  # type: ignore[type-arg]
    typ = spec.get("type", "any")
    typ = " \\| ".join(typ) if isinstance(typ, list) else typ
    if "values" in spec:
        typ += ": " + ", ".join(f"`{v}`" for v in spec["values"])
    default = f"`{spec['default']}`" if "default" in spec else ""
    doc = _escape_prose(spec.get("doc", "")).replace("|", "\\|")
    return f"| `{arg}` | {typ} | {'yes' if spec.get('required') else ''} | {default} | {doc} |"


def cli_page() -> str:
    """`nika --help` and every subcommand's help, at a fixed width."""
    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "100"
    try:
        sys.path.insert(0, str(ROOT))
        from nika.cli import _parser

        out = ["# Command line\n", "Generated from the argument parser: what `nika COMMAND --help` prints.\n"]
        for name, parser in _walk(_parser(), "nika"):
            out.append(f"## `{name}`\n\n```text\n{parser.format_help().rstrip()}\n```\n")
        return "\n".join(out)
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def _walk(parser, prog: str) -> Iterator[tuple[str, object]]:  # type: ignore[no-untyped-def]
    import argparse

    yield prog, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _walk(sub, f"{prog} {name}")


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a README heading (what the README's `(#…)` links use)."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")


def site_slug(heading: str) -> str:
    """The anchor Python-Markdown's `toc` gives the same heading on the site."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "")).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def relink_anchors(pages: dict[str, str]) -> dict[str, str]:
    """README in-page links (`#checking-a-workflow`) → the page that now holds that heading."""
    where: dict[str, tuple[str, str]] = {}
    for page in GUIDE:
        for heading, _ in sections(pages[page])[1:]:
            title = heading.lstrip("#").strip()
            where.setdefault(github_slug(title), (page, site_slug(title)))

    def fix(page: str) -> str:
        def sub(m: re.Match[str]) -> str:
            target = where.get(m.group(2))
            if target is None:
                return m.group(0)
            return f"]({'' if target[0] == page else target[0]}#{target[1]})"

        return re.sub(r"\]\((#)([^)\s]+)\)", sub, pages[page])

    return {page: fix(page) if page in GUIDE else text for page, text in pages.items()}


def vscode_section() -> str:
    """The VS Code extension's own README, as a section of the editors page (headings one level down)."""
    text = (ROOT / "vscode-extension" / "README.md").read_text(encoding="utf-8")
    body = re.sub(r"^# .*\n+", "", text)
    out, fenced = [], False
    for line in body.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
        out.append("#" + line if not fenced and re.match(r"^#{2,5} ", line) else line)
    return "## The VS Code extension in detail\n\n" + rewrite_links("\n".join(out), "vscode-extension") + "\n"


def all_pages(readme: str | None = None) -> dict[str, str]:
    text = readme if readme is not None else (ROOT / "README.md").read_text(encoding="utf-8")
    pages = {page: guide_page(text, page) for page in GUIDE}
    pages["editors.md"] += "\n" + vscode_section()
    pages = relink_anchors(pages)
    pages.update(code_pages())
    pages["builtins.md"] = builtins_page()
    pages["cli.md"] = cli_page()
    return pages


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print("usage: python scripts/docs_site.py OUT_DIR", file=sys.stderr)
        return 1
    out = Path(argv[0])
    for rel, text in all_pages().items():
        (out / rel).parent.mkdir(parents=True, exist_ok=True)
        (out / rel).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
