"""The capability boundary: AUTH-006/007/008/009/010, SEC-004/005/008 (spec 10, 01 §permits)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checker import compile_text
from tests.checker.authority_helpers import codes, diags, errors, wf

READ = '  load:\n    invoke: { tool: "nika:read", args: { path: "%s" } }\n'
FETCH = '  grab:\n    invoke: { tool: "nika:fetch", args: { url: "%s" } }\n'


# -- absent permits (NEP-0003) -------------------------------------------------------------------


def test_pure_compute_needs_no_block() -> None:
    body = '  a:\n    infer: { prompt: "hi" }\n'
    body += '  b:\n    invoke: { tool: "nika:jq", args: { input: 1, expression: "." } }\n'
    assert codes(wf(body)) == []


@pytest.mark.parametrize(
    "body",
    [
        READ % "./data/x.json",
        '  run:\n    exec: { command: ["git", "status"] }\n',
        FETCH % "https://api.example.com/x",
        '  ask:\n    agent: { prompt: "go", tools: ["nika:read"] }\n',
        '  m:\n    invoke: { tool: "mcp:srv/tool" }\n',
    ],
)
def test_an_effect_without_a_block_is_auth_006(body: str) -> None:
    assert codes(wf(body)) == ["NIKA-AUTH-006"]


def test_the_auth_006_fix_pastes_a_block_that_checks_clean() -> None:
    body = (
        READ % "./data/x.json"
        + '  save:\n    invoke: { tool: "nika:write", args: { path: "./out/${{ inputs.n }}.md", content: "x" } }\n'
        + FETCH % "https://api.example.com/x"
        + '  run:\n    exec: { command: ["git", "status"] }\n'
    )
    text = wf(body, "inputs:\n  n: { type: string }\n")
    (d,) = diags(text)
    assert d.code == "NIKA-AUTH-006" and d.fixes and len(d.related) == 3
    edit = d.fixes[0].edits[0]
    fixed = text[: edit.span.start] + edit.new_text + text[edit.span.end :]
    assert "permits:" in fixed and "out/**" in fixed and '"git"' in fixed and "api.example.com" in fixed
    assert errors(fixed) == []


def test_the_inferred_block_never_grants_a_floor_host() -> None:
    text = wf(FETCH % "http://10.0.0.8/x")
    auth = [d for d in diags(text) if d.code == "NIKA-AUTH-006"]
    assert auth and "10.0.0.8" not in auth[0].help  # type: ignore[operator]


# -- a present block: default-deny, static escapes (SEC-004) -------------------------------------


@pytest.mark.parametrize(
    ("permits", "body", "want"),
    [
        ('{ tools: ["nika:read"] }', READ % "./data/x", ["NIKA-SEC-004"]),  # no fs.read at all
        ('{ tools: ["nika:read"], fs: { read: ["./data/**"] } }', READ % "./etc/passwd", ["NIKA-SEC-004"]),
        ('{ tools: ["nika:read"], fs: { read: ["./data/**"] } }', READ % "./data/../data/x", []),
        ('{ fs: { read: ["./data/**"] } }', READ % "./data/x", ["NIKA-SEC-004"]),  # the tool is not granted
        ('{ tools: ["nika:*", "!nika:read"], fs: { read: ["**"] } }', READ % "a", ["NIKA-SEC-004"]),
        ("{ exec: false }", '  r:\n    exec: { command: ["ls"] }\n', ["NIKA-SEC-004"]),
        ('{ exec: ["git"] }', '  r:\n    exec: { command: ["ls"] }\n', ["NIKA-SEC-004"]),
        ('{ exec: ["git"] }', '  r:\n    exec: { command: ["git", "log"] }\n', []),
        ('{ exec: ["git"] }', '  r:\n    exec: { shell: "git log; rm -rf /" }\n', ["NIKA-SEC-001", "NIKA-SEC-004"]),
        ("{ exec: true }", '  r:\n    exec: { shell: "git log" }\n', []),
        ('{ tools: ["nika:fetch"], net: { http: ["API.Example.com."] } }', FETCH % "https://api.example.com:443/x", []),
        (
            '{ tools: ["nika:fetch"], net: { http: ["api.example.com"] } }',
            FETCH % "https://evil.example.com/",
            ["NIKA-SEC-004"],
        ),
        ('{ tools: ["nika:fetch"], net: { http: ["*"] } }', FETCH % "https://any.example.org/", []),
        # a present block grants only the tools it lists, pure ones too (01 §permits)
        ("{}", '  j:\n    invoke: { tool: "nika:jq", args: { input: 1, expression: "." } }\n', ["NIKA-SEC-004"]),
        ('{ tools: ["nika:jq"] }', '  j:\n    invoke: { tool: "nika:jq", args: { input: 1, expression: "." } }\n', []),
        (
            '{ tools: ["!nika:jq"] }',
            '  j:\n    invoke: { tool: "nika:jq", args: { input: 1, expression: "." } }\n',
            ["NIKA-SEC-004"],
        ),
    ],
)
def test_required_within_permitted(permits: str, body: str, want: list[str]) -> None:
    assert codes(wf(body, f"permits: {permits}\n")) == want


def test_an_output_dir_fits_a_grant_inside_it() -> None:
    body = (
        '  img:\n    invoke:\n      tool: "nika:tts_generate"\n'
        '      args: { provider: openai, text: "hi", output_dir: "./out" }\n'
    )
    assert codes(wf(body, 'permits: { tools: ["nika:tts_generate"], fs: { write: ["./out/**"] } }\n')) == []
    assert codes(wf(body, 'permits: { tools: ["nika:tts_generate"], fs: { write: ["./elsewhere/**"] } }\n')) == [
        "NIKA-SEC-004"
    ]


# -- bounds: AUTH-007 / 009 / 010, the floor on grants (SEC-005) ---------------------------------


@pytest.mark.parametrize(
    ("permits", "want"),
    [
        ('{ env: ["${{ inputs.k }}"] }', ["NIKA-AUTH-007"]),
        ('{ fs: { read: ["${{ inputs.k }}/**"] } }', ["NIKA-AUTH-007"]),
        ('{ env: ["LD_PRELOAD"] }', ["NIKA-AUTH-009"]),
        ('{ env: ["BASH_ENV", "CI_COMMIT_SHA"] }', ["NIKA-AUTH-009"]),
        ('{ env: ["CI_COMMIT_SHA", "PATH"] }', []),
        ('{ net: { http: ["*.github.com"] } }', ["NIKA-AUTH-010"]),
        ('{ net: { http: ["api.*.com"] } }', ["NIKA-AUTH-010"]),
        ('{ net: { http: ["*"] } }', []),
        ('{ net: { http: ["169.254.169.254"] } }', ["NIKA-SEC-005"]),
        ('{ net: { http: ["10.1.2.3", "192.168.0.1", "100.64.0.1", "fe80::1"] } }', ["NIKA-SEC-005"] * 4),
        ('{ net: { http: ["metadata.google.internal"] } }', ["NIKA-SEC-005"]),
        ('{ net: { http: ["localhost", "127.0.0.1", "::1", "[::1]"] } }', []),
        ('{ net: { http: ["app.localhost"] } }', ["NIKA-SEC-005"]),
        ('{ net: { http: ["example.com"] } }', []),
    ],
)
def test_bounds(permits: str, want: list[str]) -> None:
    text = wf('  a:\n    infer: { prompt: "x" }\n', f"permits: {permits}\ninputs:\n  k: {{ type: string }}\n")
    assert codes(text) == want


# -- the SSRF floor on literal URLs --------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "grant", "want"),
    [
        ("http://169.254.169.254/latest", "169.254.169.254", ["NIKA-SEC-005", "NIKA-SEC-005"]),  # dead grant + URL
        ("http://127.0.0.1:8080/x", "localhost", ["NIKA-SEC-004", "NIKA-SEC-005"]),  # exact-host carve-out only
        ("http://localhost:8080/x", "localhost", []),
        ("http://[::1]/x", "::1", []),
        ("http://0x7f000001/x", "example.com", ["NIKA-SEC-004", "NIKA-SEC-005"]),
        ("https://example.com/x", "example.com", []),
    ],
)
def test_literal_urls_meet_the_floor(url: str, grant: str, want: list[str]) -> None:
    text = wf(FETCH % url, f'permits: {{ tools: ["nika:fetch"], net: {{ http: ["{grant}"] }} }}\n')
    assert codes(text) == want


# -- taint: AUTH-008 and the declassify door ----------------------------------------------------


HEAD_TAINT = (
    'permits: { tools: ["nika:read"], fs: { read: ["datasets/**"] } }\ninputs:\n  p: { type: string, default: "%s" }\n'
)
READ_P = '  load:\n    invoke: { tool: "nika:read", args: { path: "${{ inputs.p }}" } }\n'


def test_an_untrusted_escape_is_auth_008_with_its_path() -> None:
    (d,) = diags(wf(READ_P, HEAD_TAINT % "../../etc/passwd"))
    assert d.code == "NIKA-AUTH-008"
    assert d.related[0].message.startswith("`inputs.p`")
    assert "../../etc/passwd" in d.message


def test_an_untrusted_value_inside_the_grant_passes() -> None:
    assert codes(wf(READ_P, HEAD_TAINT % "datasets/../datasets/q3.csv")) == []


def test_an_untrusted_value_without_default_defers() -> None:
    head = 'permits: { tools: ["nika:read"], fs: { read: ["datasets/**"] } }\ninputs:\n  p: { type: string }\n'
    assert codes(wf(READ_P, head)) == []


def test_taint_flows_through_with_bindings() -> None:
    body = '  load:\n    with: { q: "${{ inputs.p }}" }\n'
    body += '    invoke: { tool: "nika:read", args: { path: "${{ with.q }}" } }\n'
    (d,) = diags(wf(body, HEAD_TAINT % "/etc/shadow"))
    assert d.code == "NIKA-AUTH-008" and any("with.q" in lab.message for lab in d.related)


def test_declassify_lifts_the_taint_but_not_the_boundary() -> None:
    door = "    declassify:\n      - { from: inputs.p, to: trusted, because: reviewed path }\n"
    assert codes(wf(READ_P + door, HEAD_TAINT % "../../etc/passwd")) == ["NIKA-SEC-004"]


def test_const_is_trusted_so_an_escape_is_a_plain_sec_004() -> None:
    head = 'permits: { tools: ["nika:read"], fs: { read: ["datasets/**"] } }\nconst:\n  p: "../x"\n'
    body = '  load:\n    invoke: { tool: "nika:read", args: { path: "${{ const.p }}" } }\n'
    assert codes(wf(body, head)) == ["NIKA-SEC-004"]


def test_untrusted_host_and_reentry_token() -> None:
    head = 'permits: { tools: ["nika:fetch"], net: { http: ["api.example.com"] } }\n'
    head += 'inputs:\n  h: { type: string, default: "evil.example.com" }\n'
    body = '  g:\n    invoke: { tool: "nika:fetch", args: { url: "https://${{ inputs.h }}/d" } }\n'
    assert codes(wf(body, head)) == ["NIKA-AUTH-008"]
    head = 'permits: { exec: ["find"] }\ninputs:\n  x: { type: string, default: "--exec" }\n'
    body = '  s:\n    exec: { command: ["find", ".", "${{ inputs.x }}"] }\n'
    assert codes(wf(body, head)) == ["NIKA-AUTH-008"]
    # default-deny on the shape: any untrusted option-like word is refused, a listed one passes
    assert codes(wf(body, head.replace('"--exec"', '"-print"'))) == ["NIKA-AUTH-008"]
    assert codes(wf(body, head.replace('"--exec"', '"-print"').replace('["find"]', '["find", "-print"]'))) == []
    assert codes(wf(body, head.replace('"--exec"', '"report.txt"'))) == []


# -- data as code (SEC-008) ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "refused"),
    [
        ("/m/model.pkl", True),
        ("/m/MODEL.PT", True),
        ("/s/setup.sh?x=1", True),
        ("/m/legacy%2epkl", True),
        ("/lib/libx.so.1.2.3", True),
        ("/m/model.pt.2", False),
        ("/d/rows.csv", False),
        ("/d/page?file=x.py", False),
        ("/m/weights.safetensors", False),
    ],
)
def test_code_bearing_fetches(path: str, refused: bool) -> None:
    head = 'permits: { tools: ["nika:fetch"], net: { http: ["data.example.com"] } }\n'
    text = wf(FETCH % f"https://data.example.com{path}", head)
    assert codes(text) == (["NIKA-SEC-008"] if refused else [])
    if refused:
        assert codes(text + '    inert: "archived, never loaded"\n') == []


# -- every shipped workflow stays clean ----------------------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT.parent / "shared" / "nika-spec"


def _shipped() -> list[Path]:
    out = sorted((ROOT / "examples").rglob("*.nika.yaml"))
    if SPEC.is_dir():
        out += sorted((SPEC / "templates").glob("*.nika.yaml"))
    return out


@pytest.mark.parametrize("path", _shipped(), ids=lambda p: p.name)
def test_examples_and_templates_stay_clean(path: Path) -> None:
    c = compile_text(path.read_text(encoding="utf-8"), str(path))
    assert c.clean, [f"{d.code}: {d.message}" for d in c.diagnostics if d.is_error]


@pytest.mark.parametrize(
    ("pattern", "grant", "refused"),
    [
        ("./src/**/*.py", "./src/**", False),
        ("./src", "./src/**", False),  # no wildcard: the path itself, which `dir/**` covers
        ("../outside/*.txt", "./**", True),  # the base climbs out of every grant
        ("./data/*.txt", "./data/a.txt", True),  # the walk reads the folder, which the grant does not cover
        ("/etc/*", "./**", True),
        ("./**/*.txt", "./src/**", True),  # the walk reads the working directory itself, as the run judges
        ("**/*.md", "./**", False),  # `./**` covers the working directory (a `dir/**` grant covers `dir`)
    ],
)
def test_a_literal_glob_is_judged_on_its_base(pattern: str, grant: str, refused: bool) -> None:
    """`nika:glob` walks from the pattern's literal base; the check judges that base as the run does."""
    head = f'permits:\n  fs: {{ read: ["{grant}"] }}\n  tools: ["nika:glob"]\n'
    body = f'  g:\n    invoke: {{ tool: "nika:glob", args: {{ pattern: "{pattern}" }} }}\n'
    assert ("NIKA-SEC-004" in codes(wf(body, head))) is refused
