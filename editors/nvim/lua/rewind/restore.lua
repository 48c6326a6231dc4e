--- Restores: preview, the conflict prompt, `rewind/restore` / `rewind/undo`, then writing the buffers
--- that were unmodified before and showing what the server reports.
---
--- The edit itself arrives as `workspace/applyEdit` while the request runs; Neovim's default handler
--- applies it with the client's negotiated position encoding. The server then checks what the buffers
--- hold (a stale-version edit that Neovim skips is reported as failed), so this module never decides
--- on its own that a restore worked: it shows `status`, `message` and `failed` as they come.
local async = require('rewind.async')
local config = require('rewind.config')
local rpc = require('rewind.client')

local M = {}

local levels = vim.log.levels

local say = require('rewind.message').say

--- A one-line message (details, when given, go to `:Rewind last`).
local function notify(summary, level, details)
  say(summary, details, level)
end
M.notify = notify

--- Loaded buffers by normalized file name.
local function buffers_by_name()
  local out = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) then
      local name = vim.api.nvim_buf_get_name(b)
      if name ~= '' and not name:match('^%a[%w+.-]*://') then
        out[rpc.normalize(name)] = b
      end
    end
  end
  return out
end

--- Which buffers were modified before the request.
local function snapshot()
  local snap = {}
  for name, b in pairs(buffers_by_name()) do
    snap[name] = { bufnr = b, modified = vim.bo[b].modified }
  end
  return snap
end

