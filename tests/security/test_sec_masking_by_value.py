"""Masking by value on the engine's own surfaces (spec 04 §the masking boundary: logs, traces,
journal, `nika:inspect` output; spec 01 §secrets).

A secret of any loadable length (four characters and more) is masked in the journal, the
`--events ndjson` stream, `nika trace outputs`, the JSON report, OpenTelemetry (fed by the same
redactor) and error messages, in every spelling the engine writes it: raw, JSON-encoded inside a
field, percent-encoded, base64 (a `Basic` header). A shorter one is refused when it is loaded. A
task whose output carries a masked value is never served from the journal on resume: it runs again
and the resume says so.
"""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path

import pytest

from nika.commands.run import run_command
from nika.commands.trace import trace_outputs
from runtime.guard.redact import MASK, MIN_SECRET_CHARS, Redactor

SHORT = "Zq7!x"  # five characters: written raw before (the substring mask started at eight)

_WF = """\
nika: v1
workflow: {{ id: mask }}
permits: {{ exec: ["printf"] }}
secrets:
  pin:
    source: env
    key: NIKA_TEST_SHORT_PIN
    egress: [{{ to: "exec" }}, {{ to: "outputs" }}]
tasks:
  say:
    exec: {{ command: ["printf", "%s", "{text}"] }}
outputs:
  said: ${{{{ tasks.say.output }}}}
"""


def _run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, value: str = SHORT, *extra: str
) -> tuple[int, str, str, str]:
    monkeypatch.setenv("NIKA_TEST_SHORT_PIN", value)
    monkeypatch.chdir(tmp_path)
    wf = tmp_path / "mask.nika.yaml"
    wf.write_text(_WF.format(text=text))
    out, err = io.StringIO(), io.StringIO()
    events = tmp_path / "events.ndjson"
    code = run_command(
        str(wf), output_format="json", trace_dir=str(tmp_path / "traces"), events=f"ndjson:{events}", out=out, err=err
    )
    journal = "".join(p.read_text() for p in (tmp_path / "traces").rglob("*.ndjson"))
    return code, out.getvalue(), err.getvalue() + events.read_text(), journal


@pytest.mark.parametrize(
    "text",
    ["pin=${{ secrets.pin }}", 'quoted \\"${{ secrets.pin }}\\" inside', "${{ secrets.pin }}"],
)
def test_a_short_secret_is_masked_on_every_surface(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    code, out, err, journal = _run(tmp_path, monkeypatch, text)
    assert code == 0, (out, err)
    for where in (out, err, journal):
        assert SHORT not in where and json.dumps(SHORT)[1:-1] not in where
    assert MASK in journal
    view = io.StringIO()
    trace_outputs("latest", tmp_path / "traces", "json", view)
    assert SHORT not in view.getvalue()


def test_a_secret_too_short_to_mask_is_refused_at_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _code, out, _err, _journal = _run(tmp_path, monkeypatch, "${{ secrets.pin }}", "x9")
    report = json.loads(out)
    error = report["tasks"]["say"]["error"]
    assert error["code"] == "NIKA-VAR-001" and str(MIN_SECRET_CHARS) in error["message"]
    assert "x9" not in error["message"]


@pytest.mark.parametrize("secret", ["4821", "pa:ss", "ünï-cødé", "a/b+c=d?e"])
def test_every_spelling_the_engine_writes_is_masked(secret: str) -> None:
    from urllib.parse import quote, quote_plus

    r = Redactor({secret})
    spellings = [
        secret,
        json.dumps({"k": secret}),
        json.dumps(json.dumps({"k": secret})),
        json.dumps({"k": secret}, ensure_ascii=False),
        quote(secret, safe=""),
        quote_plus(secret),
        *("Basic " + base64.b64encode(f"{u}:{secret}".encode()).decode() for u in ("", "a", "ab", "abc")),
        base64.urlsafe_b64encode(secret.encode()).decode(),
    ]
    for text in spellings:
        shown = r(f"<{text}>")
        assert MASK in shown, text
        if text.startswith("Basic "):
            assert shown == f"<Basic {MASK}>"


def test_a_masked_output_is_not_served_on_resume(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Resume (ADR-099): a task whose output carries a masked value runs again and the resume note
    says so; the resumed output is the real one, never the mask."""
    from rt_helpers import run_yaml

    from runtime.durable.resume_index import open_resume

    monkeypatch.setenv("NIKA_TEST_SHORT_PIN", SHORT)
    text = _WF.format(text="pin=${{ secrets.pin }}")
    first = run_yaml(text, tmp_path, engine_env={"NIKA_TEST_SHORT_PIN": SHORT})
    rec = first.tasks["say"]
    assert rec.status == "success" and rec.output == f"pin={SHORT}"
    compiled = _compiled(tmp_path)
    index = open_resume(str(first.trace), compiled)
    try:
        assert index.lookup("say", rec.definition_hash or "", rec.input_hash or "") is None
        assert any("`say` runs again" in n and "masked" in n for n in index.notes), index.notes
    finally:
        index.release()
    again = run_yaml(text, tmp_path, engine_env={"NIKA_TEST_SHORT_PIN": SHORT}, resume=_resumed(tmp_path, first))
    assert again.tasks["say"].output == f"pin={SHORT}" and not again.tasks["say"].cache_hit


def _compiled(tmp_path: Path):
    from checker.engine.pipeline import compile_text

    path = tmp_path / "wf.nika.yaml"
    return compile_text(path.read_text(), str(path), str(tmp_path))


def _resumed(tmp_path: Path, first):
    from runtime.durable.resume_index import open_resume

    return open_resume(str(first.trace), _compiled(tmp_path))
