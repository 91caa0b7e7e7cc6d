#!/usr/bin/env bash
# End-to-end test of the VS Code extension in a real VS Code (code-server) driven by headless Chromium:
# builds the .vsix, installs it, opens a workflow with a mistake, checks the Problems panel, applies
# the quick fix, opens the task graph and checks its nodes. Screenshots and logs go to
# vscode-extension/e2e-artifacts/ (gitignored).
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

rm -rf "$art" && mkdir -p "$art"/{user,extensions,workspace/.vscode}
t0=$(date +%s)
log "building the extension"
(cd "$ext" && { [ -d node_modules ] || npm ci --no-audit --no-fund --loglevel=error; } && npm run -s package >"$art/package.log" 2>&1) \
  || { cat "$art/package.log" >&2; fail "npm run package failed"; }
t1=$(date +%s)
log "installing nika.vsix into code-server ($("$CODE_SERVER" --version | head -1))"
"$CODE_SERVER" --user-data-dir "$art/user" --extensions-dir "$art/extensions" --install-extension "$ext/nika.vsix" >"$art/install.log" 2>&1 \
  || { cat "$art/install.log" >&2; fail "installing the vsix failed"; }

cat >"$art/nika-wrapper" <<WRAP
#!/bin/sh
PYTHONPATH="$root\${PYTHONPATH:+:\$PYTHONPATH}" exec python3 -m nika "\$@"
WRAP
chmod +x "$art/nika-wrapper"
cp "$root/scripts/e2e/release-notes.nika.yaml" "$root/scripts/e2e/other.nika.yaml" "$art/workspace/"
python3 "$root/scripts/e2e/big_workflow.py" 2000 >"$art/workspace/big.nika.yaml"
cat >"$art/workspace/.vscode/settings.json" <<JSON
{ "nika.path": "$art/nika-wrapper", "nika.trace.server": "messages" }
JSON
mkdir -p "$art/user/User"
cat >"$art/user/User/settings.json" <<'JSON'
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
  "terminal.integrated.gpuAcceleration": "off"
}
JSON

log "starting code-server on 127.0.0.1:$port"
"$CODE_SERVER" --auth none --disable-workspace-trust --disable-telemetry --disable-update-check \
  --bind-addr "127.0.0.1:$port" --user-data-dir "$art/user" --extensions-dir "$art/extensions" \
  "$art/workspace" >"$art/code-server.log" 2>&1 &
cs=$!
trap 'kill "$cs" 2>/dev/null; wait "$cs" 2>/dev/null || true' EXIT
for _ in $(seq 1 60); do
  curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1 && break
  sleep 0.5
done
curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null || { cat "$art/code-server.log" >&2; fail "code-server did not start"; }

t2=$(date +%s)
status=0
python3 "$root/scripts/e2e/drive.py" --url "http://127.0.0.1:$port/?folder=$art/workspace" \
  --chromium "$chromium" --artifacts "$art" || status=$?
t3=$(date +%s)
log "timings: build+package $((t1 - t0)) s, browser session $((t3 - t2)) s"
log "artifacts: $art"
exit $status
