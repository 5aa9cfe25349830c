-- nvim_session.lua — a real editor on bext-lsp: headless Neovim with the
-- shipped configuration (tools/editors/nvim/bext.lua) opens a file with an
-- error, receives the diagnostic, then jumps to a definition in another
-- file.  Run by ctest (tests/lsp/CMakeLists.txt):
--   BEXT_LSP=<bext-lsp> BEXT_NVIM_CONFIG=<bext.lua> nvim --headless -u NONE -i NONE -n -c 'luafile nvim_session.lua'
-- Exit 0 on success; on failure `cquit 1` after saying why on stderr.

local function fail(msg)
  io.stderr:write('nvim_session: ' .. msg .. '\n')
  vim.cmd('cquit 1')
end

local ok, err = pcall(function()
  local dir = vim.fn.tempname()
  vim.fn.mkdir(dir, 'p')
  vim.fn.writefile({ '/// Triple it.', 'pub fn triple(x: u32) -> u32 { x * 3 }' }, dir .. '/lib.bext')
  vim.fn.writefile({ 'use lib::triple;', 'fn g(x: u32) -> u32 { triple(x) + y }' }, dir .. '/main.bext')

  vim.g.bext_lsp_cmd = { os.getenv('BEXT_LSP') }
  dofile(os.getenv('BEXT_NVIM_CONFIG'))
  vim.cmd('edit ' .. dir .. '/main.bext')
  if vim.bo.filetype ~= 'bext' then return fail('filetype is "' .. vim.bo.filetype .. '", not bext') end

  -- the diagnostic for `y`: line 2 (0-based 1), column 34
  local got = vim.wait(15000, function() return #vim.diagnostic.get(0) > 0 end, 50)
  if not got then return fail('no diagnostics within 15 s') end
  local d = vim.diagnostic.get(0)[1]
  if d.lnum ~= 1 or d.col ~= 34 then return fail(('diagnostic at %d:%d, expected 1:34'):format(d.lnum, d.col)) end
  if not d.message:find('`y`', 1, true) then return fail('diagnostic message: ' .. d.message) end
  if d.severity ~= vim.diagnostic.severity.ERROR then return fail('not an error') end

  -- go to the definition of `triple` (line 2, column 23, 1-based)
  vim.api.nvim_win_set_cursor(0, { 2, 23 })
  vim.lsp.buf.definition()
  local jumped = vim.wait(15000, function()
    return vim.api.nvim_buf_get_name(0):match('lib%.bext$') ~= nil
  end, 50)
  if not jumped then return fail('definition did not open lib.bext') end
  local pos = vim.api.nvim_win_get_cursor(0)
  if pos[1] ~= 2 or pos[2] ~= 7 then return fail(('definition at %d:%d, expected 2:7'):format(pos[1], pos[2])) end

  for _, c in pairs(vim.lsp.get_active_clients()) do c.stop() end
  vim.fn.delete(dir, 'rf')
  vim.cmd('qall!')
end)
if not ok then fail(tostring(err)) end
