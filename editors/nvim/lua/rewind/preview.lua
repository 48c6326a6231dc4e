--- The preview before every restore (`confirm = true`, the default): one vim.ui.select whose entries name
--- the files (action, +/- lines, a conflict's reason); picking a file shows its diff in a new tab (now |
--- after the restore) and asks again; nothing is written until the first entry is picked.
local async = require('rewind.async')
local rpc = require('rewind.client')

local M = {}

--- "modify a.txt (+1 -1)", "delete b.txt", "a.txt: <conflict reason>".
function M.entry_label(f)
  if type(f.conflict) == 'table' then
    local why = f.conflict.message or f.conflict.kind or 'conflict'
    return vim.startswith(why, f.path) and ('conflict ' .. why) or string.format('conflict %s: %s', f.path, why)
  end
  local stat = f.binary and 'binary' or string.format('+%d -%d', f.added or 0, f.removed or 0)
  return string.format('%s %s (%s)', f.action, f.path, stat)
end

--- The text a restore writes to `f`, from the server (`rewind/fileAt` of `turn_id`, `side`).
local function fetch(client, turn_id, f, side)
  if f.action == 'delete' and side == 'before' then
    return {}
  end
  local err, res = rpc.request(client, 'rewind/fileAt', { turnId = turn_id, uri = f.uri, side = side })
  if err or not res or not res.exists or res.text == nil or res.text == vim.NIL then
    return {}
  end
  local lines = vim.split(res.text, '\n', { plain = true })
  if lines[#lines] == '' then
    table.remove(lines)
  end
  return lines
end

--- A new tab: the file now (left) and what the restore writes (right, a scratch buffer), in diff mode.
function M.show_diff(client, turn_id, f, side, label)
  local lines = fetch(client, turn_id, f, side)
  vim.cmd('tabnew ' .. vim.fn.fnameescape(vim.uri_to_fname(f.uri)))
  vim.cmd('diffthis')
  vim.cmd('rightbelow vnew')
  local b = vim.api.nvim_get_current_buf()
  vim.bo[b].buftype = 'nofile'
  vim.bo[b].bufhidden = 'wipe'
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.bo[b].modifiable = false
  pcall(vim.api.nvim_buf_set_name, b, string.format('rewind://%s (%s)', f.path, label))
  vim.cmd('diffthis')
end

--- Asks before a restore. `verb` names the first entry ("Rewind", "Revert", "Undo"); `turn_id`/`side`
--- say where the diff's right side comes from. With conflicts the question is asked here, in the same
--- list (whatever `confirm` says): every file, the conflicting ones marked, and "Skip conflicting files" /
--- "Overwrite conflicting files" in place of the one restore entry; `question` is then the prompt (what
--- the conflicts are). `choices` ({ label, go } entries) replace those first entries (a revert whose changes
--- overlap later edits). Returns the `go` of the entry picked ({} without conflicts; skipConflicts or
--- force), or nil.
function M.confirm(client, title, verb, files, turn_id, side, question, choices)
  local shown = {}
  local conflicts = 0
  for _, f in ipairs(files or {}) do
    if f.action ~= 'unchanged' or type(f.conflict) == 'table' then
      shown[#shown + 1] = f
      if type(f.conflict) == 'table' then
        conflicts = conflicts + 1
      end
    end
  end
  -- The diff tabs this preview opened: closed when the question is answered, back to where it started.
  local start_tab = vim.api.nvim_get_current_tabpage()
  local opened = {}
  local function close_diffs()
    for _, tab in ipairs(opened) do
      if vim.api.nvim_tabpage_is_valid(tab) and #vim.api.nvim_list_tabpages() > 1 then
        pcall(vim.cmd, 'tabclose ' .. vim.api.nvim_tabpage_get_number(tab))
      end
    end
    if vim.api.nvim_tabpage_is_valid(start_tab) then
      vim.api.nvim_set_current_tabpage(start_tab)
    end
  end
  local function n_files(n)
    return string.format('%d file%s', n, n == 1 and '' or 's')
  end
  while true do
    local items = {}
    if choices then
      vim.list_extend(items, choices)
    elseif conflicts == 0 then
      items[1] = { go = {}, label = string.format('%s %s (nothing is written before this)', verb, n_files(#shown)) }
    else
      if #shown > conflicts then
        items[#items + 1] = {
          go = { skipConflicts = true },
          label = string.format('Skip conflicting files: %s the other %s, leave the conflicts as they are', verb:lower(), n_files(#shown - conflicts)),
        }
      end
      items[#items + 1] = {
        go = { force = true },
        label = string.format('Overwrite conflicting files: %s all %s (:Rewind undo brings them back)', verb:lower(), n_files(#shown)),
      }
    end
    for _, f in ipairs(shown) do
      items[#items + 1] = { file = f, label = M.entry_label(f) }
    end
    items[#items + 1] = { label = 'Cancel' }
    local choice = async.select(items, {
      prompt = (conflicts > 0 and question or title) .. ' (pick a file to see its diff)',
      kind = conflicts > 0 and 'rewind.conflicts' or 'rewind.preview',
      format_item = function(c)
        return c.label
      end,
    })
    if not choice or (not choice.go and not choice.file) then
      close_diffs()
      return nil
    end
    if choice.go then
      close_diffs()
      return choice.go
    end
    if turn_id then
      M.show_diff(client, turn_id, choice.file, side, side == 'after' and 'the turn' or 'after the restore')
      opened[#opened + 1] = vim.api.nvim_get_current_tabpage()
      -- Drawn now, before the question comes back (the default select blocks the screen until answered).
      vim.cmd('redraw')
    end
  end
end

return M
