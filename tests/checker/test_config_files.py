"""A project's configuration is found afresh: a long-lived process (the language server) sees a
configuration file created or edited while it runs (checker/project/config_files.py)."""

from __future__ import annotations

import os
from pathlib import Path

from checker.project.config_files import config_file_for
from checker.project.settings import settings_for


def _touch_later(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))


def test_a_configuration_created_later_is_found(tmp_path: Path) -> None:
    flow = tmp_path / "sub" / "flow.nika.yaml"
    flow.parent.mkdir()
    flow.write_text("nika: v1\n")
    before = config_file_for(str(flow))
    assert before is None or not before[0].startswith(str(tmp_path))
    (tmp_path / "nika.toml").write_text('ignore = ["NIKA-DAG-002"]\n')
    assert config_file_for(str(flow)) == (str(tmp_path / "nika.toml"), False)


def test_an_edited_configuration_is_read_again(tmp_path: Path) -> None:
    flow = tmp_path / "flow.nika.yaml"
    flow.write_text("nika: v1\n")
    conf = tmp_path / "nika.toml"
    conf.write_text('ignore = ["NIKA-DAG-002"]\n')
    first = settings_for(str(flow))
    conf.write_text('ignore = ["NIKA-DAG-001"]\n')
    _touch_later(conf)
    second = settings_for(str(flow))
    assert first != second
    assert "NIKA-DAG-001" in repr(second) and "NIKA-DAG-002" not in repr(second)


def test_a_pyproject_that_gains_a_nika_table_is_found(tmp_path: Path) -> None:
    flow = tmp_path / "flow.nika.yaml"
    flow.write_text("nika: v1\n")
    py = tmp_path / "pyproject.toml"
    py.write_text('[project]\nname = "x"\n')
    assert config_file_for(str(flow)) != (str(py), True)
    py.write_text('[project]\nname = "x"\n\n[tool.nika]\nignore = ["NIKA-DAG-002"]\n')
    _touch_later(py)
    assert config_file_for(str(flow)) == (str(py), True)
