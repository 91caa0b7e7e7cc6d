-- Headless Neovim client for `nika lsp` (works with Neovim 0.7+).
-- Opens $NIKA_FILE, attaches the server started by $NIKA_CMD (default: `nika lsp`),
-- waits for diagnostics and prints them one per line as `line:col CODE message`.
local file = assert(vim.env.NIKA_FILE, "set NIKA_FILE")
local cmd = vim.split(vim.env.NIKA_CMD or "nika lsp", " ", { trimempty = true })
vim.cmd("edit " .. vim.fn.fnameescape(file))
local buf = vim.api.nvim_get_current_buf()
local client = vim.lsp.start_client({ name = "nika", cmd = cmd, root_dir = vim.fn.getcwd() })
vim.lsp.buf_attach_client(buf, client)
local got = vim.wait(15000, function() return #vim.diagnostic.get(buf) > 0 end, 50)
local out = io.stdout
if not got then
  out:write("no diagnostics received\n")
else
  for _, d in ipairs(vim.diagnostic.get(buf)) do
    out:write(string.format("%d:%d %s %s\n", d.lnum + 1, d.col + 1, tostring(d.code or ""), d.message))
  end
end
vim.lsp.stop_client(client)
vim.cmd("qa!")
