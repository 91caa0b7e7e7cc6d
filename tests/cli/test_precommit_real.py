"""The hooks of `.pre-commit-hooks.yaml` under the real `pre-commit`, on a temporary git repository:
a workflow with an error fails the commit, a clean one is committed, and `nika-check-fix` fails the
commit that it had to repair (the fixed file is left for review) and passes the next one.

`nika` is this checkout, put on PATH as a small launcher, so the `language: system` hook needs no
environment; the `language: python` hooks are run with their manifest entry as a local hook (same
entry, files and types). Installing the self-installing hook (`try-repo` of `nika-check`) builds a
virtualenv and installs the base install (about 20 s of CPU), more than the suite's budget allows
one test: it is the `hook-env` step of `.ci/run` (NIKA_SLOW_TESTS=1), and the default suite skips
it with that reason. So are the two that clone this checkout (`try-repo` of the system hook,
`autoupdate`); the default suite keeps the commits refused and fixed under the real pre-commit.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

ROOT = Path(__file__).resolve().parents[2]
GOOD = 'nika: v1\nworkflow: {id: good}\npermits: {exec: true}\ntasks:\n  a:\n    exec: { command: ["./a.sh"] }\n'
BAD = (
    "nika: v1\nworkflow: {id: bad}\npermits: {exec: true}\ntasks:\n  a:\n    after: { ghost: success }\n"
    '    exec: { command: ["./a.sh"] }\n'
)
# a unique did-you-mean: `--fix` renames `helo` to `hello`, and then nothing is left to report
FIXABLE = (
    "nika: v1\nworkflow: {id: greet}\npermits: {exec: [echo]}\ntasks:\n  hello:\n"
    '    infer: { model: mock/echo, prompt: "Hi" }\n  shout:\n    after: { helo: success }\n'
    '    exec: { command: ["echo", "HI"] }\n'
)

if importlib.util.find_spec("pre_commit") is None:
    pytest.skip("pre-commit is not installed (pip install pre-commit, in the test extras)", allow_module_level=True)
if shutil.which("git") is None:
    pytest.skip("git is not on PATH: pre-commit needs it", allow_module_level=True)


def _manifest() -> dict[str, dict]:
    return {h["id"]: h for h in YAML(typ="safe").load((ROOT / ".pre-commit-hooks.yaml").read_text())}


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A fresh git repository, an environment with this checkout's `nika` first on PATH."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    launcher = bindir / "nika"
    launcher.write_text(
        f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(ROOT)!r})\n"
        "from nika.cli import main\nsys.exit(main())\n"
    )
    launcher.chmod(0o755)
    work = tmp_path / "repo"
    work.mkdir()
    env = {
        **os.environ,
        "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}",
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.invalid",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "PRE_COMMIT_COLOR": "never",
    }
    env.pop("PYTHONPATH", None)  # the launcher finds the checkout itself; pre-commit runs from site-packages
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=work, env=env, check=True)
    return work, env


def _local_config(work: Path, hook_ids: list[str]) -> None:
    """A `repo: local` configuration carrying the manifest's hooks as they are, run with the `nika` on PATH."""
    hooks = []
    for hid in hook_ids:
        h = dict(_manifest()[hid])
        h["language"] = "system"  # the manifest's entry, without building the hook's own environment
        hooks.append(h)
    import io

    buf = io.StringIO()
    YAML().dump({"repos": [{"repo": "local", "hooks": hooks}]}, buf)
    (work / ".pre-commit-config.yaml").write_text(buf.getvalue())


def _git(work: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=work, env=env, capture_output=True, text=True, timeout=60)


def _install(work: Path, env: dict[str, str]) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pre_commit", "install"], cwd=work, env=env, capture_output=True, text=True, timeout=60
    )
    if done.returncode != 0:
        pytest.skip(f"pre-commit install failed here: {done.stdout}{done.stderr}".strip())
    _git(work, env, "add", ".pre-commit-config.yaml")


def test_real_precommit_refuses_a_commit_with_an_error_and_accepts_a_clean_one(repo: tuple[Path, dict]) -> None:
    work, env = repo
    _local_config(work, ["nika-check-system"])
    _install(work, env)
    (work / "bad.nika.yml").write_text(BAD)
    _git(work, env, "add", "bad.nika.yml")
    refused = _git(work, env, "commit", "-q", "-m", "bad")
    assert refused.returncode != 0, refused.stdout + refused.stderr
    assert "bad.nika.yml:6:14: error[NIKA-DAG-002]" in refused.stdout + refused.stderr
    assert _git(work, env, "rev-parse", "--verify", "-q", "HEAD").returncode != 0  # nothing was committed

    _git(work, env, "rm", "-q", "--cached", "bad.nika.yml")
    (work / "bad.nika.yml").unlink()
    (work / "good.nika.yaml").write_text(GOOD)
    (work / "notes.yaml").write_text("not: a workflow\n")  # not passed to the hook (files:)
    _git(work, env, "add", "good.nika.yaml", "notes.yaml")
    accepted = _git(work, env, "commit", "-q", "-m", "good")
    assert accepted.returncode == 0, accepted.stdout + accepted.stderr
    assert "Passed" in accepted.stdout + accepted.stderr


