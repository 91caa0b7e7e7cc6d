"""The Neovim recipes of docs/editors.md, as printed there, in a real headless Neovim.

Each ```lua block of the page starts with a comment naming the Neovim it is for (`-- Neovim 0.7`,
`-- Neovim 0.8+`). A recipe runs as the whole `init.lua` of a Neovim that opens a workflow with an
error; the diagnostics must arrive from `nika lsp`. The Neovim is `NIKA_NVIM` (a path; its
environment, e.g. `VIMRUNTIME`, passed through) or `nvim` on PATH; a recipe for a newer Neovim than
that one is skipped, saying which it needs.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "editors.md"
WAIT = """
local buf = vim.api.nvim_get_current_buf()
local got = vim.wait(30000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
if not got then io.stdout:write("no diagnostics received\\n") end
for _, d in ipairs(vim.diagnostic.get(buf)) do
  io.stdout:write(string.format("%d:%d %s\\n", d.lnum + 1, d.col + 1, tostring(d.code or "")))
end
vim.cmd("qa!")
"""
BROKEN = 'nika: v1\nworkflow:\n  id: demo\npermits: { exec: ["true"] }\ntasks:\n  a:\n    after: { ghost: success }\n'
BROKEN += '    exec: { command: ["true"] }\n'


def recipes() -> list[tuple[tuple[int, int], str]]:
    text = PAGE.read_text(encoding="utf-8")
    out = []
    for body in re.findall(r"```lua\n(.*?)```", text, re.S):
        m = re.match(r"-- Neovim (\d+)\.(\d+)", body)
        assert m, f"a lua block of docs/editors.md does not say which Neovim it is for:\n{body}"
        out.append(((int(m.group(1)), int(m.group(2))), body))
    return out


def test_the_page_has_a_recipe_for_debian_s_neovim_and_for_0_8() -> None:
    versions = [v for v, _ in recipes()]
    assert (0, 7) in versions and (0, 8) in versions
    assert all('{ "nika", "lsp" }' in body for _, body in recipes())


def _nvim() -> tuple[str, tuple[int, int]] | None:
    exe = os.environ.get("NIKA_NVIM") or shutil.which("nvim")
    if not exe:
        return None
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=30).stdout
    m = re.search(r"NVIM v(\d+)\.(\d+)", out)
    return (exe, (int(m.group(1)), int(m.group(2)))) if m else None


@pytest.mark.parametrize("recipe", recipes(), ids=[f"neovim-{v[0]}.{v[1]}" for v, _ in recipes()])
def test_the_recipe_attaches_nika_lsp(recipe: tuple[tuple[int, int], str], tmp_path: Path) -> None:
    found = _nvim()
    if found is None:
        pytest.skip("no Neovim: install one (apt-get install neovim) or name it in NIKA_NVIM")
    exe, have = found
    need, body = recipe
    if have < need:
        pytest.skip(f"the recipe needs Neovim {need[0]}.{need[1]}+, this one is {have[0]}.{have[1]}")
    bindir = tmp_path / "bin"
    bindir.mkdir()
    launcher = bindir / "nika"
    launcher.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        "from nika.cli import main\nsys.exit(main())\n"
    )
    launcher.chmod(0o755)
    (tmp_path / "init.lua").write_text(body, encoding="utf-8")
    (tmp_path / "wait.lua").write_text(WAIT, encoding="utf-8")
    (tmp_path / "demo.nika.yaml").write_text(BROKEN, encoding="utf-8")
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}", "HOME": str(tmp_path)}
    proc = subprocess.run(
        [exe, "--headless", "-i", "NONE", "-n", "-u", "init.lua", "-c", "luafile wait.lua", "demo.nika.yaml"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert "7:14 NIKA-DAG-002" in proc.stdout, proc.stdout + proc.stderr
