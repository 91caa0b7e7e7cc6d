"""Drive code-server in headless Chromium (run by scripts/vscode-e2e.sh), one scenario a session.

main: diagnostics, quick fix, task graph, Check Workspace, Run Workflow in a terminal, the live run
      view colouring the graph's nodes, the Nika Runs history, Approve Paused Run, a 2,000-task graph.
bare: nika cannot be found: the not-found notification (once, its buttons), Set Path, Select
      Interpreter (a test double of the Python extension), then the workspace's .venv.
debug: `nika dap`: a breakpoint on a task line, Debug Workflow, the Variables view holding the
       task's resolved `with:` before its effect (no marker file yet), continue to the end.

Every step waits for what it expects to see (a row in the Problems panel, a node in the graph),
never for a fixed time; a step that does not see it within its timeout fails the run with a
screenshot of the moment.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from playwright.sync_api import FrameLocator, Locator, Page, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

FILE = "release-notes.nika.yaml"
TASKS = {"changelog", "changed_files", "draft", "review", "publish", "report_failure"}
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


class Step:
    def __init__(self, page: Page, artifacts: Path) -> None:
        self.page = page
        self.artifacts = artifacts
        self.observed: dict[str, Any] = {}

    def shot(self, name: str) -> str:
        path = self.artifacts / f"{name}.png"
        self.page.screenshot(path=str(path))
        return str(path)

    def say(self, text: str) -> None:
        print(f"e2e: {text}", flush=True)


def command(page: Page, title: str) -> None:
    """Run a command from the command palette by its exact title (not a longer one listed first)."""
    page.keyboard.press("F1")
    box = page.locator(".quick-input-widget input")
    box.wait_for(state="visible", timeout=10_000)
    box.fill(">" + title)
    pick(page, title)


def pick(page: Page, label: str) -> None:
    """Choose the quick-pick row whose label is exactly `label`."""
    exact = re.compile(rf"^\s*{re.escape(label)}\s*$")
    row = page.locator(".quick-input-list .monaco-list-row").filter(has=page.locator(".label-name", has_text=exact))
    row.first.wait_for(timeout=10_000)
    row.first.click()


def focus_editor(page: Page) -> None:
    """Keyboard focus to the first editor group (clicking the text can land on a scrollbar)."""
    command(page, "View: Focus First Editor Group")


def open_file(page: Page, name: str) -> None:
    focus_editor(page)
    page.keyboard.press("Control+p")
    box = page.locator(".quick-input-widget input")
    box.wait_for(state="visible", timeout=10_000)
    box.fill(name)
    page.locator(".quick-input-list .monaco-list-row", has_text=name).first.wait_for(timeout=10_000)
    page.keyboard.press("Enter")
    page.locator(".tabs-container .tab.active", has_text=name).first.wait_for(timeout=10_000)


def pane(page: Page, title: str) -> Locator:
    """A view pane of the side bar by its exact title (`Nika Run` is not `Nika Runs`)."""
    exact = re.compile(rf"^\s*{re.escape(title)}\s*$", re.IGNORECASE)
    return page.locator(".pane").filter(has=page.locator(".pane-header h3.title", has_text=exact))


def header(p: Locator) -> str:
    return " ".join(p.locator(".pane-header").first.inner_text().split())


def rows(p: Locator) -> list[str]:
    """A tree's rows as `label description`."""
    texts = p.locator(".pane-body .monaco-list-row").evaluate_all(
        "rows => rows.map(r => [r.querySelector('.label-name'), r.querySelector('.label-description')]"
        ".map(e => e ? e.textContent : '').join(' '))"
    )
    return [" ".join(t.split()) for t in texts]


def wait_row(p: Locator, prefix: str, timeout_s: float = 20) -> list[str]:
    """Wait until a row of the tree reads `prefix…` (`label description`); returns the rows."""
    end = time.monotonic() + timeout_s
    while True:
        seen = rows(p)
        if any(r.startswith(prefix) for r in seen):
            return seen
        if time.monotonic() > end:
            raise AssertionError(f"no row starting {prefix!r} in {seen!r}")
        p.page.wait_for_timeout(100)