@pytest.mark.skipif(
    os.environ.get("NIKA_SLOW_TESTS") != "1",
    reason="clones this checkout (seconds on a loaded machine): the `hook-env` step of .ci/run runs it",
)
def test_try_repo_runs_the_system_hook_from_this_checkout(repo: tuple[Path, dict]) -> None:
    """`pre-commit try-repo` reads this checkout's `.pre-commit-hooks.yaml` (uncommitted edits included)."""
    work, env = repo
    (work / "bad.nika.yml").write_text(BAD)
    (work / "good.nika.yaml").write_text(GOOD)
    _git(work, env, "add", ".")

    def try_repo(*files: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "nika-check-system", "--files", *files]
        return subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=120)

    # one run (try-repo clones this checkout each time): the clean file passes the commit test above
    bad = try_repo("good.nika.yaml", "bad.nika.yml")
    if bad.returncode != 0 and "NIKA" not in bad.stdout:
        pytest.skip(f"pre-commit try-repo cannot run here: {bad.stdout[-400:]}{bad.stderr[-400:]}")
    assert bad.returncode == 1 and "bad.nika.yml:6:14: error[NIKA-DAG-002]" in bad.stdout
    assert "good.nika.yaml" not in bad.stdout  # only the file with an error is reported


def test_fix_hook_fails_the_commit_it_repaired_passes_the_next_and_refuses_what_it_cannot_fix(
    repo: tuple[Path, dict],
) -> None:
    work, env = repo
    _local_config(work, ["nika-check-fix"])
    _install(work, env)
    (work / "greet.nika.yaml").write_text(FIXABLE)
    _git(work, env, "add", "greet.nika.yaml")
    first = _git(work, env, "commit", "-q", "-m", "greet")
    assert first.returncode != 0, first.stdout + first.stderr
    assert "files were modified by this hook" in first.stdout + first.stderr
    assert "after: { hello: success }" in (work / "greet.nika.yaml").read_text()  # fixed on disk, for review
    _git(work, env, "add", "greet.nika.yaml")
    second = _git(work, env, "commit", "-q", "-m", "greet")
    assert second.returncode == 0, second.stdout + second.stderr

    (work / "bad.nika.yml").write_text(BAD)  # `ghost` has no near name: nothing to fix
    _git(work, env, "add", "bad.nika.yml")
    refused = _git(work, env, "commit", "-q", "-m", "bad")
    assert refused.returncode != 0 and "NIKA-DAG-002" in refused.stdout + refused.stderr
    assert (work / "bad.nika.yml").read_text() == BAD


@pytest.mark.skipif(
    os.environ.get("NIKA_SLOW_TESTS") != "1",
    reason="builds the hook's own virtualenv (about 20 s of CPU): the `hook-env` step of .ci/run runs it",
)
def test_try_repo_installs_the_python_hook(repo: tuple[Path, dict]) -> None:
    work, env = repo
    (work / "bad.nika.yml").write_text(BAD)
    (work / "good.nika.yaml").write_text(GOOD)
    _git(work, env, "add", ".")
    cmd = [sys.executable, "-m", "pre_commit", "try-repo", str(ROOT), "nika-check", "--files"]
    ok = subprocess.run([*cmd, "good.nika.yaml"], cwd=work, env=env, capture_output=True, text=True, timeout=900)
    if ok.returncode != 0 and "NIKA" not in ok.stdout:
        pytest.skip(f"the hook environment cannot be installed here: {ok.stdout[-400:]}{ok.stderr[-400:]}")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    bad = subprocess.run(
        [*cmd, "good.nika.yaml", "bad.nika.yml"], cwd=work, env=env, capture_output=True, text=True, timeout=900
    )
    assert bad.returncode == 1 and "NIKA-DAG-002" in bad.stdout


def _checkout_head() -> str | None:
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    return head.stdout.strip() if head.returncode == 0 else None


@pytest.mark.skipif(
    os.environ.get("NIKA_SLOW_TESTS") != "1",
    reason="clones this checkout (seconds on a loaded machine): the `hook-env` step of .ci/run runs it",
)
def test_autoupdate_pins_a_revision_the_hooks_then_run_from(repo: tuple[Path, dict]) -> None:
    """The docs' pre-commit advice holds: whatever `rev:` says at first, `pre-commit autoupdate` pins a
    revision of this repository (a commit while there is no release tag, else the newest tag) whose hook
    manifest has the hook. The configuration is the one docs/checking.md shows, pointed at this checkout."""
    if _checkout_head() is None:
        pytest.skip("not a git checkout: nothing to pin")
    work, env = repo
    (work / ".pre-commit-config.yaml").write_text(
        f"repos:\n  - repo: {ROOT}\n    rev: 0123456789abcdef0123456789abcdef01234567\n"
        "    hooks:\n      - id: nika-check-system\n"
    )
    up = subprocess.run(
        [sys.executable, "-m", "pre_commit", "autoupdate"],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert up.returncode == 0, up.stdout + up.stderr
    rev = YAML(typ="safe").load((work / ".pre-commit-config.yaml").read_text())["repos"][0]["rev"]
    tags = subprocess.run(["git", "tag", "-l", "v*"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    is_commit = subprocess.run(["git", "cat-file", "-e", f"{rev}^{{commit}}"], cwd=ROOT).returncode == 0
    assert rev in tags or (is_commit and len(rev) == 40), rev
    # autoupdate read the pinned revision's .pre-commit-hooks.yaml (it refuses a rev whose manifest lacks the
    # hook): `nika-check-system` runs from that pin, as try-repo above runs it from this checkout
    assert "updating" in up.stdout, up.stdout


def test_every_release_tag_names_the_version_of_its_commit() -> None:
    """The release scheme docs/development.md states: a tag vX.Y.Z carries pyproject's version X.Y.Z."""
    if _checkout_head() is None:
        pytest.skip("not a git checkout")
    tags = subprocess.run(["git", "tag", "-l", "v*"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    for tag in tags:
        text = subprocess.run(["git", "show", f"{tag}:pyproject.toml"], cwd=ROOT, capture_output=True, text=True).stdout
        assert f'\nversion = "{tag[1:]}"\n' in text, f"{tag} does not carry version {tag[1:]} in pyproject.toml"
