"""Completion over the wire, in every context the server understands.

Each case writes a document with a ``‸`` where the cursor is, opens it and asks for items at
that point (the ``‸`` itself is removed). Columns are counted in the negotiated encoding, and
some cursors sit after non-ASCII text on the same line.
"""

from __future__ import annotations

import itertools

import pytest
import pytest_lsp
from lsp_positions import negotiated_encoding as encoding
from lsp_positions import position_of
from lsp_wire import SERVER, diagnostics
from lsprotocol import types as lsp
from pytest_lsp import LanguageClient, client_capabilities

from checker.contracts import providers, tool_ids

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


def labels(items: list[lsp.CompletionItem]) -> list[str]:
    return [i.label for i in items]


# -- keys -------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_envelope_keys_skip_those_present(client: LanguageClient) -> None:
    got = set(labels(await complete(client, BASE + CURSOR)))
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


@pytest.mark.asyncio
async def test_verb_body_keys(client: LanguageClient) -> None:
    line = '      prompt: "Résumé 🚀 ${{ with.page }}"\n'
    doc = replace(BASE, line, f"{line}      te{CURSOR}\n")
    items = await complete(client, doc)
    got = set(labels(items))
    assert {"system", "temperature", "max_tokens", "schema"} <= got and "prompt" not in got
    temp = next(i for i in items if i.label == "temperature")
    assert temp.text_edit is not None and isinstance(temp.text_edit, lsp.TextEdit)
    assert temp.text_edit.range.end.character - temp.text_edit.range.start.character == 2  # replaces "te"


@pytest.mark.asyncio
async def test_retry_flow_keys(client: LanguageClient) -> None:
    doc = replace(BASE, "retry: {max_attempts: 3}", f"retry: {{max_attempts: 3, {CURSOR}}}")
    got = set(labels(await complete(client, doc, " ")))
    assert {"backoff_ms", "backoff_strategy", "jitter", "on_codes"} <= got and "max_attempts" not in got


@pytest.mark.asyncio
async def test_on_error_keys_offer_one_action(client: LanguageClient) -> None:
    doc = replace(BASE, "  side:\n", f"  side:\n    on_error:\n      skip: true\n      {CURSOR}\n")
    got = set(labels(await complete(client, doc)))
    assert got == {"on_codes"}


@pytest.mark.asyncio
async def test_permits_keys(client: LanguageClient) -> None:
    doc = replace(BASE, "tasks:\n", f"permits:\n  {CURSOR}\ntasks:\n")
    assert set(labels(await complete(client, doc))) == {"fs", "net", "exec", "tools", "env"}


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


@pytest_lsp.fixture(config=SERVER)
async def plain_client(lsp_client: LanguageClient):  # type: ignore[no-untyped-def]
    """A VS Code-like client that cannot expand snippets."""
    caps = client_capabilities("visual_studio_code")
    assert caps.text_document and caps.text_document.completion and caps.text_document.completion.completion_item
    caps.text_document.completion.completion_item.snippet_support = False
    await lsp_client.initialize_session(lsp.InitializeParams(capabilities=caps))
    yield
    await lsp_client.shutdown_session()


@pytest.mark.asyncio
async def test_builtin_ids_as_plain_text_without_snippet_support(plain_client: LanguageClient) -> None:
    doc = replace(BASE, NEW_INVOKE, f"  side:\n    invoke:\n      tool: {CURSOR}\n")
    items = await complete(plain_client, doc, " ")
    fetch = next(i for i in items if i.label == "nika:fetch")
    assert fetch.insert_text_format in (None, lsp.InsertTextFormat.PlainText)
    assert fetch.text_edit is not None and fetch.text_edit.new_text == "nika:fetch\n      args:\n        url: "
    assert all("$" not in (i.text_edit.new_text if i.text_edit else "") for i in items)


@pytest.mark.asyncio
async def test_tool_inside_quotes_and_flow_style_has_no_skeleton(client: LanguageClient) -> None:
    doc = replace(BASE, NEW_INVOKE, f'  side:\n    invoke: {{ tool: "nika:f{CURSOR}" }}\n')
    items = await complete(client, doc, ":")
    fetch = next(i for i in items if i.label == "nika:fetch")
    assert fetch.text_edit is not None and fetch.text_edit.new_text == "nika:fetch"


@pytest.mark.asyncio
async def test_argument_names_of_a_known_builtin(client: LanguageClient) -> None:
    doc = replace(BASE, "        mode: markdown\n", f"        mode: markdown\n        {CURSOR}\n")
    items = await complete(client, doc)
    got = set(labels(items))
    assert {"method", "headers", "body", "selector"} <= got and not got & {"url", "mode"}
    method = next(i for i in items if i.label == "method")
    assert method.detail and "GET" in method.detail


@pytest.mark.asyncio
async def test_argument_enum_values(client: LanguageClient) -> None:
    doc = replace(BASE, "        mode: markdown\n", f"        mode: {CURSOR}\n")
    got = labels(await complete(client, doc, " "))
    assert "markdown" in got and "article" in got


# -- after: ------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_after_keys_are_cycle_free(client: LanguageClient) -> None:
    doc = replace(BASE, "  summarize:\n", f"  summarize:\n    after:\n      {CURSOR}\n")
    # summarize itself, and report/publish that wait for it, would close a cycle
    assert set(labels(await complete(client, doc))) == {"fetch", "side", "each"}