def toast(page: Page, text: str) -> Locator:
    return page.locator(".notifications-toasts .notification-toast", has_text=text)


def buttons(n: Locator) -> list[str]:
    return [b.strip() for b in n.locator(".notification-list-item-buttons-container .monaco-button").all_inner_texts()]


def output_text(page: Page) -> str:
    return " ".join(page.locator(".part.panel .monaco-editor .view-lines").first.inner_text().split())


def go_to(page: Page, line: int, col: int) -> None:
    page.keyboard.press("Control+g")
    box = page.locator(".quick-input-widget input")
    box.wait_for(state="visible", timeout=10_000)
    box.fill(f":{line}:{col}")
    page.keyboard.press("Enter")
    page.locator(".statusbar-item", has_text=f"Ln {line}, Col {col}").first.wait_for(timeout=10_000)


def graph_frame(page: Page) -> FrameLocator:
    return page.frame_locator("iframe.webview.ready").frame_locator("iframe#active-frame")


def graph_state(frame: FrameLocator) -> dict[str, Any]:
    svg = frame.locator("svg#graph")
    return svg.evaluate(
        """svg => ({
            engine: svg.dataset.engine,
            nodes: [...svg.querySelectorAll('g.task')].map(g => ({
                id: g.dataset.task, verb: g.dataset.verb, wave: g.dataset.wave})),
            edges: [...svg.querySelectorAll('path.edge')].map(p => [p.dataset.from, p.dataset.to, p.dataset.kind]),
            summary: document.getElementById('summary').textContent,
        })"""
    )


def node_runs(frame: FrameLocator) -> dict[str, dict[str, str]]:
    """Each node's `data-run` and what the style sheet makes of it (stroke colour, opacity)."""
    return frame.locator("svg#graph").evaluate(
        """svg => Object.fromEntries([...svg.querySelectorAll('g.task')].map(g => {
            const rect = getComputedStyle(g.querySelector('rect'));
            return [g.dataset.task, {run: g.dataset.run || '', stroke: rect.stroke, dash: rect.strokeDasharray,
                                     opacity: getComputedStyle(g).opacity}];
        }))"""
    )


# the run view's colours (src/webview/webview.css), as getComputedStyle reports them
GREEN, RED, AMBER, BLUE, GREY = (
    "rgb(22, 163, 74)",
    "rgb(220, 38, 38)",
    "rgb(217, 119, 6)",
    "rgb(37, 99, 235)",
    "rgb(107, 114, 128)",
)


def run(url: str, chromium: str, artifacts: Path, workspace: Path, nika: str, scenario: str) -> int:
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, args=CHROMIUM_FLAGS, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        s = Step(page, artifacts)
        csp: list[str] = []
        page.on("console", lambda m: csp.append(m.text) if "Content Security Policy" in m.text else None)
        try:
            t0 = time.monotonic()
            page.goto(url)
            page.locator(".monaco-workbench").wait_for(timeout=60_000)
            s.say(f"[{scenario}] workbench loaded in {time.monotonic() - t0:.1f} s")
            if scenario == "main":
                main_session(s, workspace, csp)
            elif scenario == "debug":
                debug_session(s, workspace)
            else:
                bare_session(s, workspace, nika)
        except (AssertionError, PlaywrightTimeout) as exc:
            s.say(f"FAILED: {exc}")
            s.shot(f"{scenario}-failure")
            (artifacts / f"observed-{scenario}.json").write_text(json.dumps(s.observed, indent=2))
            browser.close()
            return 1
        (artifacts / f"observed-{scenario}.json").write_text(json.dumps(s.observed, indent=2))
        browser.close()
    print(f"e2e: [{scenario}] passed", flush=True)
    return 0


