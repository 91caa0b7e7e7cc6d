"""Completion in every context the server understands.

Each case writes a document with a ``‸`` where the cursor is, opens it and asks for items at
that point (the ``‸`` itself is removed). Columns are counted in the negotiated encoding, and
some cursors sit after non-ASCII text on the same line. Most cases ask the completion function
in-process (``editor``); a few go over the wire (``client``): keys with their edits and docs,
a snippet, and completion on a document broken by an edit after a good analysis.
"""

from __future__ import annotations

import itertools

import pytest
from lsp_local import Editor
from lsp_positions import negotiated_encoding as encoding
from lsp_positions import position_of
from lsp_wire import diagnostics
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient, client_capabilities

from checker.contracts.tables import providers, tool_ids
from checker.core.vocab import ROOTS, Where, in_scope

BASE = """\
nika: v1
workflow:
  id: demo
  description: "Café ☕ — résumé 🚀"
model: mock/echo
inputs:
  topic: {type: string, default: cats, description: What to write about}
config:
  region: {type: string, default: eu}
const:
  limit: 3
secrets:
  api_key: {source: env, key: API_KEY}
tasks:
  fetch:
    invoke:
      tool: "nika:fetch"
      args:
        url: https://example.com
        mode: markdown
    output:
      title: .title
    retry: {max_attempts: 3}
  summarize:
    with:
      page: ${{ tasks.fetch.output }}
    infer:
      prompt: "Résumé 🚀 ${{ with.page }}"
  report:
    with:
      s: ${{ tasks.summarize.output }}
    exec:
      command: [echo, "${{ with.s }}"]
  publish:
    with:
      r: ${{ tasks.report.output }}
    exec: {command: [echo, "${{ with.r }}"]}
  side:
    exec: {command: ["true"]}
  each:
    for_each: ${{ [1, 2, 3] }}
    infer:
      prompt: "${{ item }}"
"""
CURSOR = "‸"
_ids = itertools.count()


def replace(doc: str, old: str, new: str) -> str:
    assert doc.count(old) == 1, old
    return doc.replace(old, new)


def open_doc(client: LanguageClient, text: str) -> str:
    uri = f"file:///tmp/nika-completion/flow-{next(_ids)}.nika.yaml"
    client.text_document_did_open(
        lsp.DidOpenTextDocumentParams(
            text_document=lsp.TextDocumentItem(uri=uri, language_id="yaml", version=1, text=text)
        )
    )
    return uri


async def request(
    client: LanguageClient, uri: str, at: lsp.Position, trigger: str | None = None
) -> list[lsp.CompletionItem]:
    ctx = (
        lsp.CompletionContext(trigger_kind=lsp.CompletionTriggerKind.TriggerCharacter, trigger_character=trigger)
        if trigger
        else lsp.CompletionContext(trigger_kind=lsp.CompletionTriggerKind.Invoked)
    )
    rep = await client.text_document_completion_async(
        lsp.CompletionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), position=at, context=ctx)
    )
    if rep is None:
        return []
    return list(rep.items) if isinstance(rep, lsp.CompletionList) else list(rep)


async def complete(client: LanguageClient, marked: str, trigger: str | None = None) -> list[lsp.CompletionItem]:
    """Open ``marked`` (without its cursor mark) and complete at the mark."""
    index = marked.index(CURSOR)
    text = marked.replace(CURSOR, "")
    uri = open_doc(client, text)
    return await request(client, uri, position_of(text, index, encoding(client)), trigger)


def complete_in(editor: Editor, marked: str) -> list[lsp.CompletionItem]:
    """In-process: complete at the mark of ``marked`` (the server ignores the trigger context)."""
    index = marked.index(CURSOR)
    text = marked.replace(CURSOR, "")
    return editor.complete(editor.open(text), position_of(text, index, editor.encoding))


def labels(items: list[lsp.CompletionItem]) -> list[str]:
    return [i.label for i in items]


# -- keys -------------------------------------------------------------------------------------


def test_envelope_keys_skip_those_present(editor: Editor) -> None:
    got = set(labels(complete_in(editor, BASE + CURSOR)))
    assert {"permits", "run", "policy", "outputs", "types"} <= got
    assert not got & {"nika", "workflow", "tasks", "inputs", "model"}


