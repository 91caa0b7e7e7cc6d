"""The docs site's generated pages (mkdocs, see mkdocs.yml): nothing here is copied by hand.

The guide is written as pages under ``docs/`` (their own source; the README links to them). What
is generated, at every build, is the reference that has a single source elsewhere:

* one page per code and an index, from the code registry (``checker/core/codes.toml``, read by
  ``checker.core.codes`` exactly as ``nika explain`` reads it);
* the builtins page, from the argument contracts (``checker/contracts/builtins.toml``);
* the CLI reference, from the argument parser (``nika.cli``);
* the repository files the site publishes as they are (:data:`PUBLISHED`: ``SECURITY.md``).

``scripts/mkdocs_hooks.py`` adds these pages to every ``mkdocs build``/``serve`` and passes each
page through :func:`rewrite_links`; ``python scripts/docs_site.py OUT`` writes them to a folder (to
read them without mkdocs). Pure functions: ``tests/test_docs_site.py`` checks them without mkdocs.
"""

from __future__ import annotations

import os
import re
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

# Repository files the site publishes unchanged, at this address; a page's link to the file goes there.
PUBLISHED = {"SECURITY.md": "security-policy.md"}

_LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def rewrite_links(text: str, page: str) -> str:
    """A page's links, for the site. ``page`` is its path under ``docs/``. A link inside ``docs/``
    stays; a link to a file :data:`PUBLISHED` goes to its page; a link to any other repository
    file keeps its text with the path in code (the site has no copy of it); web links stay."""
    base = os.path.dirname(os.path.join("docs", page))

    def sub(m: re.Match[str]) -> str:
        bang, label, target = m.groups()
        if re.match(r"^[a-z]+:|^#", target):
            return m.group(0)
        path, _, anchor = target.partition("#")
        path = os.path.normpath(os.path.join(base, path)).replace(os.sep, "/")
        if path.startswith("docs/"):
            return m.group(0)
        if path in PUBLISHED:
            rel = os.path.relpath(os.path.join("docs", PUBLISHED[path]), base).replace(os.sep, "/")
            return f"{bang}[{label}]({rel}{'#' + anchor if anchor else ''})"
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


def code_pages() -> dict[str, str]:
    """`errors/NIKA-X-NNN.md` for every code (the address findings link to), and `errors/index.md`;
    the text is the registry's, read by the loader `nika explain` uses."""
    from checker.core.codes import lints, registry

    pages: dict[str, str] = {}
    by_ns: dict[str, list[tuple[str, str, str]]] = {}
    for code, info in registry().items():
        by_ns.setdefault(info.namespace, []).append((code, info.title, info.category))
        meta = f"**{info.category}** · {info.severity.value} · found at {_phase(info.phase)}"
        body = _escape_prose(info.teaching)
        pages[f"errors/{code}.md"] = f"# {code}: {_escape_prose(info.title)}\n\n{meta}\n\n{body}\n"
    idx = [
        "# Codes\n",
        "Every code `nika` can report, from the registry. `nika explain CODE` prints the same text.\n",
    ]
    for ns in sorted(by_ns):
        idx.append(f"## {ns}\n\n| code | title | category |\n| --- | --- | --- |")
        idx.extend(f"| [{c}]({c}.md) | {_escape_prose(t)} | {cat} |" for c, t, cat in sorted(by_ns[ns]))
        idx.append("")
    idx.append("## Lint rules\n\nWarnings with a rule id and no code (`nika explain RULE`).\n")
    for rule, linfo in lints().items():
        idx.append(f"### `{rule}`: {_escape_prose(linfo.title)}\n\n{_escape_prose(linfo.teaching)}\n")
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


def published_pages() -> dict[str, str]:
    """The repository files of :data:`PUBLISHED`, their links made for the site."""
    out = {}
    for source, page in PUBLISHED.items():
        text = (ROOT / source).read_text(encoding="utf-8")
        out[page] = _LINK.sub(lambda m, page=page: _repo_link(m, page), text)
    return out


def _repo_link(m: re.Match[str], page: str) -> str:
    """A link written for the repository root, in a page published at docs/``page``."""
    bang, label, target = m.groups()
    if re.match(r"^[a-z]+:|^#", target) or target.startswith("/"):
        return m.group(0)
    return rewrite_links(f"{bang}[{label}]({os.path.relpath(target, 'docs')})", page)


def all_pages() -> dict[str, str]:
    pages = code_pages()
    pages["builtins.md"] = builtins_page()
    pages["cli.md"] = cli_page()
    pages.update(published_pages())
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
