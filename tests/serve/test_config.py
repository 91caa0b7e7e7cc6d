"""The `serve` table of the engine configuration: schedules and webhooks, each workflow judged
under the served roots; the checker's settings accept the table and nothing else new."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from nika.serve.config import ConfigError, engine_table, roots_of, triggers


def _root(tmp_path: Path, toml: str) -> tuple[str, ...]:
    (tmp_path / "digest.nika.yaml").write_text("nika: v1\n", encoding="utf-8")
    (tmp_path / "nika.toml").write_text(toml, encoding="utf-8")
    return roots_of([str(tmp_path)])


def test_schedules_and_webhooks_are_read_from_nika_toml(tmp_path: Path) -> None:
    roots = _root(
        tmp_path,
        '[serve.schedules.every-six-hours]\ncron = "0 */6 * * *"\nworkflow = "digest.nika.yaml"\n'
        'inputs = { topic = "tides" }\n'
        '[serve.webhooks.github]\nworkflow = "digest.nika.yaml"\nsecret_env = "GH_HOOK_SECRET"\ninput = "event"\n',
    )
    (s,), (h,) = triggers(engine_table(roots[0]), roots)
    assert (s.name, s.cron, s.inputs) == ("every-six-hours", "0 */6 * * *", {"topic": "tides"})
    assert s.workflow == os.path.join(roots[0], "digest.nika.yaml")
    assert (h.name, h.secret_env, h.input) == ("github", "GH_HOOK_SECRET", "event")


def test_tool_nika_in_pyproject_works_too(tmp_path: Path) -> None:
    (tmp_path / "digest.nika.yaml").write_text("nika: v1\n", encoding="utf-8")
    (tmp_path / "pyproject.toml").write_text(
        '[tool.nika.serve.schedules.d]\ncron = "@daily"\nworkflow = "digest.nika.yaml"\n', encoding="utf-8"
    )
    roots = roots_of([str(tmp_path)])
    (s,), () = triggers(engine_table(roots[0]), roots)
    assert s.cron == "@daily"


@pytest.mark.parametrize(
    ("toml", "said"),
    [
        ('[serve.schedules.x]\ncron = "@daily"\nworkflow = "../elsewhere.nika.yaml"\n', "outside the folders"),
        ('[serve.webhooks.x]\nworkflow = "digest.nika.yaml"\n', "secret_env"),
        ("[serve]\nport = 1\n", "serve.port: unknown setting"),
        ('[serve.schedules.x]\nworkflow = "digest.nika.yaml"\n', "needs `cron"),
    ],
)
def test_a_bad_serve_table_is_one_line(tmp_path: Path, toml: str, said: str) -> None:
    roots = _root(tmp_path, toml)
    with pytest.raises(ConfigError, match=said.replace("(", r"\(")):
        triggers(engine_table(roots[0]), roots)


def test_the_checker_accepts_the_serve_table(tmp_path: Path) -> None:
    from checker.project.settings import SettingsError, load

    (tmp_path / "nika.toml").write_text('[serve.schedules.x]\ncron = "@daily"\nworkflow = "a.nika.yaml"\n')
    assert load(str(tmp_path / "nika.toml"), False).origin
    (tmp_path / "nika.toml").write_text('serve = "yes"\n')
    with pytest.raises(SettingsError, match="must be a table"):
        load(str(tmp_path / "nika.toml"), False)