@pytest.mark.asyncio
async def test_task_keys_skip_present_and_other_verbs(client: LanguageClient) -> None:
    doc = replace(BASE, "  side:\n    exec:", f"  side:\n    {CURSOR}\n    exec:")
    items = await complete(client, doc)
    got = set(labels(items))
    assert {"with", "after", "when", "retry", "on_error", "timeout", "returns"} <= got
    assert not got & {"exec", "infer", "invoke", "agent"}
    retry = next(i for i in items if i.label == "retry")
    assert retry.text_edit is not None and retry.text_edit.new_text == "retry: "
    assert isinstance(retry.documentation, lsp.MarkupContent) and "max_attempts" in retry.documentation.value


def test_verb_body_keys(editor: Editor) -> None:
    line = '      prompt: "Résumé 🚀 ${{ with.page }}"\n'
    doc = replace(BASE, line, f"{line}      te{CURSOR}\n")
    items = complete_in(editor, doc)
    got = set(labels(items))
    assert {"system", "temperature", "max_tokens", "schema"} <= got and "prompt" not in got
    temp = next(i for i in items if i.label == "temperature")
    assert temp.text_edit is not None and isinstance(temp.text_edit, lsp.TextEdit)
    assert temp.text_edit.range.end.character - temp.text_edit.range.start.character == 2  # replaces "te"


def test_retry_flow_keys(editor: Editor) -> None:
    doc = replace(BASE, "retry: {max_attempts: 3}", f"retry: {{max_attempts: 3, {CURSOR}}}")
    got = set(labels(complete_in(editor, doc)))
    assert {"backoff_ms", "backoff_strategy", "jitter", "on_codes"} <= got and "max_attempts" not in got


def test_on_error_keys_offer_one_action(editor: Editor) -> None:
    doc = replace(BASE, "  side:\n", f"  side:\n    on_error:\n      skip: true\n      {CURSOR}\n")
    got = set(labels(complete_in(editor, doc)))
    assert got == {"on_codes"}


def test_permits_keys(editor: Editor) -> None:
    doc = replace(BASE, "tasks:\n", f"permits:\n  {CURSOR}\ntasks:\n")
    assert set(labels(complete_in(editor, doc))) == {"fs", "net", "exec", "tools", "env"}


# -- tools and arguments ------------------------------------------------------------------------


NEW_INVOKE = '  side:\n    exec: {command: ["true"]}\n'


@pytest.mark.asyncio
async def test_builtin_ids_after_tool_with_snippet(client: LanguageClient) -> None:
    doc = replace(BASE, NEW_INVOKE, f"  side:\n    invoke:\n      tool: {CURSOR}\n")
    items = await complete(client, doc, " ")
    assert set(labels(items)) == set(tool_ids())
    fetch = next(i for i in items if i.label == "nika:fetch")
    assert fetch.insert_text_format == lsp.InsertTextFormat.Snippet
    assert fetch.text_edit is not None
    assert fetch.text_edit.new_text == "nika:fetch\n      args:\n        url: ${1}"


@pytest.fixture
def plain_editor() -> Editor:
    """A VS Code-like client that cannot expand snippets."""
    caps = client_capabilities("visual_studio_code")
    assert caps.text_document and caps.text_document.completion and caps.text_document.completion.completion_item
    caps.text_document.completion.completion_item.snippet_support = False
    return Editor("visual_studio_code without snippets", caps)


def test_builtin_ids_as_plain_text_without_snippet_support(plain_editor: Editor) -> None:
    doc = replace(BASE, NEW_INVOKE, f"  side:\n    invoke:\n      tool: {CURSOR}\n")
    items = complete_in(plain_editor, doc)
    fetch = next(i for i in items if i.label == "nika:fetch")
    assert fetch.insert_text_format in (None, lsp.InsertTextFormat.PlainText)
    assert fetch.text_edit is not None and fetch.text_edit.new_text == "nika:fetch\n      args:\n        url: "
    assert all("$" not in (i.text_edit.new_text if i.text_edit else "") for i in items)


def test_tool_inside_quotes_and_flow_style_has_no_skeleton(editor: Editor) -> None:
    doc = replace(BASE, NEW_INVOKE, f'  side:\n    invoke: {{ tool: "nika:f{CURSOR}" }}\n')
    items = complete_in(editor, doc)
    fetch = next(i for i in items if i.label == "nika:fetch")
    assert fetch.text_edit is not None and fetch.text_edit.new_text == "nika:fetch"


