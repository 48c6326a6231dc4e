--- Review a turn hunk by hunk (issue #28): `:Rewind review [n]` lists turn n's hunks in the quickfix
--- list, ]r / [r jump between the changes recorded turns made to the buffer (saying whose each is),
--- <Plug>(rewind-revert-hunk) reverts the change under the cursor through the server's code action
--- (the same preview, question and restore point as every restore; `:Rewind undo` brings it back).
local async = require('rewind.async')
local rpc = require('rewind.client')
local turns = require('rewind.turns')

local M = {}

M.plugs = {
  { plug = '<Plug>(rewind-next-hunk)', rhs = '<Cmd>lua require("rewind.review").jump(1)<CR>', key = ']r', desc = 'Next change of a turn' },
  { plug = '<Plug>(rewind-prev-hunk)', rhs = '<Cmd>lua require("rewind.review").jump(-1)<CR>', key = '[r', desc = 'Previous change of a turn' },
  { plug = '<Plug>(rewind-revert-hunk)', rhs = '<Cmd>lua require("rewind.review").revert_hunk()<CR>', key = '<Leader>rh', desc = 'Revert the change under the cursor' },
}

--- The text of a sign: the turn's number (two cells at most), so the gutter says which turn it was.
function M.sign_text(number)
  if number == nil then
    return nil
  end
  return tostring(number % 100)
end

--- Who wrote a blame run, in words: a turn (with how: a shell command, or background work the
--- turn left running), your save, an outside change, a restore.
function M.who(run)
  if run.source == 'save' then
    return 'your save'
  elseif run.source == 'outside' then
    return 'outside change'
  elseif run.source == 'restore' then
    return 'restore'
  end
  local how = { shell = ' (shell)', background = ' (background)' }
  return string.format('turn %s%s: %s', tostring(run.number), how[run.source] or '', run.prompt or '')
end

--- The blame runs of `bufnr` that a recorded change wrote (in a coroutine): { start, end, ... } 0-based.
local function changes(client, bufnr)
  local err, res = rpc.request(client, 'rewind/blame', { uri = vim.uri_from_bufnr(bufnr) })
  if err or not res then
    return nil, err and (err.message or tostring(err)) or 'no answer'
  end
  local out = {}
  for _, run in ipairs(res.runs or {}) do
    if run.turnId ~= nil and run.turnId ~= vim.NIL then
      out[#out + 1] = run
    end
  end
  return out
end

--- ]r / [r: to the next (dir 1) or previous (dir -1) change a recorded turn made, and say whose it is.
function M.jump(dir)
  local bufnr = vim.api.nvim_get_current_buf()
  local win = vim.api.nvim_get_current_win()
  async.run(function()
    local client, cerr = rpc.ready_client(bufnr)
    if not client then
      vim.notify('rewind: ' .. tostring(cerr), vim.log.levels.WARN)
      return
    end
    local runs, err = changes(client, bufnr)
    if not runs then
      vim.notify('rewind: ' .. tostring(err), vim.log.levels.WARN)
      return
    end
    local line = vim.api.nvim_win_get_cursor(win)[1] - 1
    local target
    if dir > 0 then
      for _, run in ipairs(runs) do
        if run.start > line then
          target = run
          break
        end
      end
    else
      for i = #runs, 1, -1 do
        if runs[i]['end'] - 1 < line then
          target = runs[i]
          break
        end
      end
    end
    if not target then
      vim.notify('rewind: no ' .. (dir > 0 and 'later' or 'earlier') .. ' change of a turn here', vim.log.levels.INFO)
      return
    end
    if vim.api.nvim_win_is_valid(win) then
      vim.api.nvim_win_set_cursor(win, { target.start + 1, 0 })
    end
    M.last_jump = target
    vim.notify(string.format('rewind: lines %d-%d: %s', target.start + 1, target['end'], M.who(target)), vim.log.levels.INFO)
  end)
end

--- Reverts the change under the cursor: the server's code action "Revert this change (...)".
function M.revert_hunk()
  vim.lsp.buf.code_action({
    apply = true,
    filter = function(action)
      return action.title:find('Revert this change', 1, true) ~= nil
    end,
  })
end

--- `:Rewind review [n]`: turn n's hunks (default: the latest turn) in the quickfix list, one entry per hunk.
function M.review(ref)
  local bufnr = vim.api.nvim_get_current_buf()
  async.run(function()
    local client, cerr = rpc.ready_client(bufnr)
    if not client then
      vim.notify('rewind: ' .. tostring(cerr), vim.log.levels.WARN)
      return
    end
    local turn_id = ref
    if ref == nil or ref == '' then
      local err, list = turns.fetch(client)
      local current = not err and turns.current_turns(list) or {}
      local latest = current[#current]
      if not latest then
        vim.notify('rewind: no turn recorded yet', vim.log.levels.INFO)
        return
      end
      turn_id = latest.id
    end
    local err, res = rpc.request(client, 'rewind/turnHunks', { turnId = tostring(turn_id) })
    if err or not res then
      vim.notify('rewind: ' .. tostring(err and err.message or 'no answer'), vim.log.levels.ERROR)
      return
    end
    local items = {}
    for _, file in ipairs(res.files or {}) do
      local fname = vim.uri_to_fname(file.uri)
      if #file.hunks == 0 then
        items[#items + 1] = { filename = fname, lnum = 1, text = string.format('%s: %s', file.change, file.note or 'whole file') }
      end
      for _, h in ipairs(file.hunks) do
        local first = h.added[1] or ('(removed) ' .. (h.removed[1] or ''))
        items[#items + 1] = {
          filename = fname,
          lnum = h.start + 1,
          text = string.format('hunk %d/%d [%s] -%d +%d: %s', h.index + 1, #file.hunks, h.status, #h.removed, #h.added, vim.trim(first)),
          type = h.revertable and '' or 'W',
        }
      end
    end
    local title = string.format('rewind: turn %d: %s', res.turn.number, res.turn.prompt)
    vim.fn.setqflist({}, ' ', { title = title, items = items })
    if #items > 0 then
      vim.cmd('botright copen')
    end
    M.last_review = { count = #items, turn = res.turn.number }
  end)
end

--- window/showMessage of the rewind-ls client (the outcome of a code action's revert, for one): one
--- line that fits, the full text in `:Rewind last`. Neovim's own handler echoes "LSP[..][Info] msg\n":
--- with that newline every message is two lines and stops at "Press ENTER".
function M.on_show_message(_, params)
  local levels = { vim.log.levels.ERROR, vim.log.levels.WARN, vim.log.levels.INFO, vim.log.levels.DEBUG }
  require('rewind.message').say(params.message or '', nil, levels[params.type] or vim.log.levels.INFO)
  return params
end

return M