--- "a.txt: changed since …" per conflicting file (the server's message often names the path already).
local function conflict_lines(files)
  local lines = {}
  for _, f in ipairs(files or {}) do
    if type(f.conflict) == 'table' then
      local why = f.conflict.message or f.conflict.kind or 'conflict'
      lines[#lines + 1] = vim.startswith(why, f.path) and why or string.format('%s: %s', f.path, why)
    end
  end
  return lines
end
M.conflict_lines = conflict_lines

local function paths_with_conflicts(files)
  local out = {}
  for _, f in ipairs(files or {}) do
    if type(f.conflict) == 'table' then
      out[#out + 1] = f.path
    end
  end
  return out
end

--- The prompt's headline: what the conflicts are ("changed since rewind-ls last saw" only when true).
local function conflict_headline(title, files, count)
  local unseen = true
  for _, f in ipairs(files or {}) do
    if type(f.conflict) == 'table' and f.conflict.kind ~= 'modified-outside' then
      unseen = false
    end
  end
  local lines = conflict_lines(files)
  local head = unseen
      and string.format(
        '%s: %d file%s changed since rewind-ls last saw %s',
        title,
        count,
        count == 1 and '' or 's',
        count == 1 and 'it' or 'them'
      )
    or string.format('%s would overwrite later changes in %d file%s', title, count, count == 1 and '' or 's')
  -- The names and reasons belong in the question itself, not after the answer.
  return head .. ':\n  ' .. table.concat(lines, '\n  ') .. '\n'
end

--- A revert whose changes overlap later edits: conflict markers, or rewind those files; never an
--- overwrite (the server refuses it). Asked inside the revert's preview: every file of the turn listed,
--- the overlapping ones marked, each answer saying what it does to the others. Returns
--- { opts = { merge = true } }, { rewind = {...uris}, opts = { force = true } } or nil; and whether
--- there were overlaps.
local function ask_merge(client, title, files, number, turn_id)
  local uris, names = {}, {}
  local all = 0
  for _, f in ipairs(files or {}) do
    if f.action ~= 'unchanged' or type(f.conflict) == 'table' then
      all = all + 1
    end
    if type(f.conflict) == 'table' and f.conflict.kind == 'merge' then
      uris[#uris + 1] = f.uri
      names[#names + 1] = f.path
    end
  end
  if #uris == 0 then
    return nil, false
  end
  local which = #names == 1 and names[1] or 'those files'
  local others = all - #names
  local choices = {
    {
      label = string.format(
        'Write the revert of all %d file%s with conflict markers in %s (<<<<<<< now / >>>>>>> before turn #%d), resolve, :w',
        all,
        all == 1 and '' or 's',
        table.concat(names, ', '),
        number
      ),
      go = { opts = { merge = true } },
    },
    {
      label = string.format(
        'Rewind %s to before turn #%d instead (drops the later edits in it)%s',
        which,
        number,
        others > 0 and string.format("; the turn's other %d file%s stay as they are", others, others == 1 and '' or 's') or ''
      ),
      go = { rewind = uris, opts = { force = true } },
    },
  }
  local question = string.format(
    "%s: later edits overlap turn #%d's changes:\n  %s\n",
    title,
    number,
    table.concat(conflict_lines(files), '\n  ')
  )
  local choice = require('rewind.preview').confirm(client, title, 'Revert', files, turn_id, 'before', question, choices)
  return choice, true
end
M.ask_merge = ask_merge

--- After a revert with conflict markers: every `<<<<<<<` line of the marked files in the quickfix list
--- (opened), and a message saying what to do next.
function M.list_markers(result)
  if type(result) ~= 'table' then
    return
  end
  local items, names = {}, {}
  for _, f in ipairs(result.files or {}) do
    if (f.markers or 0) > 0 then
      names[#names + 1] = f.path
      local fname = vim.uri_to_fname(f.uri)
      local b = vim.fn.bufnr(fname)
      local lines = (b > 0 and vim.api.nvim_buf_is_loaded(b)) and vim.api.nvim_buf_get_lines(b, 0, -1, false)
        or vim.fn.readfile(fname)
      for i, line in ipairs(lines) do
        if vim.startswith(line, '<<<<<<< ') then
          items[#items + 1] = { filename = fname, lnum = i, col = 1, text = 'conflict: ' .. line }
        end
      end
    end
  end
  if #items == 0 then
    return
  end
  vim.fn.setqflist({}, ' ', { title = 'rewind: conflict markers', items = items })
  vim.cmd('botright copen')
  notify(string.format('%s: resolve the conflict markers, then :w', table.concat(names, ', ')), levels.WARN, {
    'Conflict markers in ' .. table.concat(names, ', ') .. ' (listed in the quickfix window):',
    '  keep "now" or "before the turn" (or both) in each <<<<<<< ... >>>>>>> block, delete the markers, :w.',
    ':Rewind undo takes the revert back.',
  })
end

--- Shows the conflicts and asks what to do, inside the preview (every file listed, the conflicts
--- marked; `turn_id`: where a file's diff comes from). Returns the options to send, or nil (cancelled).
local function ask_conflicts(client, title, verb, files, count, turn_id)
  notify(
    string.format('%s: %d conflict%s: %s', title, count, count == 1 and '' or 's', table.concat(paths_with_conflicts(files), ', ')),
    levels.WARN,
    conflict_lines(files)
  )
  local question = conflict_headline(title, files, count)
  return require('rewind.preview').confirm(client, title, verb, files, turn_id, 'before', question)
end

local function set_register(reg, value)
  if reg and reg ~= '' and value and value ~= '' then
    vim.fn.setreg(reg, value)
  end
end

--- The files a restore changed: not unchanged, not failed, not a conflict it was told to skip.
local function restored_files(result, skipped_conflicts)
  local failed = {}
  for _, p in ipairs(result.failed or {}) do
    failed[p] = true
  end
  local out = {}
  if result.status == 'conflict' then
    return out
  end
  for _, f in ipairs(result.files or {}) do
    if f.action ~= 'unchanged' and not failed[f.path] and not (skipped_conflicts and type(f.conflict) == 'table') then
      out[#out + 1] = f
    end
  end
  return out
end

--- After the server answered: write every buffer the restore changed, so buffer and disk agree (no false
--- conflict later). A buffer that had unsaved edits is written too: `u` brings the edits back (they are
--- listed in `kept`). Buffers of files the server wrote itself are reloaded.
local function settle_buffers(result, before, skipped_conflicts)
  local now = buffers_by_name()
  local written, kept, write_errors = {}, {}, {}
  local by_server = {}
  for _, p in ipairs(result.writtenByServer or {}) do
    by_server[p] = true
  end
  for _, f in ipairs(restored_files(result, skipped_conflicts)) do
    local fname = f.uri and rpc.normalize(vim.uri_to_fname(f.uri))
    local b = fname and now[fname]
    if b and vim.api.nvim_buf_is_valid(b) then
      local prev = before[fname]
      local was_modified = prev and prev.modified
      if vim.bo[b].modified and f.action ~= 'delete' and (config.options.write_unmodified or was_modified) then
        local ok, err = pcall(vim.api.nvim_buf_call, b, function()
          vim.cmd('silent keepalt keepjumps write')
        end)
        if ok then
          written[#written + 1] = f.path
          if was_modified then
            kept[#kept + 1] = f.path
          end
        else
          write_errors[#write_errors + 1] = string.format('%s: %s', f.path, err)
        end
      elseif by_server[f.path] or not was_modified then
        -- The server may have written the file itself (binary, closed): show the new disk content.
        pcall(vim.cmd, 'silent! checktime ' .. b)
      end
    end
  end
  return written, kept, write_errors
end

--- An undo's unsaved texts put back (rewind.unsaved); `kept` minus those (their edits are back unsaved,
--- not one `u` away).
local function restore_unsaved(client, result, kept, write_errors)
  local unsaved = require('rewind.unsaved')
  local _, errors = unsaved.restore(client, result)
  vim.list_extend(write_errors, errors)
  local back = unsaved.paths(result)
  return vim.tbl_filter(function(p)
    return not back[p]
  end, kept)
end

local ACTION_WORD = { create = 'recreated', delete = 'deleted' }

--- "a.txt (u: your edits), c.txt (deleted)": `kept` lists the files that had unsaved edits.
local function files_text(files, kept, back)
  local had_edits = {}
  for _, p in ipairs(kept or {}) do
    had_edits[p] = true
  end
  back = back or {}
  local names = {}
  for _, f in ipairs(files) do
    local note = ACTION_WORD[f.action]
      or (back[f.path] and 'unsaved, as before')
      or (had_edits[f.path] and 'u: your edits')
    names[#names + 1] = note and string.format('%s (%s)', f.path, note) or f.path
  end
  return table.concat(names, ', ')
end

local function show_result(title, result, kept, write_errors, scope, skipped_conflicts)
  local status = result.status
  local level = levels.INFO
  if status == 'partial' or status == 'failed' or #write_errors > 0 then
    level = levels.ERROR
  elseif status == 'conflict' then
    level = levels.WARN
  end
  local restored = restored_files(result, skipped_conflicts)
  local unsaved_back = require('rewind.unsaved').paths(result)
  local summary = { string.format('%s: %s', title, result.message or status) }
  local details = {}
  if scope ~= 'conversation' and status ~= 'conflict' then
    if #restored > 0 then
      summary = { string.format('%s: restored %s', title, files_text(restored, kept, unsaved_back)) }
      details[#details + 1] = 'Restored: ' .. files_text(restored)
    elseif status == 'nothing-to-do' or status == 'applied' then
      summary = { string.format('%s: nothing to restore, every file already matches', title) }
    end
  end
  local back = vim.tbl_keys(unsaved_back)
  if status ~= 'conflict' and #back > 0 then
    table.sort(back)
    details[#details + 1] = 'Unsaved edits brought back, not written (the disk holds what was saved before): '
      .. table.concat(back, ', ')
  end
  if result.failed and #result.failed > 0 then
    summary[#summary + 1] = 'NOT restored: ' .. table.concat(result.failed, ', ')
    details[#details + 1] = 'Not restored: ' .. table.concat(result.failed, ', ')
  end
  if status == 'conflict' then
    vim.list_extend(details, conflict_lines(result.files))
  end
  for _, e in ipairs(write_errors) do
    summary[#summary + 1] = 'could not write ' .. e
    details[#details + 1] = 'Could not write ' .. e
  end
  if #kept > 0 then
    details[#details + 1] = 'Had unsaved edits (restored and written; u in the buffer brings the edits back): '
      .. table.concat(kept, ', ')
  end
  local regs = config.options.registers or {}
  local conv = result.conversation
  if type(conv) == 'table' then
    local where = {}
    if regs.resume and regs.resume ~= '' then
      set_register(regs.resume, conv.resumeCommand)
      where[#where + 1] = string.format('register "%s', regs.resume)
    end
    if regs.clipboard and vim.fn.has('clipboard') == 1 and pcall(vim.fn.setreg, '+', conv.resumeCommand) then
      where[#where + 1] = 'the clipboard'
    end
    if scope == 'conversation' then
      summary = { result.direction and title or 'Conversation forked' }
    end
    summary[#summary + 1] = #where > 0 and ('resume command in ' .. table.concat(where, ' and '))
      or ('resume: ' .. (conv.resumeCommand or ''))
    details[#details + 1] = 'Resume the conversation: ' .. (conv.resumeCommand or '')
    if #where > 0 then
      details[#details + 1] = '  (also in ' .. table.concat(where, ' and ') .. ')'
    end
  end
  local prompt = (type(conv) == 'table' and conv.prompt) or result.prompt
  if scope ~= 'code' and type(prompt) == 'string' and prompt ~= '' then
    local where = ''
    if regs.prompt and regs.prompt ~= '' then
      set_register(regs.prompt, prompt)
      where = string.format(' (in register "%s)', regs.prompt)
    end
    details[#details + 1] = 'Prompt' .. where .. ':'
    vim.list_extend(details, vim.split(prompt, '\n', { plain = true }))
  end
  notify(table.concat(summary, '; '), level, details)
end

local function err_message(err)
  if type(err) == 'table' then
    return err.message or vim.inspect(err)
  end
  return tostring(err)
end
M.err_message = err_message

--- Sends the restore (or undo) and settles the buffers. Asks again when the server reports conflicts.
local function send(client, method, params, title, scope)
  while true do
    local before = snapshot()
    local err, result = rpc.request(client, method, params)
    if err then
      notify(title .. ': ' .. err_message(err), levels.ERROR)
      return { status = 'error', message = err_message(err), error = err }
    end
    if result.status == 'conflict' and not params.force and not params.skipConflicts then
      local n = #conflict_lines(result.files)
      local opts = ask_conflicts(client, title, 'Restore', result.files, n > 0 and n or 1, params.turnId)
      if not opts then
        notify(title .. ': cancelled, nothing was changed.')
        return { status = 'cancelled', message = 'cancelled', result = result }
      end
      params = vim.tbl_extend('force', params, opts)
    else
      local written, kept, write_errors = settle_buffers(result, before, params.skipConflicts)
      kept = restore_unsaved(client, result, kept, write_errors)
      show_result(title, result, kept, write_errors, scope, params.skipConflicts)
      require('rewind.turns').invalidate(client.id)
      require('rewind.log').refresh_all(client.id)
      return {
        status = result.status,
        message = result.message,
        result = result,
        written = written,
        kept = kept,
      }
    end
  end
end

M.send = send -- `:Rewind history` restores a version through it (rewind.history)

--- Rewind (mode "rewind") or revert (mode "revert") `turn` in a coroutine. Returns the outcome table.
--- `confirm`: ask even when `config.options.confirm` is off (a code lens click). `only`: { paths, hunks }
--- restricts the restore (a code action: one file, or one hunk of it).
function M.run(client, turn, scope, mode, confirm, only)
  scope = scope or config.options.default_scope
  mode = mode or 'rewind'
  local title = mode == 'revert' and string.format('Revert #%d', turn.number)
    or string.format('Rewind to #%d (%s)', turn.number, scope)
  local point = turn.sessionKind == 'rewind' and mode == 'rewind'
  if point then
    -- A restore point is no turn: rewinding to it undoes that restore, and is called so.
    title = 'Undo: ' .. (turn.prompt or 'a restore')
  end
  if only and only.paths then
    local name = vim.fn.fnamemodify(vim.uri_to_fname(only.paths[1]), ':.')
    title = only.hunks and string.format('Revert hunk %d of #%d in %s', only.hunks[1] + 1, turn.number, name)
      or string.format('Revert #%d in %s', turn.number, name)
  end
  if mode == 'revert' and #(turn.files or {}) == 0 then
    local msg = string.format('%s: turn #%d changed no file, nothing to revert', title, turn.number)
    notify(msg)
    return { status = 'nothing-to-do', message = msg }
  end
  local params = { turnId = turn.id, scope = scope, mode = mode }
  if only then
    params.paths = only.paths
    params.hunks = only.hunks
  end
  local err, preview = rpc.request(client, 'rewind/preview', params)
  if err then
    notify(title .. ': ' .. err_message(err), levels.ERROR)
    return { status = 'error', message = err_message(err), error = err }
  end
  local opts = {}
  local merge_choice, has_merge = nil, false
  if mode == 'revert' then
    merge_choice, has_merge = ask_merge(client, title, preview.files, turn.number, turn.id)
  end
  if has_merge then
    if not merge_choice then
      notify(title .. ': cancelled, nothing was changed.')
      return { status = 'cancelled', message = 'cancelled', preview = preview }
    end
    if merge_choice.rewind then
      -- Decided in the preview, with what it drops said: no second question.
      local rewind_params = { turnId = turn.id, scope = 'code', mode = 'rewind', paths = merge_choice.rewind, force = true }
      return send(client, 'rewind/restore', rewind_params, string.format('Rewind to #%d (code)', turn.number), 'code')
    end
    local outcome = send(client, 'rewind/restore', vim.tbl_extend('force', params, merge_choice.opts), title, scope)
    M.list_markers(outcome.result)
    return outcome
  elseif (preview.conflicts or 0) > 0 then
    local verb = point and 'Undo' or (mode == 'revert' and 'Revert' or 'Rewind')
    opts = ask_conflicts(client, title, verb, preview.files, preview.conflicts, turn.id)
    if not opts then
      notify(title .. ': cancelled, nothing was changed.')
      return { status = 'cancelled', message = 'cancelled', preview = preview }
    end
  elseif confirm or config.options.confirm then
    local verb = point and 'Undo' or (mode == 'revert' and 'Revert' or 'Rewind')
    -- A revert's diff is the turn's own change (what it takes out); a rewind's, the content it writes.
    local yes = require('rewind.preview').confirm(client, title, verb, preview.files, turn.id, 'before')
    if yes == nil then
      notify(title .. ': cancelled, nothing was changed.')
      return { status = 'cancelled', message = 'cancelled', preview = preview }
    end
  end
  return send(client, 'rewind/restore', vim.tbl_extend('force', params, opts), title, scope)
end

--- A new session of the agent's conversation with `turn` and after (direction "from") or everything
--- before it ("upTo") replaced by a summary; the files stay (in a coroutine). The summarizer is the
--- `summarizer` option (REWIND_LS_SUMMARIZER for the server), else the agent's own `claude -p`.
function M.summarize(client, turn, direction, instructions)
  local title = string.format('Conversation summarized %s #%d', direction == 'from' and 'from' or 'up to', turn.number)
  notify(string.format('rewind: summarizing the conversation %s #%d…', direction == 'from' and 'from' or 'up to', turn.number))
  local params = { turnId = turn.id, direction = direction }
  if instructions and instructions ~= '' then
    params.instructions = instructions
  end
  local err, result = rpc.request(client, 'rewind/summarize', params)
  if err then
    notify('Summarize: ' .. err_message(err), levels.ERROR)
    return { status = 'error', message = err_message(err), error = err }
  end
  if direction == 'upTo' then
    -- The turn's prompt is kept in the new session: nothing to resend.
    result = vim.tbl_extend('force', result, {
      prompt = vim.NIL,
      conversation = vim.tbl_extend('force', result.conversation, { prompt = vim.NIL }),
    })
  end
  show_result(title, result, {}, {}, 'conversation', false)
  require('rewind.turns').invalidate(client.id)
  return { status = result.status, message = result.message, result = result }
end

--- Undo the latest rewind (in a coroutine). The preview is asked for even when `confirm` is off: an
--- undo that meets a conflict asks Skip / Overwrite / Cancel like a rewind, never ends in an error.
function M.undo(client)
  local title = 'Undo rewind'
  local err, preview = rpc.request(client, 'rewind/preview', { mode = 'undo' })
  if err then
    notify(title .. ': ' .. err_message(err), levels.ERROR)
    return { status = 'error', message = err_message(err), error = err }
  end
  local opts = nil
  if (preview.conflicts or 0) > 0 then
    opts = ask_conflicts(client, title, 'Undo', preview.files, preview.conflicts, preview.turn.id)
  elseif config.options.confirm then
    local what = 'Undo: ' .. (preview.turn.prompt or 'the last restore')
    opts = require('rewind.preview').confirm(client, what, 'Undo', preview.files, preview.turn.id, 'before')
  else
    opts = {}
  end
  if opts == nil then
    notify(title .. ': cancelled, nothing was changed.')
    return { status = 'cancelled', message = 'cancelled', preview = preview }
  end
  return send(client, 'rewind/undo', next(opts) and opts or vim.empty_dict(), title, 'code')
end

return M