def test_argument_names_of_a_known_builtin(editor: Editor) -> None:
    doc = replace(BASE, "        mode: markdown\n", f"        mode: markdown\n        {CURSOR}\n")
    items = complete_in(editor, doc)
    got = set(labels(items))
    assert {"method", "headers", "body", "selector"} <= got and not got & {"url", "mode"}
    method = next(i for i in items if i.label == "method")
    assert method.detail and "GET" in method.detail


def test_argument_enum_values(editor: Editor) -> None:
    doc = replace(BASE, "        mode: markdown\n", f"        mode: {CURSOR}\n")
    got = labels(complete_in(editor, doc))
    assert "markdown" in got and "article" in got


# -- after: ------------------------------------------------------------------------------------


def test_after_keys_are_cycle_free(editor: Editor) -> None:
    doc = replace(BASE, "  summarize:\n", f"  summarize:\n    after:\n      {CURSOR}\n")
    # summarize itself, and report/publish that wait for it, would close a cycle
    assert set(labels(complete_in(editor, doc))) == {"fetch", "side", "each"}


def test_after_values_are_the_predicates(editor: Editor) -> None:
    doc = replace(BASE, "  side:\n", f"  side:\n    after: {{ fetch: {CURSOR} }}\n")
    assert labels(complete_in(editor, doc)) == ["success", "failure", "skipped", "terminal"]


# -- models ------------------------------------------------------------------------------------


def test_model_offers_every_provider(editor: Editor) -> None:
    doc = replace(BASE, "model: mock/echo\n", f"model: {CURSOR}\n")
    got = set(labels(complete_in(editor, doc)))
    assert got == {f"{p}/" for p in providers()} | {"mock/echo"}
    assert len(providers()) == 17


# -- ${{ }} ------------------------------------------------------------------------------------


def test_roots_in_a_with_binding(editor: Editor) -> None:
    doc = replace(BASE, "      page: ${{ tasks.fetch.output }}\n", f"      page: ${{{{ {CURSOR}\n")
    got = set(labels(complete_in(editor, doc)))
    assert {"inputs", "config", "const", "secrets", "tasks"} <= got and not got & {"item", "index"}


def test_tasks_members_exclude_self_and_downstream(editor: Editor) -> None:
    doc = replace(BASE, "      page: ${{ tasks.fetch.output }}\n", f"      page: ${{{{ tasks.{CURSOR} }}}}\n")
    assert labels(complete_in(editor, doc)) == ["fetch", "side", "each"]


def test_task_fields_include_declared_output_bindings(editor: Editor) -> None:
    doc = replace(BASE, "      page: ${{ tasks.fetch.output }}\n", f"      page: ${{{{ tasks.fetch.{CURSOR} }}}}\n")
    items = complete_in(editor, doc)
    got = labels(items)
    assert got[:6] == ["output", "status", "error", "started_at", "ended_at", "duration_ms"]
    assert "title" in got
    status = next(i for i in items if i.label == "status")
    assert status.detail == "terminal-observation edge"


@pytest.mark.parametrize(("root", "name"), [("inputs", "topic"), ("config", "region"), ("const", "limit")])
def test_declared_names(editor: Editor, root: str, name: str) -> None:
    doc = replace(BASE, '"Résumé 🚀 ${{ with.page }}"', f'"Résumé 🚀 ${{{{ with.page }}}} ${{{{ {root}.{CURSOR} }}}}"')
    items = complete_in(editor, doc)
    assert labels(items) == [name]
    # the edit range starts right after the dot, past the emoji, in the negotiated encoding
    text = doc.replace(CURSOR, "")
    at = position_of(text, doc.index(CURSOR), editor.encoding)
    assert items[0].text_edit is not None and isinstance(items[0].text_edit, lsp.TextEdit)
    assert items[0].text_edit.range == lsp.Range(start=at, end=at)


def test_with_members_are_this_tasks_bindings(editor: Editor) -> None:
    doc = replace(BASE, '"Résumé 🚀 ${{ with.page }}"', f'"Résumé 🚀 ${{{{ with.{CURSOR} }}}}"')
    assert labels(complete_in(editor, doc)) == ["page"]


