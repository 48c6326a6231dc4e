--- What the plugin says: one line that fits the command line (a second line, or a longer one, makes Neovim
--- ask to "Press ENTER"), the details of the last operation kept for `:Rewind last` (a float).
local M = {}

--- { title, lines } of the last message that had details.
M.last = nil

--- The width a message may take without the hit-enter prompt.
local function room()
  local space = vim.v.echospace
  if type(space) ~= 'number' or space <= 0 then
    space = vim.o.columns - 12
  end
  return math.max(space - 1, 20)
end

--- `summary` cut to one line that fits; `details` (lines) kept for `:Rewind last`.
---@param summary string
---@param details? string[]
---@param level? integer
function M.say(summary, details, level)
  local line = summary:gsub('%s*\n%s*', '; ')
  if (not details or #details == 0) and (line ~= summary or vim.fn.strdisplaywidth(line) > room()) then
    -- A long or multi-line text (e.g. the server's list of conflicts) stays readable in full.
    details = vim.split(summary, '\n', { plain = true })
  end
  local suffix = ''
  if details and #details > 0 then
    M.last = { title = line, lines = details, level = level }
    suffix = ' (:Rewind last)'
  end
  local max = room() - vim.fn.strdisplaywidth(suffix)
  if vim.fn.strdisplaywidth(line) > max then
    line = vim.fn.strcharpart(line, 0, math.max(max - 1, 10)) .. '…'
  end
  vim.notify(line .. suffix, level or vim.log.levels.INFO, { title = 'rewind' })
end

--- Like vim.notify(msg, level), kept to one line.
function M.notify(msg, level)
  M.say(msg, nil, level)
end

--- `:Rewind last`: the details of the last operation in a float (q or <Esc> closes it).
function M.show_last()
  if not M.last then
    vim.notify('rewind: nothing to show yet', vim.log.levels.INFO)
    return
  end
  local lines = vim.list_extend({ M.last.title, '' }, M.last.lines)
  local buf = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].filetype = 'rewindlast'
  local width = 20
  for _, l in ipairs(lines) do
    width = math.max(width, vim.fn.strdisplaywidth(l))
  end
  width = math.min(width + 2, vim.o.columns - 4)
  local height = math.min(#lines, math.max(vim.o.lines - 6, 3))
  local win = vim.api.nvim_open_win(buf, true, {
    relative = 'editor',
    width = width,
    height = height,
    row = math.floor((vim.o.lines - height) / 2) - 1,
    col = math.floor((vim.o.columns - width) / 2),
    style = 'minimal',
    border = 'rounded',
    title = ' rewind ',
  })
  vim.wo[win].wrap = true
  local ns = vim.api.nvim_create_namespace('rewind.last')
  -- A warning (conflicts) or an error shows its title in RewindConflict, anything else in RewindTitle.
  local warned = (M.last.level or vim.log.levels.INFO) >= vim.log.levels.WARN
  local title_hl = warned and 'RewindConflict' or 'RewindTitle'
  vim.api.nvim_buf_set_extmark(buf, ns, 0, 0, { end_row = 0, end_col = #lines[1], hl_group = title_hl })
  for _, key in ipairs({ 'q', '<Esc>' }) do
    vim.keymap.set('n', key, '<Cmd>close<CR>', { buffer = buf, nowait = true, desc = 'close' })
  end
  return win
end

return M
