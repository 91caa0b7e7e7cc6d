"""The judges' remaining decisions, pinned on plain data so that each mutant of them fails a test
(issue 37 item 6; docs/mutation-testing.md lists the mutants that cannot fail one).

Covers :func:`runs_any_code`, :func:`egress_admits`, :func:`url_host`'s authority reading, the
argv judge's positions and exact reasons, and the path judges :func:`resolve_named`,
:func:`resolve_inside`, :func:`under_roots` and :func:`narrow_roots` (on a temporary tree).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from checker.contracts import effects
from checker.contracts.argv import ArgvFinding, Word, dispatch_kind, judge_argv
from checker.contracts.effects import Boundary, ToolEffects
from checker.core.paths import narrow_roots, resolve_inside, resolve_named, under_roots

# -- runs_any_code ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("program", "answer"),
    [
        ("sh", "any shell line"),
        ("/usr/local/bin/bash", "any shell line"),
        ("C:\\Program Files\\Git\\bin\\BASH.EXE", "any shell line"),
        ("Zsh", "any shell line"),
        ("python", "any program text"),
        ("python3", "any program text"),
        ("/usr/bin/python3.12", "any program text"),
        ("C:\\Python312\\python.exe", "any program text"),
        ("node", "any program text"),
        ("git", None),
        ("/usr/bin/sh/git", None),
        ("shx", None),
        ("nodeX", None),
        ("exe", None),
        ("bash.exe.old", None),
        (".exesh", None),
        ("pythonista", None),
    ],
)
def test_runs_any_code_names_what_a_grant_lets_through(program: str, answer: str | None) -> None:
    assert effects.runs_any_code(program) == answer


# -- egress_admits ------------------------------------------------------------------------------


def test_an_egress_rule_admits_its_sink_and_host_only() -> None:
    admits = effects.egress_admits
    assert admits("api", None, False, "api", "x.example") is True  # neither host nor host_from_self
    assert admits("api", None, False, "other", "x.example") is False  # ① the sink is not `to:`
    assert admits("api", "h.example", False, "other", None) is False
    assert admits("api", "h.example", False, "api", None) is True  # no addressable host: ① decides
    assert admits("api", "H.Example.", False, "api", "h.example") is True  # canonical comparison
    assert admits("api", "h.example", False, "api", "evil.example") is False
    assert admits("api", "h.example", True, "api", "evil.example", "evil.example") is False  # host: wins
    assert admits("api", None, True, "api", "self.example", "self.example") is True
    assert admits("api", None, True, "api", "evil.example", "self.example") is False
    assert admits("api", None, True, "api", "evil.example", None) is False


# -- url_host -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("+://h.example/", None),  # a scheme of punctuation only is no scheme
        ("-://h.example/", None),
        (".://h.example/", None),
        ("git+ssh://h.example/x", "h.example"),
        ("http://a@b@evil.example/", "evil.example"),  # the last `@` ends the userinfo
        ("http://h.example/a/b?c#d", "h.example"),
        ("http://[::1]x]/", None),
        ("http://[::1]x80/", None),  # text after the bracket that is not `:port`
        ("http://[::1]:x8/", None),
        ("http://[::1]:80/", "::1"),
        ("http://[::1]/", "::1"),
        ("http://host.example:abc/", None),
        ("http://host.example:99999/", None),
        ("http://host.example:65535/", "host.example"),
        ("http://host.example:65536/", None),
        ("http://host.example:\u0663/", None),  # a non-ASCII digit is not a port
        ("http://host.example:/", "host.example"),
        ("http://Host.Example/", "host.example"),
    ],
)
def test_url_host_reads_the_authority_as_the_strictest_reader(url: str, host: str | None) -> None:
    assert effects.url_host(url) == host


def test_url_path_keeps_a_percent_that_is_not_an_escape() -> None:
    assert effects.url_path("http://h/a%XXb%41") == "/a%XXbA"


# -- small effect answers -----------------------------------------------------------------------


def test_the_metadata_addresses_and_config_files() -> None:
    assert effects.metadata_addresses() == ("169.254.169.254", "169.254.170.2", "100.100.100.200", "fd00:ec2::254")
    git = (".gitconfig", ".git/config", ".git/hooks/pre-commit", ".git/hooks/post-checkout", ".config/git/config")
    assert effects.config_files("/usr/bin/git") == git
    assert effects.config_files("git") == git
    assert effects.config_files("no-such-program") == ()


def test_an_untrusted_value_never_sets_a_floor_name_and_the_reason_says_why() -> None:
    assert effects.judge_env_value("LD_PRELOAD", untrusted=True) == (
        "`LD_PRELOAD` loads a shared library into every program the child starts (dynamic-linker), "
        "and an untrusted value never sets it"
    )
    assert effects.judge_env_value("LD_PRELOAD", untrusted=False) is None


def test_grants_of_an_unknown_plane_is_false() -> None:
    assert Boundary.from_data({"exec": True}).grants("bogus") is False


def test_the_capability_decides_purity() -> None:
    effects.tool_effects.cache_clear()  # answers cached before this test say nothing about the code now
    try:
        assert effects.tool_effects("nika:log") == ToolEffects("nika:log", (), pure=True)
        assert effects.tool_effects("nika:no-such-tool") == ToolEffects("nika:no-such-tool", ("tools",), known=False)
    finally:
        effects.tool_effects.cache_clear()


def test_a_nested_target_argument_is_followed_to_its_leaf() -> None:
    assert list(effects._at({"data": {"path": "in.csv"}}, ("data", "path"))) == ["in.csv"]
    assert list(effects._at({"data": "in.csv"}, ("data", "path"))) == []


# -- the argv judge -----------------------------------------------------------------------------


def _u(text: str | None, fixed: str = "") -> Word:
    return Word(text, True, fixed)


def _t(text: str) -> Word:
    return Word(text, False, text)


def test_the_option_reason_is_exact_with_and_without_a_note() -> None:
    [f] = judge_argv([_t("/usr/bin/git"), _u("--exec-path=/tmp/x")])
    assert f == ArgvFinding(
        1,
        "--exec-path=/tmp/x",
        "option",
        "the untrusted argv element `--exec-path=/tmp/x` (command[1]) can be read as an option of `git`, and "
        "options can make a program load code or configuration"
        " (git --exec-path: runs git-* programs from another folder)",
    )
    [f] = judge_argv([_t("git"), _u("-c")])
    assert f.reason.endswith(
        "configuration (git -c: sets any configuration value, `core.sshCommand` and aliases included)"
    )
    [f] = judge_argv([_t("git"), _u("--upload-pack=a=b")])
    assert f.reason.endswith("configuration (git --upload-pack: runs the named program as the remote end)")
    [f] = judge_argv([_t("git"), _u("--no-such-option")])
    assert f.reason == (
        "the untrusted argv element `--no-such-option` (command[1]) can be read as an option of `git`, and "
        "options can make a program load code or configuration"
    )
    [f] = judge_argv([_t("git"), _u(None)])
    assert f == ArgvFinding(
        1,
        None,
        "option",
        "the untrusted argv element a value known only at run time (command[1]) can be read as an option of "
        "`git`, and options can make a program load code or configuration",
        True,
    )


def test_an_unknown_program_still_names_its_option_finding() -> None:
    [f] = judge_argv([Word(None, False, ""), _u("-x")])
    assert f.reason == (
        "the untrusted argv element `-x` (command[1]) can be read as an option of ``, and "
        "options can make a program load code or configuration"
    )


def test_the_dispatch_reasons_are_exact() -> None:
    assert judge_argv([_t("/usr/bin/git"), _u("log")]) == [
        ArgvFinding(
            1,
            "log",
            "subcommand",
            "the untrusted argv element `log` (command[1]) is where `git` reads its subcommand, which can name "
            "an alias, a plugin or another program",
        )
    ]
    assert judge_argv([_t("python3"), _u("x.py")]) == [
        ArgvFinding(
            1,
            "x.py",
            "script",
            "the untrusted argv element `x.py` (command[1]) is where `python3` reads the script it runs",
        )
    ]
    assert judge_argv([_t("env"), _t("A=1"), _u("prog")]) == [
        ArgvFinding(
            2, "prog", "program", "the untrusted argv element `prog` (command[2]) may be the program `env` runs"
        )
    ]
    [f] = judge_argv([_t("git"), _u(None, "x")])
    assert (f.kind, f.text, f.deferred) == ("subcommand", None, True)
    assert f.reason.startswith("the untrusted argv element a value known only at run time (command[1]) is where `git`")


def test_a_program_name_is_not_a_prefix_of_a_dispatcher() -> None:
    assert dispatch_kind("gitX") is None
    assert dispatch_kind("python3.12") == "script"


def test_the_positions_of_a_versioned_interpreter() -> None:
    # `-c CODE`: the code is the dispatch word, so a later operand is only an argument
    for py in ("python", "python3", "python3.12"):
        assert judge_argv([_t(py), _t("-c"), _t("print(1)"), _u("x")]) == [], py
    # `-W VALUE`: the value is not the script, the next word is
    [f] = judge_argv([_t("python3"), _t("-W"), _t("ignore"), _u("x.py")])
    assert (f.index, f.kind) == (3, "script")
    assert judge_argv([_t("python3"), _t("-W"), _t("ignore"), _t("s.py"), _u("arg")]) == []


def test_the_dispatch_position_closes_after_an_options_value() -> None:
    # `-x val`: val may be -x's value, `sub` is the position; what follows is an argument
    assert judge_argv([_t("git"), _t("-x"), _t("val"), _t("sub"), _u("y")]) == []
    assert judge_argv([_t("git"), _t("--opt=v"), _t("sub"), _u("y")]) == []  # `=` carries the value
    assert judge_argv([_t("git"), _t("--"), _t("sub"), _u("y")]) == []
    [f] = judge_argv([_t("git"), _t("-x"), _u(None, "v")])
    assert (f.index, f.kind, f.deferred) == (2, "subcommand", True)
    [f] = judge_argv([_t("git"), _u(None, "v"), _t("sub")])
    assert (f.index, f.kind) == (1, "subcommand")
    assert judge_argv([_t("git"), Word(None, False, "-x"), _t("v"), _t("sub"), _u("y")]) == []


def test_a_granted_option_is_matched_by_its_name_before_the_first_equals() -> None:
    assert judge_argv([_t("grep"), _u("--format=a=b")], ["--format"]) == []
    [f] = judge_argv([_t("grep"), _u("-o=x")], ["-o"])
    assert (f.index, f.kind) == (1, "option")


@pytest.mark.parametrize(
    ("fixed", "refused"),
    [
        ("--m=", False),  # the author wrote the option's name: the untrusted part is its value
        ("--message=", False),
        ("--=", True),
        ("--", True),
        ("--name", True),  # no `=`: the untrusted text continues the name
        ("-xv=", True),  # a single dash bundles short flags
        ("-- x=", True),
        ("-", True),
        ("-e", True),
        ("--_x=", True),
    ],
)
def test_a_named_option_needs_a_double_dash_a_name_and_an_equals(fixed: str, refused: bool) -> None:
    out = judge_argv([_t("grep"), _u(None, fixed)])
    assert [(f.index, f.kind, f.deferred) for f in out] == ([(1, "option", True)] if refused else [])


# -- the path judges ----------------------------------------------------------------------------


def _tree(tmp_path: Path) -> tuple[Path, Path, Path]:
    """root/ (work/ with w.txt and both.txt, docs/ with d.yaml, d.txt and both.txt), outside/o.txt."""
    root, outside = tmp_path / "root", tmp_path / "outside"
    for d in (root / "work", root / "docs", outside):
        d.mkdir(parents=True)
    for f in (root / "work" / "w.txt", root / "work" / "both.txt", root / "docs" / "d.txt", root / "docs" / "both.txt"):
        f.write_text("x")
    (root / "docs" / "d.yaml").write_text("x")
    (root / "docs" / "dir").mkdir()
    (outside / "o.txt").write_text("x")
    return root.resolve(), root.resolve() / "work", outside.resolve()


def test_resolve_named_reads_the_working_directory_then_beside_the_document(tmp_path: Path) -> None:
    root, work, outside = _tree(tmp_path)
    doc = str(root / "docs" / "d.yaml")
    w = str(work)
    assert resolve_named(str(outside / "o.txt"), w) == str(outside / "o.txt")
    assert resolve_named(str(work / ".." / "docs" / "d.txt"), w) == str(root / "docs" / "d.txt")
    assert resolve_named("w.txt", w, doc) == str(work / "w.txt")
    assert resolve_named("both.txt", w, doc) == str(work / "both.txt")  # the working directory first
    assert resolve_named("d.txt", w, doc) == str(root / "docs" / "d.txt")  # only beside the document
    assert resolve_named("d.txt", w) == str(work / "d.txt")  # no document: the missing candidate
    assert resolve_named("d.txt", w, str(root / "docs" / "gone.yaml")) == str(work / "d.txt")
    assert resolve_named("nowhere.txt", w, doc) == str(work / "nowhere.txt")
    assert resolve_named("dir", w, doc) == str(work / "dir")  # a directory beside is not a file


def test_resolve_named_from_the_process_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, work, _ = _tree(tmp_path)
    monkeypatch.chdir(work)
    assert resolve_named("w.txt", None) == str(work / "w.txt")
    assert resolve_named("d.txt", None, "../docs/d.yaml") == str(root / "docs" / "d.txt")


def test_resolve_named_follows_symlinks(tmp_path: Path) -> None:
    _, work, outside = _tree(tmp_path)
    (work / "link.txt").symlink_to(outside / "o.txt")
    assert resolve_named("link.txt", str(work)) == str(outside / "o.txt")
    assert resolve_named(str(work / "link.txt"), None) == str(outside / "o.txt")


def test_resolve_inside_confines_every_candidate(tmp_path: Path) -> None:
    root, work, outside = _tree(tmp_path)
    doc = str(root / "docs" / "d.yaml")
    w, roots = str(work), (str(root),)
    assert resolve_inside("d.txt", w, doc, None) == str(root / "docs" / "d.txt")  # unconfined
    assert resolve_inside("w.txt", w, doc, None) == str(work / "w.txt")
    assert resolve_inside(str(root / "docs" / "d.txt"), w, doc, roots) == str(root / "docs" / "d.txt")
    assert resolve_inside(str(outside / "o.txt"), w, doc, roots) is None
    assert resolve_inside("../../outside/o.txt", w, doc, roots) is None
    assert resolve_inside("w.txt", w, doc, roots) == str(work / "w.txt")
    assert resolve_inside("both.txt", w, doc, roots) == str(work / "both.txt")
    assert resolve_inside("d.txt", w, doc, roots) == str(root / "docs" / "d.txt")
    assert resolve_inside("nowhere.txt", w, doc, roots) == str(work / "nowhere.txt")  # the first inside
    assert resolve_inside("dir", w, doc, roots) == str(work / "dir")
    assert resolve_inside("d.txt", w, "docs/d.yaml", roots) == str(work / "d.txt")  # a relative document: no candidate
    assert resolve_inside("d.txt", w, None, roots) == str(work / "d.txt")
    # the working directory outside the roots: only the document's candidate counts
    assert resolve_inside("d.txt", str(outside), doc, roots) == str(root / "docs" / "d.txt")
    assert resolve_inside("o.txt", str(outside), doc, roots) == str(root / "docs" / "o.txt")
    assert resolve_inside("o.txt", str(outside), None, roots) is None
    assert resolve_inside("w.txt", w, doc, (str(root / "docs"),)) == str(root / "docs" / "w.txt")
    assert resolve_inside("w.txt", w, None, (str(root / "docs"),)) is None
    assert resolve_inside("w.txt", w, doc, ()) is None


def test_resolve_inside_judges_the_resolved_path_too(tmp_path: Path) -> None:
    root, work, outside = _tree(tmp_path)
    (work / "link.txt").symlink_to(outside / "o.txt")
    (tmp_path / "alias").symlink_to(root)
    roots = (str(root),)
    assert resolve_inside("link.txt", str(work), None, roots) is None
    assert resolve_inside(str(work / "link.txt"), None, None, roots) is None
    # a root that is itself a symlink admits what lies under its target
    alias = tmp_path / "alias"
    assert resolve_inside("w.txt", str(alias / "work"), None, (str(alias),)) == str(work / "w.txt")
    assert resolve_inside(str(alias / "work" / "w.txt"), None, None, (str(alias),)) == str(work / "w.txt")
    assert resolve_inside(str(alias / "work" / "w.txt"), None, None, roots) is None  # lexically outside


def test_resolve_inside_from_the_process_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, work, outside = _tree(tmp_path)
    monkeypatch.chdir(root)
    assert resolve_inside("work/w.txt", None, None, ("work",)) == str(work / "w.txt")  # a relative root
    assert resolve_inside("docs/d.txt", None, None, ("work",)) is None
    monkeypatch.chdir(outside)
    assert resolve_inside("o.txt", None, None, (str(root),)) is None


def test_under_roots_admits_under_a_symlinked_root(tmp_path: Path) -> None:
    root, work, _ = _tree(tmp_path)
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    assert under_roots(str(alias / "work" / "w.txt"), (str(alias),)) is True
    assert under_roots(str(alias / "work" / "w.txt"), (str(root),)) is False  # lexically outside the root
    assert under_roots("work/w.txt", (str(root),)) is False
    assert under_roots(str(work / "w.txt"), ()) is False


def test_narrow_roots_skips_a_bad_announcement_and_keeps_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, work, _ = _tree(tmp_path)
    monkeypatch.chdir(root)
    base = (str(root),)
    assert narrow_roots(base, ("work",)) == ()  # a relative announcement counts for nothing
    assert narrow_roots(base, ("", "work", str(work) + os.sep + "\x00x", str(work))) == (str(work),)
    assert narrow_roots(base, None) == (str(root),)