# One expression at each position class (the same document as tests/checker/test_scope_table.py).
SCOPE_DOC = """\
nika: v1
workflow: {{ id: scope }}
model: {envelope}
inputs: {{ a: {{ type: integer, default: 1 }} }}
permits: {{ exec: true }}
tasks:
  p:
    exec: {{ command: ["true"] }}
  t:
    with: {{ x: "${{{{ tasks.p.output }}}}", w: {with} }}
    when: {when}
    for_each: {for_each}
    exec: {{ command: ["echo", {body}] }}
    on_error: {{ recover: {recover} }}
    on_finally:
      - exec: {{ command: ["echo", {finally}] }}
outputs:
  o: {outputs}
"""
SCOPE_NEUTRAL = {
    "envelope": "mock/echo",
    "with": "1",
    "when": '"${{ true }}"',
    "for_each": "[1, 2]",
    "body": "x",
    "recover": "r",
    "finally": "x",
    "outputs": '"${{ inputs.a }}"',
}


@pytest.mark.parametrize("where", sorted(SCOPE_NEUTRAL))
def test_roots_offered_are_those_the_scope_table_admits(editor: Editor, where: str) -> None:
    doc = SCOPE_DOC.format(**{**SCOPE_NEUTRAL, where: f'"${{{{ {CURSOR} }}}}"'})
    assert labels(complete_in(editor, doc)) == [r for r in ROOTS if in_scope(r, where)]


def test_item_only_inside_a_for_each_task(editor: Editor) -> None:
    in_loop = replace(BASE, '      prompt: "${{ item }}"', f'      prompt: "${{{{ {CURSOR} }}}}"')
    assert {"item", "index"} <= set(labels(complete_in(editor, in_loop)))
    outside = replace(BASE, '"Résumé 🚀 ${{ with.page }}"', f'"Résumé 🚀 ${{{{ {CURSOR} }}}}"')
    got = set(labels(complete_in(editor, outside)))
    assert "with" in got and not got & {"item", "index", "tasks"}  # tasks.* is not readable in a prompt


# -- broken documents --------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_unclosed_island_after_an_edit_uses_the_last_good_model(client: LanguageClient) -> None:
    uri = open_doc(client, BASE)
    await diagnostics(client, uri)  # the server has analysed the good text once
    broken = replace(BASE, "      page: ${{ tasks.fetch.output }}\n", f'      page: "${{{{ tasks.{CURSOR}\n')
    index = broken.index(CURSOR)
    text = broken.replace(CURSOR, "")
    client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=2),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
    items = await request(client, uri, position_of(text, index, encoding(client)), ".")
    assert labels(items) == ["fetch", "side", "each"]


def test_document_broken_from_the_start(editor: Editor) -> None:
    broken = replace(BASE, "      page: ${{ tasks.fetch.output }}\n", f'      page: "${{{{ tasks.fetch.{CURSOR}\n')
    got = labels(complete_in(editor, broken))
    assert "output" in got and "title" in got


def test_half_typed_key_in_a_broken_document(editor: Editor) -> None:
    doc = "nika: v1\nworkflow: {id: x}\ntasks:\n  a:\n    exe" + CURSOR
    got = set(labels(complete_in(editor, doc)))
    assert {"exec", "infer", "invoke", "agent", "with"} <= got


def test_on_finally_step_keys_in_a_list_item(editor: Editor) -> None:
    doc = replace(
        BASE, "  side:\n", f"  side:\n    on_finally:\n      - exec: {{shell: echo done}}\n        {CURSOR}\n"
    )
    assert set(labels(complete_in(editor, doc))) == {"when", "timeout"}


def test_crlf_line_endings(editor: Editor) -> None:
    doc = replace(BASE, "  side:\n    exec:", f"  side:\n    {CURSOR}\n    exec:").replace("\n", "\r\n")
    got = set(labels(complete_in(editor, doc)))
    assert {"with", "retry"} <= got and "exec" not in got


def test_the_editor_places_each_expression_where_the_compiler_does() -> None:
    """The position class the editor reads off the text (``where_of``) is the one the compiler
    gives the expression's site, at every position of the scope document."""
    from checker import compile_text
    from nika_lsp.features.cursor import analyze, where_of

    doc = SCOPE_DOC.format(**{w: f'"${{{{ inputs.a == {i} }}}}"' for i, w in enumerate(sorted(SCOPE_NEUTRAL))})
    doc = doc.replace("    when:", '    output: { n: ".x ${{ inputs.a }}" }\n    when:')  # and a jq binding
    lines = doc.split("\n")
    sites = compile_text(doc, "scope.nika.yaml").sites
    assert {s.where for s in sites} == set(Where)
    for site in sites:
        offset = site.span.start + 1  # inside the value
        line = doc.count("\n", 0, offset)
        col = offset - (doc.rfind("\n", 0, offset) + 1)
        assert where_of(analyze(lines, line, col).full_path) == site.where, lines[line]