def main_session(s: Step, workspace: Path, csp: list[str]) -> None:
    page, artifacts = s.page, s.artifacts
    source = (workspace / FILE).read_text().splitlines()
    typo_line = next(i for i, line in enumerate(source, 1) if "reviw" in line)
    typo_col = source[typo_line - 1].index("reviw") + 1
    failure_line = next(i for i, line in enumerate(source, 1) if line.strip() == "report_failure:")

    # 1. open the workflow; the language server reports the typo
    page.locator(".explorer-folders-view .monaco-list-row", has_text=FILE).first.click(timeout=30_000)
    page.locator(".monaco-editor .view-lines", has_text="release-notes").first.wait_for(timeout=20_000)
    page.locator(".statusbar-item", has_text="Nika").first.wait_for(timeout=20_000)
    page.keyboard.press("Control+Shift+m")
    row = page.locator(".markers-panel .monaco-list-row", has_text="NIKA-DAG-002").first
    row.wait_for(timeout=60_000)
    text = row.inner_text().replace("\n", " ")
    s.say(f"Problems panel row: {text!r}")
    assert f"[Ln {typo_line}, Col {typo_col}]" in text, f"expected [Ln {typo_line}, Col {typo_col}] in {text!r}"
    assert "`after:` names `reviw`, which is not a task" in text, text
    s.observed["problem"] = text
    s.observed["screenshot_problems"] = s.shot("1-problems")

    # 2. the task graph, before the fix: the typo is a check error, so there is no projection to draw
    #    (spec 16: reason `findings`); the bar says why
    editor = page.locator(".monaco-editor .view-lines").first
    editor.click()
    command(page, "Nika: Show Task Graph")
    frame = graph_frame(page)
    frame.locator("#summary", has_text="No graph while `nika check` finds an error").wait_for(timeout=30_000)
    before = graph_state(frame)
    s.say(f"graph before the fix: {before['summary']!r}")
    assert before["nodes"] == [], before
    s.observed["graph_before"] = before

    # 3. the quick fix on the typo (the graph beside it has the focus: give it back to the workflow's editor)
    command(page, "View: Focus First Editor Group")
    go_to(page, typo_line, typo_col)
    page.keyboard.press("Control+.")
    fix = page.locator(".action-widget .monaco-list-row", has_text="Change to `review`").first
    fix.wait_for(timeout=20_000)
    s.observed["screenshot_quickfix"] = s.shot("2-quick-fix")
    # the menu opens with the preferred fix focused; pointer events are held by its overlay
    page.locator(".action-widget .monaco-list-row.focused", has_text="Change to `review`").wait_for(timeout=5_000)
    page.keyboard.press("Enter")
    page.locator(".monaco-editor .view-lines", has_text="after: { review: success }").first.wait_for(timeout=20_000)
    page.locator(".markers-panel .monaco-list-row", has_text="NIKA-DAG-002").wait_for(state="detached", timeout=30_000)
    s.say("quick fix applied: `after: { review: success }`, NIKA-DAG-002 gone from the Problems panel")

    # 4. the graph follows the edit: the file checks clean, its projection is drawn, `publish` waits for `review`
    frame.locator('path.edge[data-from="review"][data-to="publish"][data-kind="control"]').wait_for(timeout=30_000)
    frame.locator('svg#graph[data-engine="elk"]').wait_for(timeout=30_000)
    after = graph_state(frame)
    assert {n["id"] for n in after["nodes"]} == TASKS, after["nodes"]
    waves = {n["id"]: n["wave"] for n in after["nodes"]}
    assert waves["publish"] == "3", waves
    verbs = {n["id"]: n["verb"] for n in after["nodes"]}
    s.say(f"graph after the fix: {after['summary']!r}; waves {waves}; verbs {verbs}")
    s.observed["graph_after"] = after
    ours = [m for m in csp if "vscode-resource" in m or "nika" in m.lower() or "inline style" in m]
    assert not ours, f"CSP violations in the graph view: {ours}"
    s.say(f"no Content Security Policy violation from the graph view ({len(csp)} CSP messages in all)")
    s.observed["screenshot_graph"] = s.shot("3-graph")
    webview = page.locator("iframe.webview.ready").first
    webview.screenshot(path=str(artifacts / "graph-view.png"))

    # 5. clicking a node reveals the task in the editor
    frame.locator('g.task[data-task="report_failure"]').click()
    # the task's key is selected: the cursor ends after its 14 characters
    where = f"Ln {failure_line}, Col 17 (14 selected)"
    page.locator(".statusbar-item", has_text=where).first.wait_for(timeout=20_000)
    s.say(f"clicking `report_failure` selected its key in the editor: {where}")
    s.observed["screenshot_reveal"] = s.shot("4-reveal")

    # 6. "Nika: Check Workspace": nika check in a task, findings through the $nika problem matcher
    command(page, "Nika: Check Workspace")
    # the task's terminal comes up when the check ends; the status bar then counts its one error
    page.wait_for_function(
        "() => (document.getElementById('status.problems')?.textContent || '').trim().startsWith('1')",
        timeout=60_000,
    )
    page.locator(".part.panel .composite-bar .action-label", has_text="Problems").first.click()
    row = page.locator(".markers-panel .monaco-list-row", has_text="`helo`").first
    row.wait_for(timeout=60_000)
    text = row.inner_text().replace("\n", " ")
    assert "NIKA-DAG-002" in text and "[Ln 9, Col 14]" in text, text
    s.say(f"Check Workspace -> Problems row for the unopened other.nika.yaml: {text!r}")
    s.observed["check_workspace"] = text
    s.observed["screenshot_check"] = s.shot("5-check-workspace")

    # 7. "Nika: Run Workflow in Terminal": a prompt per declared input, then `nika run` in a terminal
    focus_editor(page)
    command(page, "Nika: Run Workflow in Terminal")
    box = page.locator(".quick-input-widget input")
    page.locator(".quick-input-widget", has_text="input `since`").wait_for(timeout=20_000)
    box.fill("v2.0.0")
    page.keyboard.press("Enter")
    term = page.locator(".xterm-rows", has_text="trace:").first  # the end of nika run's report
    term.wait_for(timeout=30_000)
    text = " ".join(term.inner_text().split())
    s.say(f"Run Workflow terminal: {text!r}")
    s.observed["run_terminal"] = text
    s.observed["screenshot_run"] = s.shot("6-run-workflow")

    # 8. "Nika: Run Workflow" on a mock workflow: the Nika Run view and the graph's nodes follow the event stream
    open_file(page, "live.nika.yaml")
    frame.locator('g.task[data-task="hold"]').wait_for(timeout=30_000)  # the graph follows the active editor
    command(page, "Nika: Run Workflow")
    run_pane = pane(page, "Nika Run")
    # `hold` waits 2 s: while it does, its node is drawn running (blue, dashed) and the finished `notes` green
    frame.locator('g.task[data-task="hold"][data-run="running"]').wait_for(timeout=20_000)
    during = node_runs(frame)
    s.say(f"while `hold` runs: { {k: v['run'] for k, v in during.items()} }")
    assert during["hold"]["stroke"] == BLUE and during["hold"]["dash"] != "none", during["hold"]
    s.observed["screenshot_run_during"] = s.shot("7-run-live-during")
    run_pane.locator(".pane-header", has_text=re.compile(r"failed ·")).wait_for(timeout=30_000)
    frame.locator('g.task[data-task="missing"][data-run="failed"]').wait_for(timeout=10_000)
    final = node_runs(frame)
    runs = {k: v["run"] for k, v in final.items()}
    expected = {
        "notes": "success",
        "hold": "success",
        "summary": "success",
        "missing": "failed",
        "fallback": "recovered",
        "never": "skipped",
    }
    assert runs == expected, runs
    strokes = {k: v["stroke"] for k, v in final.items()}
    assert strokes["notes"] == strokes["hold"] == strokes["summary"] == GREEN, strokes
    assert (strokes["missing"], strokes["fallback"], strokes["never"]) == (RED, AMBER, GREY), strokes
    assert float(final["never"]["opacity"]) < 0.5, final["never"]
    # the tree's rows settle too (its refresh is asynchronous)
    live_rows = wait_row(run_pane, "missing NIKA-BUILTIN-READ-001 ·")
    s.say(f"Nika Run header: {header(run_pane)!r}")
    s.say(f"Nika Run rows: {live_rows!r}")
    s.say(f"graph nodes after the run (data-run, stroke): { {k: (v['run'], v['stroke']) for k, v in final.items()} }")
    assert any(r.startswith("missing NIKA-BUILTIN-READ-001") for r in live_rows), live_rows
    assert any(r.startswith("fallback recovered from NIKA-BUILTIN-READ-001") for r in live_rows), live_rows
    s.observed["run_live"] = {"header": header(run_pane), "rows": live_rows, "nodes": final, "during": during}
    s.observed["screenshot_run_live"] = s.shot("8-run-live")
    frame_el = page.locator("iframe.webview.ready").first
    frame_el.screenshot(path=str(artifacts / "graph-run.png"))

    # 9. the Nika Runs history lists the run (nika trace ls of the workspace's .nika/traces), newest first
    history = pane(page, "Nika Runs")
    if history.locator(".pane-header.expanded").count() == 0:
        history.locator(".pane-header").first.click()
    past = wait_row(history, "live-colours failure ·")
    s.say(f"Nika Runs rows: {past!r}")
    assert past[0].startswith("live-colours failure ·"), past
    assert any(r.startswith("release-notes failure") for r in past), past  # step 7's run in the terminal
    s.observed["history"] = past

    # 10. a human gate with no default pauses the run; "Approve…" answers it and the run resumes to the end
    open_file(page, "approval.nika.yaml")
    frame.locator('g.task[data-task="approve"]').wait_for(timeout=30_000)
    command(page, "Nika: Run Workflow")
    page.locator(".quick-input-widget", has_text="input `change`").wait_for(timeout=20_000)
    page.keyboard.press("Enter")  # empty: the declared default
    run_pane.locator(".pane-header", has_text=re.compile(r"paused ·")).wait_for(timeout=30_000)
    note = toast(page, "`approve` waits for an answer")
    note.wait_for(timeout=20_000)
    s.say(f"paused: header {header(run_pane)!r}; notification {' '.join(note.inner_text().split())!r}")
    assert buttons(note) == ["Approve…"], buttons(note)
    wait_row(history, "approval paused at approve ·")
    paused_nodes = {k: v["run"] for k, v in node_runs(frame).items()}
    assert paused_nodes == {"draft": "success", "approve": "paused", "publish": "pending"}, paused_nodes
    assert node_runs(frame)["approve"]["stroke"] == AMBER
    wait_row(run_pane, "approve waits for an answer")
    s.say(f"Nika Runs while paused: {rows(history)[0]!r}; nodes {paused_nodes}; Nika Run rows {rows(run_pane)}")
    s.observed["paused"] = {"header": header(run_pane), "history": rows(history), "nodes": paused_nodes}
    s.observed["screenshot_paused"] = s.shot("9-paused")
    note.locator(".monaco-button", has_text="Approve…").click()
    page.locator(".quick-input-widget", has_text="approval waits at `approve`").wait_for(timeout=20_000)
    labels = [t.strip() for t in page.locator(".quick-input-list .monaco-list-row .label-name").all_inner_texts()]
    assert labels == ["Approve", "Reject"], labels
    s.observed["screenshot_approve"] = s.shot("10-approve-pick")
    pick(page, "Approve")
    run_pane.locator(".pane-header", has_text=re.compile(r"succeeded ·")).wait_for(timeout=30_000)
    frame.locator('g.task[data-task="publish"][data-run="success"]').wait_for(timeout=10_000)
    resumed = {k: v["run"] for k, v in node_runs(frame).items()}
    assert resumed == {"draft": "cache_hit", "approve": "success", "publish": "success"}, resumed
    published = workspace / "out" / "change-note.md"
    assert published.is_file(), f"{published} was not written"
    wait_row(history, "approval success ·")
    s.say(f"approved: header {header(run_pane)!r}; nodes {resumed}; {published.name}: {published.read_text()!r}")
    s.say(f"Nika Runs after: {rows(history)[:3]!r}")
    s.observed["approved"] = {"header": header(run_pane), "nodes": resumed, "history": rows(history)}
    s.observed["screenshot_approved"] = s.shot("11-approved")

    # 10b. the "▶ Run task" code lens on `summary`: one task runs, its ancestors come from step 8's run
    #     (its tab is still open: a click on it, quick open after the approval pick can lose the focus)
    page.locator(".tabs-container .tab", has_text="live.nika.yaml").first.click()
    page.locator(".tabs-container .tab.active", has_text="live.nika.yaml").first.wait_for(timeout=10_000)
    frame.locator('g.task[data-task="hold"]').wait_for(timeout=30_000)
    live_source = (workspace / "live.nika.yaml").read_text().splitlines()
    go_to(page, next(i for i, line in enumerate(live_source, 1) if line == "  summary:"), 3)  # scrolls it into view
    key = page.locator(".monaco-editor .view-line", has_text=re.compile(r"^\s*summary:")).first
    key.wait_for(timeout=20_000)
    lens = page.locator(".codelens-decoration a", has_text="▶ Run task")
    lens.first.wait_for(timeout=30_000)
    # lenses are drawn only for the lines in view, each just above its task's key line
    key_y = key.bounding_box()["y"]  # type: ignore[index]
    above = [(lens.nth(i).bounding_box()["y"], i) for i in range(lens.count())]  # type: ignore[index]
    _, nearest = max((y, i) for y, i in above if y < key_y)
    titles = [" ".join(t.split()) for t in page.locator(".codelens-decoration").all_inner_texts()]
    s.say(f"code lenses in view on live.nika.yaml: {titles!r}")
    s.observed["screenshot_lenses"] = s.shot("11b-run-task-lens")
    lens.nth(nearest).click()
    # the header still shows step 10's run (`approval: succeeded`) until this one starts
    run_pane.locator(".pane-header", has_text=re.compile(r"live-colours: succeeded ·")).wait_for(timeout=30_000)
    frame.locator('g.task[data-task="summary"][data-run="success"]').wait_for(timeout=10_000)
    one = {k: v["run"] for k, v in node_runs(frame).items()}
    assert (one["notes"], one["hold"], one["summary"]) == ("cache_hit", "cache_hit", "success"), one
    s.say(f"Run task `summary`: header {header(run_pane)!r}; nodes {one}")
    s.observed["run_task"] = {"header": header(run_pane), "nodes": one, "lenses": titles}
    s.observed["screenshot_run_task"] = s.shot("11c-run-task")

    # 11. a 2,000-task workflow: the column layout, drawn at once, said so in the summary
    focus_editor(page)
    box = page.locator(".quick-input-widget input")
    t0 = time.monotonic()
    page.keyboard.press("Control+p")
    box.wait_for(state="visible", timeout=10_000)
    box.fill("big.nika.yaml")
    page.locator(".quick-input-list .monaco-list-row", has_text="big.nika.yaml").first.wait_for(timeout=10_000)
    page.keyboard.press("Enter")
    frame.locator('svg#graph[data-tasks="2000"]').wait_for(timeout=90_000)
    drawn = time.monotonic() - t0
    big = frame.locator("svg#graph").evaluate(
        "svg => ({engine: svg.dataset.engine, tasks: svg.querySelectorAll('g.task').length,"
        " edges: svg.querySelectorAll('path.edge').length, draw_ms: Number(svg.dataset.drawMs),"
        " summary: document.getElementById('summary').textContent})"
    )
    assert big["tasks"] == 2000 and big["engine"] == "grid", big
    assert "simple column layout" in big["summary"], big
    t1 = time.monotonic()
    frame.locator("#view").hover()
    page.mouse.wheel(0, -400)
    frame.locator("#fit").click()
    frame.locator('g.task[data-task="t1999"]').click()
    page.locator(".statusbar-item", has_text="selected").first.wait_for(timeout=20_000)
    react = time.monotonic() - t1
    s.say(
        f"2,000 tasks: {big['summary']!r}, {big['edges']} edges, layout + SVG in {big['draw_ms']} ms, "
        f"on screen {drawn:.1f} s after opening the file (server analysis included); "
        f"zoom + click-to-reveal answered in {react:.1f} s"
    )
    s.observed["big"] = {**big, "drawn_s": round(drawn, 1), "zoom_click_s": round(react, 1)}
    s.observed["screenshot_big"] = s.shot("12-big-graph")


