--- `:Rewind log`: the timeline document (`rewind/timeline`: plain text, under a name inside the workspace
--- that is never written to disk) in a read-only buffer, attached to rewind-ls so its code lenses ("Rewind to here",
--- "Revert turn", "Diff") show; <CR> runs the lens on the cursor line.
local config = require('rewind.config')
local rpc = require('rewind.client')

local M = {}

M.ns = vim.api.nvim_create_namespace('rewind.log')

local CHANGE_HL = { created = 'RewindAdded', modified = 'RewindChanged', deleted = 'RewindRemoved' }

--- Colours the timeline's text: turn headings in RewindTitle, each file's change word in RewindAdded,
--- RewindChanged or RewindRemoved.
local function highlight(bufnr)
  vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    local s, word = line:match('^%s+()(%l+)%s')
    if s and CHANGE_HL[word] then
      vim.api.nvim_buf_set_extmark(bufnr, M.ns, i - 1, s - 1, { end_col = s - 1 + #word, hl_group = CHANGE_HL[word] })
    elseif line:match('^  Turn ') or line:match('^  Restore point ') then
      vim.api.nvim_buf_set_extmark(bufnr, M.ns, i - 1, 2, { end_col = #line, hl_group = 'RewindTitle' })
    end
  end
end

local function set_text(bufnr, text)
  local lines = vim.split(text or '', '\n', { plain = true })
  if #lines > 0 and lines[#lines] == '' then
    table.remove(lines)
  end
  local current = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  if vim.deep_equal(current, lines) then
    return
  end
  vim.bo[bufnr].modifiable = true
  vim.bo[bufnr].readonly = false
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modified = false
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].readonly = true
  highlight(bufnr)
end

local function refresh_lenses(bufnr)
  if vim.api.nvim_buf_is_loaded(bufnr) then
    pcall(vim.lsp.codelens.refresh, { bufnr = bufnr })
  end
end

--- Timeline buffers: bufnr -> client id.
M.buffers = {}

--- Opens the timeline (in a coroutine).
function M.open(client)
  local err, res = rpc.request(client, 'rewind/timeline', vim.empty_dict())
  if err then
    return { status = 'error', message = require('rewind.restore').err_message(err), error = err }
  end
  local fname = rpc.normalize(vim.uri_to_fname(res.uri))
  rpc.extra_docs[fname] = client.root_dir and rpc.normalize(client.root_dir) or nil
  vim.cmd((config.options.log_open or 'edit') .. ' ' .. vim.fn.fnameescape(fname))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].swapfile = false
  set_text(bufnr, res.text)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].readonly = true
  vim.bo[bufnr].filetype = 'text'
  vim.lsp.buf_attach_client(bufnr, client.id)
  M.buffers[bufnr] = client.id
  vim.b[bufnr].rewind_log = true
  vim.keymap.set('n', '<CR>', function()
    vim.lsp.codelens.run()
  end, { buffer = bufnr, desc = 'rewind: run the code lens of this line' })
  vim.keymap.set('n', 'R', function()
    M.refresh(bufnr)
  end, { buffer = bufnr, desc = 'rewind: reload the timeline' })
  local group = vim.api.nvim_create_augroup('rewind.log.' .. bufnr, { clear = true })
  vim.api.nvim_create_autocmd({ 'BufEnter', 'CursorHold' }, {
    group = group,
    buffer = bufnr,
    callback = function()
      refresh_lenses(bufnr)
    end,
  })
  vim.api.nvim_create_autocmd('BufWipeout', {
    group = group,
    buffer = bufnr,
    callback = function()
      M.buffers[bufnr] = nil
    end,
  })
  refresh_lenses(bufnr)
  return { status = 'shown', message = 'Timeline: ' .. fname, bufnr = bufnr }
end

--- Fetches the timeline again into `bufnr` and refreshes its lenses (callback style: no coroutine).
function M.refresh(bufnr)
  local client_id = M.buffers[bufnr]
  local client = client_id and vim.lsp.get_client_by_id(client_id)
  if not client or not vim.api.nvim_buf_is_loaded(bufnr) then
    M.buffers[bufnr] = nil
    return
  end
  rpc.call(client, 'request', 'rewind/timeline', vim.empty_dict(), function(err, res)
    if err or not res or not vim.api.nvim_buf_is_loaded(bufnr) then
      return
    end
    set_text(bufnr, res.text)
    refresh_lenses(bufnr)
  end, bufnr)
end

--- Refreshes every timeline buffer of a client (all clients when nil).
function M.refresh_all(client_id)
  for bufnr, id in pairs(M.buffers) do
    if client_id == nil or id == client_id then
      M.refresh(bufnr)
    end
  end
end

return M
