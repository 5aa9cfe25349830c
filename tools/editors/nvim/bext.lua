-- bext.lua — Neovim set-up for .bext files: the filetype and bext-lsp.
-- Written for the Neovim Debian 12 ships (0.7: vim.lsp.start_client and
-- buf_attach_client); newer versions take the same file (vim.lsp.start is
-- used when it exists).  No plugins needed.  Load it from init.lua:
--     dofile('/path/to/bext/tools/editors/nvim/bext.lua')
-- or copy it to ~/.config/nvim/plugin/bext.lua.
-- `bext-lsp` must be on PATH (make install), or set vim.g.bext_lsp_cmd to
-- a list: { '/path/to/build/bin/bext-lsp', '-I', 'some/dir' }.

vim.cmd([[autocmd BufRead,BufNewFile *.bext setlocal filetype=bext]])

-- One client per project root (the nearest directory with .git, else the
-- file's own directory).
local clients = {}

local function root_of(path)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  local git = vim.fn.finddir('.git', dir .. ';')
  if git ~= '' then return vim.fn.fnamemodify(git, ':p:h:h') end
  return dir
end

local function on_attach(client, bufnr)
  local opts = { buffer = bufnr }
  -- vim.keymap.set exists from 0.7
  vim.keymap.set('n', 'gd', vim.lsp.buf.definition, opts)
  vim.keymap.set('n', 'K', vim.lsp.buf.hover, opts)
  vim.bo[bufnr].omnifunc = 'v:lua.vim.lsp.omnifunc'
end

local function start(bufnr)
  local root = root_of(vim.api.nvim_buf_get_name(bufnr))
  local config = {
    name = 'bext-lsp',
    cmd = vim.g.bext_lsp_cmd or { 'bext-lsp' },
    root_dir = root,
    on_attach = on_attach,
  }
  if vim.lsp.start then
    vim.lsp.start(config, { bufnr = bufnr })
    return
  end
  local id = clients[root]
  if not id or not vim.lsp.get_client_by_id(id) then
    id = vim.lsp.start_client(config)
    clients[root] = id
  end
  if id then vim.lsp.buf_attach_client(bufnr, id) end
end

vim.cmd([[autocmd FileType bext lua BextLspStart(vim.api.nvim_get_current_buf())]])
function BextLspStart(bufnr) start(bufnr) end
