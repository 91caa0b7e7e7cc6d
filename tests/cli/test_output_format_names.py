"""`--output-format` is spelled one way (`text`, alias `full`) on every command, and the arguments of
`nika run` and `nika trace verify` carry help text (issue 25, papercuts)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from nika.cli import _parser, _subparser
from nika.cli_formats import CHECK_FORMATS, normalise, renderer_name
from tests.cli.test_cli import nika_here

ROOT = Path(__file__).resolve().parents[2]
BAD = (
    "nika: v1\nworkflow: {id: w}\npermits: {exec: [echo]}\ntasks:\n  a:\n    exec: { command: [echo, hi] }\n"
    "  b:\n    with: { x: '${{ tasks.helo.output }}' }\n    exec: { command: [echo, '${{ with.x }}'] }\n"
)


def _commands() -> dict[str, argparse.ArgumentParser]:
    """Every (sub)command's parser, keyed `run`, `trace verify`, …"""
    out: dict[str, argparse.ArgumentParser] = {}

    def walk(p: argparse.ArgumentParser, prefix: str) -> None:
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    out[f"{prefix}{name}"] = sub
                    walk(sub, f"{prefix}{name} ")

    walk(_parser(), "")
    return out


def _format_action(p: argparse.ArgumentParser) -> argparse.Action | None:
    return next((a for a in p._actions if "--output-format" in a.option_strings), None)


def test_every_output_format_option_says_text_and_takes_full_as_an_alias() -> None:
    with_formats = {name: a for name, p in _commands().items() if (a := _format_action(p))}
    assert {"check", "run", "doctor", "trace verify", "trace ls", "trace show"} <= set(with_formats)
    for name, action in with_formats.items():
        assert action.default == "text", name
        assert "text" in action.choices and "full" not in action.choices, (name, action.choices)
        assert action.type is normalise, name
        assert "`full` is accepted" in (action.help or ""), name
    assert tuple(with_formats["check"].choices) == CHECK_FORMATS
    assert [normalise(v) for v in ("full", "FULL", "text", "json")] == ["text", "text", "text", "json"]
    assert [renderer_name(v) for v in ("text", "full", "concise")] == ["full", "full", "concise"]


def test_check_prints_the_same_report_for_text_and_full(tmp_path: Path) -> None:
    (tmp_path / "w.nika.yaml").write_text(BAD, encoding="utf-8")
    text = nika_here("check", "--color", "never", "--output-format", "text", "w.nika.yaml", cwd=tmp_path)
    full = nika_here("check", "--color", "never", "--output-format", "full", "w.nika.yaml", cwd=tmp_path)
    default = nika_here("check", "--color", "never", "w.nika.yaml", cwd=tmp_path)
    assert text.returncode == full.returncode == default.returncode == 2
    assert "NIKA-DAG-002" in text.stdout
    assert text.stdout == full.stdout == default.stdout


def test_run_and_trace_take_full_too(tmp_path: Path) -> None:
    proc = nika_here("trace", "ls", "--trace-dir", str(tmp_path), "--output-format", "full")
    assert proc.returncode == 0 and proc.stdout.strip() == "no runs", proc
    bad = nika_here("run", "--output-format", "fancy", "x.nika.yaml")
    assert bad.returncode == 1 and "invalid choice: 'fancy' (choose from 'text', 'json')" in bad.stderr


@pytest.mark.parametrize("command", ["run", "trace verify"])
def test_every_argument_of_run_and_trace_verify_has_help(command: str) -> None:
    parser = _commands()[command]
    missing = [a.dest for a in parser._actions if not a.help]
    assert missing == [], f"nika {command}: arguments without help text: {missing}"
    assert _subparser(_parser(), command.split()[0]) is not None
