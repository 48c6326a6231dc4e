--- `:Rewind changes [n]`: what turn n changed, like a commit: one tab per file it changed, the file before
--- the turn (left) against after it (right), both read-only scratch buffers from `rewind/fileAt`, whatever
--- later turns or the person did since (`:Rewind diff` compares with now).
local rpc = require('rewind.client')

local M = {}

local to_lines = require('rewind.diff').to_lines

--- A read-only scratch buffer named `name` holding `lines`, in the current window, in diff mode.
local function scratch(name, lines, ft)
  local old = vim.fn.bufnr('^' .. vim.fn.escape(name, '\\/.*$^~[]') .. '$')
  if old > 0 then
    pcall(vim.api.nvim_buf_delete, old, { force = true })
  end
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.api.nvim_buf_set_name(buf, name)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  if ft and ft ~= '' then
    vim.bo[buf].filetype = ft
  end
  vim.cmd('diffthis')
  return buf
end

--- The file's text on `side` of the turn: lines, or nil and a reason.
local function side_text(client, turn, file, side)
  if (side == 'before' and file.change == 'created') or (side == 'after' and file.change == 'deleted') then
    return {}
  end
  local err, res = rpc.request(client, 'rewind/fileAt', { turnId = turn.id, uri = file.uri, side = side })
  if err then
    return nil, require('rewind.restore').err_message(err)
  end
  if res.binary then
    return nil, 'binary: no text diff'
  elseif res.tooLarge then
    return nil, 'too large to record'
  end
  return res.exists and to_lines(res.text) or {}
end

--- Opens the tabs (in a coroutine). Returns the outcome table.
function M.run(client, turn)
  local files = turn.files or {}
  if #files == 0 then
    return { status = 'error', message = string.format('turn #%d changed no file', turn.number) }
  end
  local shown, skipped = {}, {}
  for _, f in ipairs(files) do
    local before, why = side_text(client, turn, f, 'before')
    local after, why2 = nil, nil
    if before then
      after, why2 = side_text(client, turn, f, 'after')
    end
    if not (before and after) then
      skipped[#skipped + 1] = string.format('%s (%s)', f.path, why or why2)
    else
      local ft = vim.filetype.match({ filename = f.path }) or ''
      vim.cmd('tabnew')
      local left = scratch(string.format('rewind://%d/before/%s', turn.number, f.path), before, ft)
      vim.cmd('rightbelow vnew')
      local right = scratch(string.format('rewind://%d/after/%s', turn.number, f.path), after, ft)
      vim.t.rewind_changes = { turn = turn.id, number = turn.number, path = f.path, before = left, after = right }
      shown[#shown + 1] = f.path
    end
  end
  local msg = string.format('Turn #%d changed %d file(s): one tab each, before (left) | after (right): %s', turn.number, #shown, table.concat(shown, ', '))
  if #skipped > 0 then
    msg = msg .. '; no diff for ' .. table.concat(skipped, ', ')
  end
  return { status = #shown > 0 and 'shown' or 'error', message = msg, files = shown }
end

return M
