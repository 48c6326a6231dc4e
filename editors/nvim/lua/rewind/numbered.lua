--- The turn picker. With Neovim's own vim.ui.select (a numbered inputlist), the numbers would be the rows'
--- (typing 1 picks the newest turn, #3): the list is shown with the turns' own numbers and the answer is
--- a turn number. A picker plugin (telescope, fzf-lua, ...) gets the entries through vim.ui.select.
local async = require('rewind.async')
local turns = require('rewind.turns')

local M = {}

--- What select_turn answers when the person asks for the next older page of turns.
M.OLDER = { older = true }

--- Whether vim.ui.select is Neovim's built-in one (no picker plugin replaced it).
function M.builtin_select()
  local info = debug.getinfo(vim.ui.select, 'S')
  return info ~= nil and info.source ~= nil and info.source:find('vim/ui.lua', 1, true) ~= nil
end

--- The turn of `items` whose number the person types (empty or unknown: nil); `older_label`: a line
--- "o  <label>" offering the next older page (answer: M.OLDER).
function M.ask_number(items, prompt, older_label, here_id)
  local lines = { prompt }
  local by_number = {}
  local restores = 0
  for _, t in ipairs(items) do
    if t.sessionKind == 'rewind' then
      -- A restore point's number is not a turn's: typed as r1 (the newest), r2, ...
      restores = restores + 1
      local key = 'r' .. restores
      lines[#lines + 1] = key .. ' ' .. turns.label(t, here_id)
      by_number[key] = t
    else
      lines[#lines + 1] = turns.label(t, here_id)
      by_number[tostring(t.number)] = t
    end
  end
  if older_label then
    lines[#lines + 1] = 'o  ' .. older_label
    by_number['o'] = M.OLDER
  end
  local answer = async.await(function(cb)
    vim.schedule(function()
      local ok, typed = pcall(vim.fn.input, {
        prompt = table.concat(lines, '\n') .. (restores > 0 and '\nTurn number, or r1.. to undo a restore (empty cancels): ' or '\nTurn number (empty cancels): '),
        cancelreturn = '',
      })
      vim.cmd('redraw')
      cb(ok and typed or '')
    end)
  end)
  local n = (answer or ''):gsub('^%s*#?', ''):gsub('%s*$', '')
  return by_number[n]
end

--- A turn of `items` (newest first), picked by its own number or through the picker plugin.
--- `older_label`: also offer the next older page (the answer is then M.OLDER).
--- `here_id`: the row marked "you are here".
function M.select_turn(items, prompt, older_label, here_id)
  if M.builtin_select() then
    return M.ask_number(items, prompt, older_label, here_id)
  end
  local entries = items
  if older_label then
    entries = vim.list_extend(vim.list_slice(items), { M.OLDER })
  end
  return async.select(entries, {
    prompt = prompt,
    kind = 'rewind.turn',
    format_item = function(item)
      if item == M.OLDER then
        return older_label
      end
      return turns.label(item, here_id)
    end,
  })
end

return M
