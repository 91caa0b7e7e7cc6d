#!/usr/bin/env bash
# Attach `nika lsp` to a workflow in a real (headless) Neovim and print the diagnostics it receives.
# Usage: scripts/nvim-lsp-check.sh FILE.nika.yaml   (needs `nvim` on PATH and `nika` installed)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
NIKA_FILE=$1 NIKA_CMD=${NIKA_CMD:-nika lsp} nvim --headless -u NONE -i NONE -n -c "luafile $here/nvim-lsp-check.lua"