NOT_FOUND = "`nika.path` is not set and there is no `nika`"


def wait_log(s: Step, scenario: str, needle: str, count: int = 1, timeout_s: float = 30) -> str:
    """Wait until the Nika output channel (its log file in the user-data folder) has `needle` `count` times."""
    end = time.monotonic() + timeout_s
    while True:
        logs = sorted((s.artifacts / f"{scenario}-user" / "logs").glob("*/exthost*/nika-tools.nika/Nika.log"))
        text = logs[-1].read_text() if logs else ""
        if text.count(needle) >= count:
            return text
        if time.monotonic() > end:
            raise AssertionError(f"the Nika output has {text.count(needle)} of {count} {needle!r}:\n{text[-2000:]}")
        s.page.wait_for_timeout(100)


def bare_session(s: Step, workspace: Path, nika: str) -> None:
    """No nika.path, no nika on PATH, no .venv; the Python extension (a test double) selects a python without nika."""
    page = s.page
    # 1. the one notification: where the search looked, the install command, the ways out
    open_file(page, "other.nika.yaml")
    note = toast(page, NOT_FOUND)
    note.wait_for(timeout=30_000)
    text = " ".join(note.locator(".notification-list-item-message").inner_text().split())
    s.say(f"not-found notification: {text!r}; buttons {buttons(note)}")
    assert buttons(note) == ["Select Interpreter", "Set Path", "Copy Install Command"], buttons(note)
    assert "in the workspace's `.venv` or `venv`, in the selected Python interpreter or on `PATH`" in text, text
    assert "python3 -m pip install ." in text and "nika-tools" in text, text
    s.observed["not_found"] = {"text": text, "buttons": buttons(note)}
    s.observed["screenshot_not_found"] = s.shot("bare-1-not-found")

    # 2. shown once: a restart that again finds nothing does not say it again
    command(page, "Nika: Restart Language Server")
    wait_log(s, "bare", "restarting the server: requested")
    wait_log(s, "bare", "nika not found", count=2)
    command(page, "Notifications: Show Notifications")
    center = page.locator(".notifications-center .notification-list-item", has_text=NOT_FOUND)
    center.first.wait_for(timeout=10_000)
    assert center.count() == 1, f"{center.count()} not-found notifications after a second start"
    s.say("the server was started again (the output says `nika not found` twice): still one notification")

    # 3. "Set Path" opens the nika.path setting
    center.first.locator(".monaco-button", has_text="Set Path").click()
    page.locator(".settings-editor .setting-item-contents", has_text="Nika: Path").first.wait_for(timeout=20_000)
    s.say("Set Path opened the Settings editor at nika.path")
    s.observed["screenshot_set_path"] = s.shot("bare-2-set-path")

    # 4. a command that needs nika says it again (the user just asked); "Select Interpreter" runs python.setInterpreter
    page.locator(".tabs-container .tab", has_text="other.nika.yaml").first.click()
    page.locator(".tabs-container .tab.active", has_text="other.nika.yaml").first.wait_for(timeout=10_000)
    command(page, "Nika: Check Workspace")
    again = toast(page, NOT_FOUND)
    again.first.wait_for(timeout=20_000)
    again.first.locator(".monaco-button", has_text="Select Interpreter").click()
    page.locator(".quick-input-widget", has_text="Select Interpreter (fake)").wait_for(timeout=20_000)
    env_python = str(Path(nika).parent / "fake-env" / "bin" / "python")
    pick(page, env_python)
    # the interpreter changed: the server restarts with the nika beside that python and reports the typo
    row = page.locator(".markers-panel .monaco-list-row", has_text="NIKA-DAG-002")
    page.keyboard.press("Control+Shift+m")
    row.first.wait_for(timeout=60_000)
    where = f"selected Python environment: {Path(env_python).parent / 'nika'}"
    wait_log(s, "bare", where)
    s.say(
        f"Select Interpreter -> {env_python}: the server runs ({where}); Problems: {row.first.inner_text().split()[:3]}"
    )
    s.observed["python_env"] = where
    s.observed["screenshot_python"] = s.shot("bare-3-python-env")

    # 5. the workspace's own .venv comes before the selected interpreter
    venv = workspace / ".venv" / "bin"
    venv.mkdir(parents=True, exist_ok=True)
    shutil.copy(nika, venv / "nika")
    command(page, "Nika: Restart Language Server")
    where = f"the workspace's virtual environment: {venv / 'nika'}"
    wait_log(s, "bare", where)
    page.keyboard.press("Control+Shift+m")
    row.first.wait_for(timeout=60_000)
    s.say(f"with {venv / 'nika'}: the restart runs it ({where})")
    s.observed["venv"] = where
    s.observed["screenshot_venv"] = s.shot("bare-4-venv")


