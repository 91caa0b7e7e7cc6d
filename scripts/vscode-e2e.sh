#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code (code-server) driven by headless Chromium:
# builds the .vsix and runs two sessions (scripts/e2e/drive.py says what each step checks):
#   main: nika.path set; diagnostics and the quick fix, the task graph, Check Workspace, Run Workflow
#         in a terminal, the live run view colouring the graph's nodes, the Nika Runs history, Approve
#         Paused Run, a 2,000-task graph;
#   bare: no nika.path, no nika on PATH, a test double of the Python extension: the not-found
#         notification (once, its buttons), Set Path, Select Interpreter, then the workspace's .venv;
#   debug: a breakpoint on a task line, Debug Workflow (`nika dap`), the Variables view before the
#         effect, continue (its screenshot is docs/images/debugging-stopped.png).
# E2E_SESSIONS="main bare debug" (the default) runs a subset when set.
# Screenshots, logs and observed.json go to vscode-extension/e2e-artifacts/ (gitignored).
#
# usage: scripts/vscode-e2e.sh
# needs: node 20 + npm, python3 with the `playwright` package, a chromium binary (CHROMIUM, default
#        /usr/bin/chromium), and code-server (CODE_SERVER=path, or /work/shared/tools/install-code-server
#        is used to install it into $E2E_CACHE/code-server).
# The extension runs THIS checkout's server: nika.path points at a wrapper that runs `python3 -m nika`
# with PYTHONPATH set to the repository root.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ext="$root/vscode-extension"
art="$ext/e2e-artifacts"
cache=${E2E_CACHE:-$HOME/.cache/nika-e2e}
chromium=${CHROMIUM:-/usr/bin/chromium}
port=${E2E_PORT:-18$(( RANDOM % 900 + 100 ))}
log() { echo "vscode-e2e: $*" >&2; }
fail() { log "$*"; exit 1; }

[ -x "$chromium" ] || fail "no chromium at $chromium (apt-get install -y chromium, or set CHROMIUM)"
python3 -c 'import playwright' 2>/dev/null || fail "python3 cannot import playwright (pip install playwright)"
if [ -z "${CODE_SERVER:-}" ]; then
  if [ -x "$cache/code-server/node_modules/.bin/code-server" ]; then
    CODE_SERVER="$cache/code-server/node_modules/.bin/code-server"
  elif [ -x /work/shared/tools/install-code-server ]; then
    log "installing code-server into $cache/code-server"
    CODE_SERVER=$(/work/shared/tools/install-code-server "$cache/code-server")
  else
    fail "set CODE_SERVER to a code-server executable"
  fi
fi