@pytest.mark.asyncio
async def test_after_values_are_the_predicates(client: LanguageClient) -> None:
    doc = replace(BASE, "  side:\n", f"  side:\n    after: {{ fetch: {CURSOR} }}\n")
    assert labels(await complete(client, doc, " ")) == ["success", "failure", "skipped", "terminal"]


# -- models ------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_model_offers_every_provider(client: LanguageClient) -> None:
    doc = replace(BASE, "model: mock/echo\n", f"model: {CURSOR}\n")
    got = set(labels(await complete(client, doc, " ")))
    assert got == {f"{p}/" for p in providers()} | {"mock/echo"}
    assert len(providers()) == 17


# -- ${{ }} ------------------------------------------------------------------------------------


@pytest.mark.asyncio
async def test_roots_in_a_with_binding(client: LanguageClient) -> None:
    doc = replace(BASE, "      page: ${{ tasks.fetch.output }}\n", f"      page: ${{{{ {CURSOR}\n")
    got = set(labels(await complete(client, doc, " ")))
    assert {"inputs", "config", "const", "secrets", "tasks"} <= got and not got & {"item", "index"}


@pytest.mark.asyncio
async def test_tasks_members_exclude_self_and_downstream(client: LanguageClient) -> None:
    doc = replace(BASE, "      page: ${{ tasks.fetch.output }}\n", f"      page: ${{{{ tasks.{CURSOR} }}}}\n")
    assert labels(await complete(client, doc, ".")) == ["fetch", "side", "each"]


@pytest.mark.asyncio
async def test_task_fields_include_declared_output_bindings(client: LanguageClient) -> None:
    doc = replace(BASE, "      page: ${{ tasks.fetch.output }}\n", f"      page: ${{{{ tasks.fetch.{CURSOR} }}}}\n")
    items = await complete(client, doc, ".")
    got = labels(items)
    assert got[:6] == ["output", "status", "error", "started_at", "ended_at", "duration_ms"]
    assert "title" in got
    status = next(i for i in items if i.label == "status")
    assert status.detail == "terminal-observation edge"


@pytest.mark.asyncio
@pytest.mark.parametrize(("root", "name"), [("inputs", "topic"), ("config", "region"), ("const", "limit")])
async def test_declared_names(client: LanguageClient, root: str, name: str) -> None:
    doc = replace(BASE, '"Résumé 🚀 ${{ with.page }}"', f'"Résumé 🚀 ${{{{ with.page }}}} ${{{{ {root}.{CURSOR} }}}}"')
    items = await complete(client, doc, ".")
    assert labels(items) == [name]
    # the edit range starts right after the dot, past the emoji, in the negotiated encoding
    text = doc.replace(CURSOR, "")
    at = position_of(text, doc.index(CURSOR), encoding(client))
    assert items[0].text_edit is not None and isinstance(items[0].text_edit, lsp.TextEdit)
    assert items[0].text_edit.range == lsp.Range(start=at, end=at)


@pytest.mark.asyncio
async def test_with_members_are_this_tasks_bindings(client: LanguageClient) -> None:
    doc = replace(BASE, '"Résumé 🚀 ${{ with.page }}"', f'"Résumé 🚀 ${{{{ with.{CURSOR} }}}}"')
    assert labels(await complete(client, doc, ".")) == ["page"]


@pytest.mark.asyncio
async def test_item_only_inside_a_for_each_task(client: LanguageClient) -> None:
    in_loop = replace(BASE, '      prompt: "${{ item }}"', f'      prompt: "${{{{ {CURSOR} }}}}"')
    assert {"item", "index"} <= set(labels(await complete(client, in_loop, " ")))
    outside = replace(BASE, '"Résumé 🚀 ${{ with.page }}"', f'"Résumé 🚀 ${{{{ {CURSOR} }}}}"')
    got = set(labels(await complete(client, outside, " ")))
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


@pytest.mark.asyncio
async def test_document_broken_from_the_start(client: LanguageClient) -> None:
    broken = replace(BASE, "      page: ${{ tasks.fetch.output }}\n", f'      page: "${{{{ tasks.fetch.{CURSOR}\n')
    got = labels(await complete(client, broken, "."))
    assert "output" in got and "title" in got


@pytest.mark.asyncio
async def test_half_typed_key_in_a_broken_document(client: LanguageClient) -> None:
    doc = "nika: v1\nworkflow: {id: x}\ntasks:\n  a:\n    exe" + CURSOR
    got = set(labels(await complete(client, doc)))
    assert {"exec", "infer", "invoke", "agent", "with"} <= got


@pytest.mark.asyncio
async def test_on_finally_step_keys_in_a_list_item(client: LanguageClient) -> None:
    doc = replace(
        BASE, "  side:\n", f"  side:\n    on_finally:\n      - exec: {{shell: echo done}}\n        {CURSOR}\n"
    )
    assert set(labels(await complete(client, doc))) == {"when", "timeout"}


@pytest.mark.asyncio
async def test_crlf_line_endings(client: LanguageClient) -> None:
    doc = replace(BASE, "  side:\n    exec:", f"  side:\n    {CURSOR}\n    exec:").replace("\n", "\r\n")
    got = set(labels(await complete(client, doc)))
    assert {"with", "retry"} <= got and "exec" not in got