DEBUG_FILE = "debug.nika.yaml"


def debug_session(s: Step, workspace: Path) -> None:
    """`nika dap` in the editor: a breakpoint on a task line, Debug Workflow, the Variables view
    holding the task's resolved `with:` while its effect has not happened, then continue to the end."""
    page = s.page
    marker = workspace / "debug-marker.txt"
    marker.unlink(missing_ok=True)
    source = (workspace / DEBUG_FILE).read_text().splitlines()
    line = next(i for i, text in enumerate(source, 1) if text.strip() == "marker:")
    # 1. the breakpoint, on the task's key line
    page.locator(".explorer-folders-view .monaco-list-row", has_text=DEBUG_FILE).first.click(timeout=30_000)
    page.locator(".tabs-container .tab.active", has_text=DEBUG_FILE).first.wait_for(timeout=20_000)
    page.locator(".statusbar-item", has_text="Nika").first.wait_for(timeout=30_000)
    focus_editor(page)
    go_to(page, line, 3)
    page.keyboard.press("F9")
    page.locator(".codicon-debug-breakpoint").first.wait_for(timeout=10_000)
    # 2. Debug Workflow: the run stops before `marker`'s effect
    command(page, "Nika: Debug Workflow")
    page.locator(".debug-toolbar").first.wait_for(timeout=60_000)
    page.locator(".codicon-debug-stackframe").first.wait_for(timeout=60_000)
    variables = page.locator(".debug-view-content .monaco-list-row, .debug-pane .monaco-list-row")
    with_row = variables.filter(has_text=re.compile(r"^\s*with\b"))
    with_row.first.wait_for(timeout=30_000)
    with_row.first.click()
    held = variables.filter(has_text="debug-marker.txt")
    held.first.wait_for(timeout=20_000)
    assert not marker.exists(), "the marker exists while the task is held before its effect"
    s.say(f"stopped at `marker` (line {line}): Variables shows {held.first.inner_text().split()!r}; no marker yet")
    s.observed["held_variable"] = " ".join(held.first.inner_text().split())
    s.observed["screenshot_debug_stopped"] = s.shot("debug-1-stopped")
    # 3. continue: the effect happens and the session ends
    page.keyboard.press("F5")
    end = time.monotonic() + 60
    while not marker.exists():
        if time.monotonic() > end:
            raise AssertionError("continue did not run the held effect within 60 s")
        page.wait_for_timeout(100)
    page.locator(".debug-toolbar").first.wait_for(state="hidden", timeout=60_000)
    s.say("continued: the marker was written and the session ended")
    s.observed["screenshot_debug_done"] = s.shot("debug-2-done")


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--url", required=True)
    p.add_argument("--chromium", required=True)
    p.add_argument("--artifacts", required=True, type=Path)
    p.add_argument("--workspace", required=True, type=Path)
    p.add_argument("--nika", required=True, help="the nika wrapper (copied into the bare workspace's .venv)")
    p.add_argument("--scenario", choices=["main", "bare", "debug"], default="main")
    a = p.parse_args()
    return run(a.url, a.chromium, a.artifacts, a.workspace, a.nika, a.scenario)


if __name__ == "__main__":
    sys.exit(main())