rm -rf "$art" && mkdir -p "$art"/{workspace/.vscode,bare,fake-env/bin}
t0=$(date +%s)
log "building the extension"
(cd "$ext" && { [ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --no-audit --no-fund --loglevel=error; } && npm run -s package >"$art/package.log" 2>&1) \
  || { cat "$art/package.log" >&2; fail "npm run package failed"; }
# the Python extension's test double (scripts/e2e/fake-python), for the bare session's interpreter step
cp -r "$root/scripts/e2e/fake-python" "$art/fake-python-src"
(cd "$art/fake-python-src" && "$ext/node_modules/.bin/vsce" package --no-dependencies --allow-missing-repository --skip-license \
  -o "$art/fake-python.vsix" >>"$art/package.log" 2>&1) || { cat "$art/package.log" >&2; fail "packaging the fake Python extension failed"; }
t1=$(date +%s)

cat >"$art/nika-wrapper" <<WRAP
#!/bin/sh
PYTHONPATH="$root\${PYTHONPATH:+:\$PYTHONPATH}" exec python3 -m nika "\$@"
WRAP
chmod +x "$art/nika-wrapper"
cp "$root/scripts/e2e/release-notes.nika.yaml" "$root/scripts/e2e/other.nika.yaml" "$root/scripts/e2e/live.nika.yaml" \
  "$root/scripts/e2e/approval.nika.yaml" "$root/scripts/e2e/debug.nika.yaml" "$art/workspace/"
python3 "$root/scripts/e2e/big_workflow.py" 2000 >"$art/workspace/big.nika.yaml"
# each workspace is its own project: without a nika.toml of its own, the checkout's (which leaves
# vscode-extension/e2e-artifacts/** out of `nika check .`) would govern it, and Check Workspace finds nothing
for w in workspace bare; do printf '# the e2e workspace: its own project\n' >"$art/$w/nika.toml"; done
cat >"$art/workspace/.vscode/settings.json" <<JSON
{ "nika.path": "$art/nika-wrapper", "nika.trace.server": "messages" }
JSON
# the bare workspace: no nika.path, no nika on PATH, no virtual environment (yet: the driver adds .venv)
cp "$root/scripts/e2e/other.nika.yaml" "$art/bare/"
# a Python environment with nika beside its python, for the fake Python extension to offer
ln -s "$(command -v python3)" "$art/fake-env/bin/python"
cp "$art/nika-wrapper" "$art/fake-env/bin/nika"

user_settings() {  # $1: the user-data dir; $2: extra JSON members
  mkdir -p "$1/User"
  cat >"$1/User/settings.json" <<JSON
{
  "workbench.startupEditor": "none",
  "workbench.tips.enabled": false,
  "workbench.welcomePage.walkthroughs.openOnInstall": false,
  "security.workspace.trust.enabled": false,
  "telemetry.telemetryLevel": "off",
  "update.mode": "none",
  "extensions.ignoreRecommendations": true,
  "window.commandCenter": false,
  "editor.minimap.enabled": false,
  "workbench.colorTheme": "Default Light Modern",
  "git.openRepositoryInParentFolders": "never",
  "git.enabled": false,
  "terminal.integrated.gpuAcceleration": "off"$2
}
JSON
}

cs=""
trap '[ -n "$cs" ] && { kill "$cs" 2>/dev/null; wait "$cs" 2>/dev/null || true; }' EXIT
# session NAME WORKSPACE SCENARIO PATH-VALUE VSIX...: install, start code-server, drive it, stop it
session() {
  local name=$1 workspace=$2 scenario=$3 path_value=$4; shift 4
  port=$((port + 1))
  local user="$art/$name-user" exts="$art/$name-extensions"
  mkdir -p "$user" "$exts"
  for vsix in "$@"; do
    "$CODE_SERVER" --user-data-dir "$user" --extensions-dir "$exts" --install-extension "$vsix" >>"$art/install.log" 2>&1 \
      || { cat "$art/install.log" >&2; fail "installing $(basename "$vsix") failed"; }
  done
  log "[$name] starting code-server on 127.0.0.1:$port ($*)"
  PATH=$path_value "$CODE_SERVER" --auth none --disable-workspace-trust --disable-telemetry --disable-update-check \
    --bind-addr "127.0.0.1:$port" --user-data-dir "$user" --extensions-dir "$exts" \
    "$workspace" >"$art/$name-code-server.log" 2>&1 &
  cs=$!
  for _ in $(seq 1 60); do
    curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
    sleep 0.5
  done
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || { cat "$art/$name-code-server.log" >&2; fail "code-server did not start"; }
  local rc=0
  python3 "$root/scripts/e2e/drive.py" --scenario "$scenario" --url "http://127.0.0.1:$port/?folder=$workspace" \
    --chromium "$chromium" --artifacts "$art" --workspace "$workspace" --nika "$art/nika-wrapper" || rc=$?
  kill "$cs" 2>/dev/null; wait "$cs" 2>/dev/null || true; cs=""
  return $rc
}

log "code-server $("$CODE_SERVER" --version | head -1)"
status=0
sessions=" ${E2E_SESSIONS:-main bare debug} "  # a subset by hand: E2E_SESSIONS=debug scripts/vscode-e2e.sh
timings="build+package $((t1 - t0)) s"
if [[ $sessions == *" main "* ]]; then
  t2=$(date +%s)
  user_settings "$art/main-user" ""
  session main "$art/workspace" main "$PATH" "$ext/nika.vsix" || status=1
  timings+=", main session $(( $(date +%s) - t2 )) s"
fi
if [[ $sessions == *" bare "* ]]; then
  t2=$(date +%s)
  # PATH without any nika: the system directories only (python3 and the tools code-server needs are there)
  bare_path=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
  env PATH="$bare_path" sh -c 'command -v nika' >/dev/null && fail "a nika is on $bare_path: the not-found session needs none"
  # the editor also looks in the user's shell environment and the selected interpreter (python3)
  (cd / && env -u PYTHONPATH python3 -c 'import nika.cli' 2>/dev/null) &&
    fail "python3 ($(command -v python3)) has nika-tools installed: the not-found session needs none (python3 -m pip uninstall nika-tools)"
  user_settings "$art/bare-user" ",
  \"fakePython.interpreters\": [\"$(command -v python3)\", \"$art/fake-env/bin/python\"]"
  session bare "$art/bare" bare "$bare_path" "$ext/nika.vsix" "$art/fake-python.vsix" || status=1
  timings+=", bare session $(( $(date +%s) - t2 )) s"
fi
if [[ $sessions == *" debug "* ]]; then
  t2=$(date +%s)
  user_settings "$art/debug-user" ""
  session debug "$art/workspace" debug "$PATH" "$ext/nika.vsix" || status=1
  timings+=", debug session $(( $(date +%s) - t2 )) s"
fi
log "timings: $timings"
log "artifacts: $art"
[ $status -eq 0 ] && log "passed" || log "FAILED"
exit $status
