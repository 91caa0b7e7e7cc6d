"""Code lenses on each task's key line (``textDocument/codeLens``).

* The certificate's lens: the task's cost and wave (:mod:`nika_lsp.features.certificate`), plain
  text (a command with an empty id).
* With the setting ``nika.runLenses`` (off by default: only a client that implements the command
  turns it on, as the VS Code extension does), a **Run task** lens whose command is
  ``nika.runTask`` with the arguments ``[uri, task_id]``, and, on a task others depend on, a
  **with dependents** lens (``[uri, task_id, true]``). The client runs
  ``nika run FILE --task ID [--with-dependents]`` (docs/edit-run-loop.md): the task's ancestors come
  from the workflow's latest run history. A task on a dependency cycle never runs and gets no lens.

Everything is read from the document's snapshot; nothing here parses or compiles again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from nika_lsp.convert import span_to_range
from nika_lsp.features import certificate

if TYPE_CHECKING:
    from nika_lsp.documents import Snapshot
    from nika_lsp.host import Host

RUN_TASK_COMMAND = "nika.runTask"


def run_lenses(snap: Snapshot, encoding: str) -> list[lsp.CodeLens]:
    """A **Run task** lens on each task that runs (and **with dependents** where it has any)."""
    wf = snap.compiled.workflow
    graph = snap.compiled.graph
    if wf is None or graph is None:
        return []
    src = snap.source
    out: list[lsp.CodeLens] = []
    for tid, task in wf.tasks.items():
        if graph.wave_of(tid) is None:
            continue
        rng = span_to_range(src, task.key.span, encoding)
        out.append(
            lsp.CodeLens(
                range=rng, command=lsp.Command(title="▶ Run task", command=RUN_TASK_COMMAND, arguments=[snap.uri, tid])
            )
        )
        if any(True for _ in graph.outgoing(tid)):
            out.append(
                lsp.CodeLens(
                    range=rng,
                    command=lsp.Command(
                        title="with dependents", command=RUN_TASK_COMMAND, arguments=[snap.uri, tid, True]
                    ),
                )
            )
    return out


def code_lenses(snap: Snapshot, encoding: str, *, run: bool) -> list[lsp.CodeLens]:
    """Every lens of the document in line order; on a task's line the run lenses (when ``run``)
    come before the certificate's (the sort is stable)."""
    found = (run_lenses(snap, encoding) if run else []) + certificate.code_lenses(snap, encoding)
    return sorted(found, key=lambda lens: lens.range.start.line)


def register(server: Host) -> None:
    """Attach the code lens handler."""

    @server.feature(lsp.TEXT_DOCUMENT_CODE_LENS, lsp.CodeLensOptions(resolve_provider=False))
    async def code_lens(ls: Host, params: lsp.CodeLensParams) -> list[lsp.CodeLens] | None:
        snap = await ls.snapshot_async(params.text_document.uri)
        if snap is None:
            return None
        return ls.safely("codeLens", lambda: code_lenses(snap, ls.encoding, run=ls.settings.run_lenses), [])
