--- The turn picker. With Neovim's own vim.ui.select (a numbered inputlist), the numbers would be the rows'
--- (typing 1 picks the newest turn, #3): the list is shown with the turns' own numbers and the answer is
--- a turn number. A picker plugin (telescope, fzf-lua, ...) gets the entries through vim.ui.select.
local async = require('rewind.async')
local turns = require('rewind.turns')

local M = {}

--- Whether vim.ui.select is Neovim's built-in one (no picker plugin replaced it).
function M.builtin_select()
  local info = debug.getinfo(vim.ui.select, 'S')
  return info ~= nil and info.source ~= nil and info.source:find('vim/ui.lua', 1, true) ~= nil
end

--- The turn of `items` whose number the person types (empty or unknown: nil).
function M.ask_number(items, prompt)
  local lines = { prompt }
  local by_number = {}
  for _, t in ipairs(items) do
    lines[#lines + 1] = turns.label(t)
    by_number[tostring(t.number)] = t
  end
  local answer = async.await(function(cb)
    vim.schedule(function()
      local ok, typed = pcall(vim.fn.input, {
        prompt = table.concat(lines, '\n') .. '\nTurn number (empty cancels): ',
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
function M.select_turn(items, prompt)
  if M.builtin_select() then
    return M.ask_number(items, prompt)
  end
  return async.select(items, { prompt = prompt, kind = 'rewind.turn', format_item = turns.label })
end

return M
