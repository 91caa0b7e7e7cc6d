"""nika:read, nika:write, nika:edit, nika:glob, nika:grep over a temporary directory."""

from __future__ import annotations

import json
import os
import stat

import pytest
from builtins_harness import direct, fails, make_ctx

from runtime.builtins import call


@pytest.fixture
def host(tmp_path):
    return make_ctx(tmp_path)


@pytest.fixture
def tree(tmp_path):
    """src/{a.rs, lib/b.rs, lib/.hidden.rs, target/gen.rs, notes.md}, docs/readme.md, blob.bin."""
    files = {
        "src/a.rs": "fn main() {}\n// TODO: tests\n",
        "src/lib/b.rs": "// todo lower\nlet x = 1;\r\n// TODO: docs\r\n",
        "src/lib/.hidden.rs": "",
        "src/target/gen.rs": "// TODO generated\n",
        "src/notes.md": "TODO\n",
        "docs/readme.md": "nothing here\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, newline="")
    (tmp_path / "blob.bin").write_bytes(b"TODO\xff\xfe\x00")
    return tmp_path


# ── read ──────────────────────────────────────────────────────────────────────────────────────


async def test_read_returns_text(tree, host):
    assert await call("nika:read", {"path": "./src/a.rs"}, host[0]) == "fn main() {}\n// TODO: tests\n"


async def test_read_binary_returns_bytes(tree, host):
    assert await call("nika:read", {"path": "blob.bin", "binary": True}, host[0]) == b"TODO\xff\xfe\x00"


async def test_read_decodes_with_the_given_encoding(tmp_path, host):
    (tmp_path / "l1.txt").write_bytes("café".encode("latin-1"))
    assert await call("nika:read", {"path": "l1.txt", "encoding": "latin-1"}, host[0]) == "café"


async def test_read_missing_file(host):
    e = await fails("nika:read", {"path": "state.json"}, host[0])
    assert (e.code, e.category, e.transient) == ("NIKA-BUILTIN-READ-001", "tool_error", False)


async def test_read_a_directory_is_an_io_failure(tree, host):
    e = await fails("nika:read", {"path": "src"}, host[0])
    assert e.code == "NIKA-BUILTIN-READ-002"


async def test_read_non_utf8_text_points_at_binary_mode(tree, host):
    e = await fails("nika:read", {"path": "blob.bin"}, host[0])
    assert e.code == "NIKA-BUILTIN-READ-003"
    assert "binary: true" in e.message


async def test_read_refuses_an_unknown_encoding(tree, host):
    e = await fails("nika:read", {"path": "src/a.rs", "encoding": "klingon-8"}, host[0])
    assert e.code == "NIKA-BUILTIN-001"


async def test_read_refuses_a_path_outside_the_grant(tmp_path):
    inside = tmp_path / "inside"
    inside.mkdir()
    (tmp_path / "secret").write_text("s")
    (inside / "link").symlink_to(tmp_path / "secret")
    ctx, _ = make_ctx(inside)
    for path in ("../secret", "link", str(tmp_path / "secret")):
        e = await fails("nika:read", {"path": path}, ctx)
        assert e.code == "NIKA-SEC-004", path


async def test_read_contract_refusal(host):
    e = await fails("nika:read", {"path": "a", "binary": "yes"}, host[0])
    assert e.code == "NIKA-BUILTIN-001"


# ── write ─────────────────────────────────────────────────────────────────────────────────────


async def test_write_text_and_return_the_path_as_given(tmp_path, host):
    assert await call("nika:write", {"path": "./out.md", "content": "# hi\n"}, host[0]) == "./out.md"
    assert (tmp_path / "out.md").read_text() == "# hi\n"


async def test_write_overwrites_by_default_and_keeps_the_mode(tmp_path, host):
    target = tmp_path / "run.sh"
    target.write_text("old")
    target.chmod(0o750)
    await call("nika:write", {"path": "run.sh", "content": "new"}, host[0])
    assert target.read_text() == "new"
    assert stat.S_IMODE(target.stat().st_mode) == 0o750
    assert sorted(os.listdir(tmp_path)) == ["run.sh"]  # no temporary file left behind


async def test_write_structured_content_as_json(tmp_path, host):
    content = {"name": "café", "tags": ["a", "b"], "n": 1}
    await direct("nika:write")({"path": "data.json", "content": content}, host[0])
    text = (tmp_path / "data.json").read_text(encoding="utf-8")
    assert json.loads(text) == content
    assert text.endswith("\n") and "café" in text


async def test_write_bytes_as_they_are(tmp_path, host):
    await direct("nika:write")({"path": "b.bin", "content": b"\x00\xff"}, host[0])
    assert (tmp_path / "b.bin").read_bytes() == b"\x00\xff"


async def test_write_refuses_a_missing_parent_without_create_dirs(tmp_path, host):
    e = await fails("nika:write", {"path": "reports/2026/x.md", "content": "x"}, host[0])
    assert (e.code, e.category) == ("NIKA-BUILTIN-WRITE-001", "tool_error")
    assert not (tmp_path / "reports").exists()


async def test_write_creates_parents_when_asked(tmp_path, host):
    await call("nika:write", {"path": "reports/2026/x.md", "content": "x", "create_dirs": True}, host[0])
    assert (tmp_path / "reports/2026/x.md").read_text() == "x"


async def test_write_onto_a_directory_is_an_io_failure(tree, host):
    e = await fails("nika:write", {"path": "src", "content": "x"}, host[0])
    assert e.code == "NIKA-BUILTIN-WRITE-001"


async def test_write_without_overwrite_keeps_an_existing_file(tmp_path, host):
    (tmp_path / "keep.md").write_text("original")
    e = await fails("nika:write", {"path": "keep.md", "content": "x", "overwrite": False}, host[0])
    assert e.code == "NIKA-BUILTIN-WRITE-002"
    assert (tmp_path / "keep.md").read_text() == "original"
    await call("nika:write", {"path": "fresh.md", "content": "y", "overwrite": False}, host[0])
    assert (tmp_path / "fresh.md").read_text() == "y"


async def test_write_refuses_an_escape(tmp_path, host):
    e = await fails("nika:write", {"path": "../evil.txt", "content": "x"}, host[0])
    assert e.code == "NIKA-SEC-004"
    assert not (tmp_path.parent / "evil.txt").exists()


async def test_write_contract_refusal(host):
    e = await fails("nika:write", {"path": "x.md"}, host[0])
    assert e.code == "NIKA-BUILTIN-001"


# ── edit ──────────────────────────────────────────────────────────────────────────────────────


async def test_edit_replaces_every_match(tmp_path, host):
    (tmp_path / "v.md").write_text("v1.2 and v1.2 and v1.2")
    assert await call("nika:edit", {"path": "v.md", "find": "1.2", "replace": "1.3"}, host[0]) == "v.md"
    assert (tmp_path / "v.md").read_text() == "v1.3 and v1.3 and v1.3"


async def test_edit_find_is_literal_and_count_caps(tmp_path, host):
    (tmp_path / "r.txt").write_text("a.b a.b a.b axb")
    await call("nika:edit", {"path": "r.txt", "find": "a.b", "replace": "X", "count": 2}, host[0])
    assert (tmp_path / "r.txt").read_text() == "X X a.b axb"


async def test_edit_no_match_fails(tmp_path, host):
    (tmp_path / "r.txt").write_text("hello")
    e = await fails("nika:edit", {"path": "r.txt", "find": "bye", "replace": "x"}, host[0])
    assert (e.code, e.category) == ("NIKA-BUILTIN-EDIT-001", "tool_error")


@pytest.mark.parametrize("count", ["2", 1.5, True, -1])
async def test_edit_malformed_count_is_never_replace_all(tmp_path, host, count):
    (tmp_path / "r.txt").write_text("a a a")
    # past the contract (which answers NIKA-BUILTIN-001 for a literal); a computed count lands here
    with pytest.raises(Exception) as info:
        await direct("nika:edit")({"path": "r.txt", "find": "a", "replace": "b", "count": count}, host[0])
    assert info.value.code == "NIKA-BUILTIN-EDIT-001"
    assert (tmp_path / "r.txt").read_text() == "a a a"


async def test_edit_count_zero_and_empty_find_edit_nothing(tmp_path, host):
    (tmp_path / "r.txt").write_text("a a")
    for args in ({"find": "a", "replace": "b", "count": 0}, {"find": "", "replace": "b"}):
        e = await fails("nika:edit", {"path": "r.txt", **args}, host[0])
        assert e.code == "NIKA-BUILTIN-EDIT-001"


async def test_edit_io_failures(tree, host):
    for path in ("missing.md", "src", "blob.bin"):
        e = await fails("nika:edit", {"path": path, "find": "TODO", "replace": "x"}, host[0])
        assert e.code == "NIKA-BUILTIN-EDIT-002", path


async def test_edit_contract_refusal(host):
    e = await fails("nika:edit", {"path": "x", "find": "a"}, host[0])
    assert e.code == "NIKA-BUILTIN-001"


# ── glob ──────────────────────────────────────────────────────────────────────────────────────


async def test_glob_recursive_sorted_in_the_pattern_s_own_form(tree, host):
    out = await call("nika:glob", {"pattern": "./src/**/*.rs"}, host[0])
    assert out == ["./src/a.rs", "./src/lib/.hidden.rs", "./src/lib/b.rs", "./src/target/gen.rs"]


async def test_glob_exclude(tree, host):
    out = await call("nika:glob", {"pattern": "./src/**/*.rs", "exclude": ["**/target/**", "**/.*"]}, host[0])
    assert out == ["./src/a.rs", "./src/lib/b.rs"]


async def test_glob_star_stays_in_one_segment_and_classes_work(tree, host):
    assert await call("nika:glob", {"pattern": "src/*.rs"}, host[0]) == ["src/a.rs"]
    assert await call("nika:glob", {"pattern": "*/[!a-m]*"}, host[0]) == [
        "docs/readme.md",
        "src/notes.md",
        "src/target",
    ]
    assert await call("nika:glob", {"pattern": "src/?.rs"}, host[0]) == ["src/a.rs"]
    assert await call("nika:glob", {"pattern": "*"}, host[0]) == ["blob.bin", "docs", "src"]


async def test_glob_literal_paths_and_no_match(tree, host):
    assert await call("nika:glob", {"pattern": "docs/readme.md"}, host[0]) == ["docs/readme.md"]
    assert await call("nika:glob", {"pattern": "docs/nope.md"}, host[0]) == []
    assert await call("nika:glob", {"pattern": "nowhere/**/*.rs"}, host[0]) == []


async def test_glob_absolute_pattern(tree, host):
    out = await call("nika:glob", {"pattern": f"{tree.resolve()}/docs/*.md"}, host[0])
    assert out == [f"{tree.resolve()}/docs/readme.md"]


@pytest.mark.parametrize("pattern", ["./src/**/[a-z.rs", "src/\\", ""])
async def test_glob_invalid_pattern(tree, host, pattern):
    e = await fails("nika:glob", {"pattern": pattern}, host[0])
    assert (e.code, e.category) == ("NIKA-BUILTIN-GLOB-001", "validation_error")


async def test_glob_refuses_a_base_outside_the_grant(tree, host):
    e = await fails("nika:glob", {"pattern": "../**/*"}, host[0])
    assert e.code == "NIKA-SEC-004"


async def test_glob_contract_refusal(host):
    e = await fails("nika:glob", {"pattern": "*", "exclude": "target"}, host[0])
    assert e.code == "NIKA-BUILTIN-001"


# ── grep ──────────────────────────────────────────────────────────────────────────────────────


async def test_grep_recursive_sorted_by_path_then_line(tree, host):
    out = await call("nika:grep", {"pattern": "TODO:", "path": "./src"}, host[0])
    assert out == [
        {"path": "./src/a.rs", "line": 2, "match": "// TODO: tests"},
        {"path": "./src/lib/b.rs", "line": 3, "match": "// TODO: docs"},
    ]


async def test_grep_case_insensitive_single_file_and_binary_files_skipped(tree, host):
    out = await call("nika:grep", {"pattern": "^// todo", "path": "src/lib/b.rs", "case_insensitive": True}, host[0])
    assert [m["line"] for m in out] == [1, 3]
    everywhere = await call("nika:grep", {"pattern": "TODO", "path": "."}, host[0])
    assert "blob.bin" not in {m["path"] for m in everywhere}
    assert len(everywhere) == 4


async def test_grep_reads_class_characters_python_warns_about_without_a_warning(tree, host):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Python's FutureWarning on `--` in a class would raise here
        out = await call("nika:grep", {"pattern": "TODO[+--:]", "path": "./src"}, host[0])
    assert [m["line"] for m in out] == [2, 3]


@pytest.mark.parametrize("pattern", ["(a", "(a)\\1", "TODO(?=:)", "(?<!x)y", "a++"])
async def test_grep_refuses_what_re2_cannot_do(tree, host, pattern):
    e = await fails("nika:grep", {"pattern": pattern, "path": "src"}, host[0])
    assert (e.code, e.category) == ("NIKA-BUILTIN-GREP-001", "validation_error")


async def test_grep_missing_path(host):
    e = await fails("nika:grep", {"pattern": "x", "path": "nope"}, host[0])
    assert e.code == "NIKA-BUILTIN-READ-001"


async def test_grep_refuses_a_symlink_out_of_the_grant(tmp_path):
    root = tmp_path / "root"
    (root / "src").mkdir(parents=True)
    (tmp_path / "secret.txt").write_text("TODO: steal\n")
    (root / "src" / "leak.txt").symlink_to(tmp_path / "secret.txt")
    ctx, _ = make_ctx(root)
    e = await fails("nika:grep", {"pattern": "TODO", "path": "src"}, ctx)
    assert e.code == "NIKA-SEC-004"


async def test_grep_contract_refusal(host):
    e = await fails("nika:grep", {"pattern": "x"}, host[0])
    assert e.code == "NIKA-BUILTIN-001"


async def test_grep_stops_a_pattern_that_backtracks_without_end(tmp_path):
    (tmp_path / "f.txt").write_text("a" * 60 + "!\n")
    ctx, _events = make_ctx(tmp_path)
    e = await fails("nika:grep", {"pattern": "^(a|aa)+$", "path": "f.txt"}, ctx)
    assert e.code == "NIKA-BUILTIN-GREP-001" and "line 1 of f.txt" in str(e)
