--- rewind.nvim: the Neovim client of rewind-ls (checkpoint and rewind for AI coding agents).
---
--- All rewind logic lives in the server; this plugin starts it, picks, shows and applies.
--- See `:help rewind`.
local async = require('rewind.async')
local config = require('rewind.config')
local rpc = require('rewind.client')
local state = require('rewind.state')
local turns = require('rewind.turns')
local message = require('rewind.message')

local M = {}

local did_setup = false

--- Configures the plugin and starts attaching rewind-ls to file buffers. Optional: without a call the
--- defaults apply (plugin/rewind.lua calls it at VimEnter). Calling it again replaces the options.
---@param opts? rewind.Options
function M.setup(opts)
  config.set(opts)
  did_setup = true
  if config.options.autostart ~= false then
    rpc.enable()
  end
  if config.options.mappings then
    require('rewind.ui').default_mappings()
  end
  require('rewind.ui').enable_signs()
  require('rewind.ui').follow_attach()
end

--- For 'statusline' (or lualine): "⟲ 3 turns" of the current agent session; "" when not attached.
--- Example: `vim.o.statusline = '%f %{v:lua.require("rewind").statusline()}'`
function M.statusline()
  return require('rewind.ui').statusline()
end

--- Called from plugin/rewind.lua: setup() with defaults unless the user already called it.
function M._auto_setup()
  if not did_setup and vim.g.rewind_autostart ~= false then
    M.setup(vim.g.rewind_options)
  end
end

--- The state of the last operation: { busy, seq, last = { op, status, message, result? } }.
function M.status()
  return { busy = state.busy, seq = state.seq, last = state.last }
end

local levels = vim.log.levels

--- Runs an operation `fn(client)` in a coroutine with the busy guard and the RewindDone event.
local function operation(op, fn)
  if not state.begin(op) then
    message.notify(string.format('rewind: %s is still running', state.busy), levels.WARN)
    return
  end
  local outcome
  async.run(function()
    local client, err = rpc.ready_client(0)
    if not client then
      outcome = { status = 'error', message = err }
      message.notify('rewind: ' .. err, levels.ERROR)
      return
    end
    outcome = fn(client) or { status = 'done', message = '' }
  end, function(ok, err)
    if not ok then
      outcome = { status = 'error', message = tostring(err) }
    end
    state.finish(op, outcome or { status = 'error', message = 'no outcome' })
  end)
end

--- Fetches turns and resolves `ref` (number or id). Returns the turn or an outcome table (error).
local function resolve(client, ref)
  local err, list = turns.fetch(client)
  if err then
    local msg = require('rewind.restore').err_message(err)
    message.notify('rewind: ' .. msg, levels.ERROR)
    return nil, { status = 'error', message = msg, error = err }
  end
  local turn, rerr = turns.resolve_fetch(client, list, ref)
  if not turn then
    message.notify('rewind: ' .. rerr, levels.ERROR)
    return nil, { status = 'error', message = rerr }
  end
  return turn
end

--- Asks for a turn of the current session (newest first); `restores`: then the restore points (picking one
--- undoes that restore), the current state marked "you are here". Returns the turn, or nil and an outcome.
local function pick_turn(client, prompt, restores)
  local err, list = turns.fetch(client)
  if err then
    local msg = require('rewind.restore').err_message(err)
    message.notify('rewind: ' .. msg, levels.ERROR)
    return nil, { status = 'error', message = msg }
  end
  -- Newest first, a page at a time: the picker's last entry loads the next older page and asks again.
  local numbered = require('rewind.numbered')
  local turn
  repeat
    local items = {}
    local current = turns.current_turns(list)
    for i = #current, 1, -1 do
      items[#items + 1] = current[i]
    end
    if #items == 0 then
      local msg = 'no agent turns recorded in ' .. (list.workspace or rpc.cwd_root() or '?') .. ' yet'
      message.notify('rewind: ' .. msg, levels.WARN)
      return nil, { status = 'empty', message = msg }
    end
    local session = turns.current_session(list)
    local older_label = nil
    if turns.has_older(session) then
      older_label = string.format('Older turns… (%d more)', session.turnCount - #session.turns)
    end
    local here_id = nil
    if restores then
      vim.list_extend(items, turns.restore_points(list))
      here_id = turns.here_id(list)
    end
    local title = prompt .. turns.fork_label(session)
    local first = turns.baseline_label(list)
    if first then
      -- A rewind now keeps every file the background checkpoint has not stored yet as it is.
      title = string.format('%s [%s in progress]', title, first)
    end
    turn = numbered.select_turn(items, title, older_label, here_id)
    if turn == numbered.OLDER then
      local ferr = turns.fetch_older(client, list, session)
      if ferr then
        local msg = require('rewind.restore').err_message(ferr)
        message.notify('rewind: ' .. msg, levels.ERROR)
        return nil, { status = 'error', message = msg }
      end
    end
  until turn ~= numbered.OLDER
  if not turn then
    return nil, { status = 'cancelled', message = 'cancelled' }
  end
  return turn
end

--- `:Rewind {n} [scope]`: rewind to the start of turn `ref` (number or id). `opts.confirm`: always ask.
function M.rewind(ref, scope, opts)
  operation('rewind', function(client)
    local turn, outcome = resolve(client, ref)
    if not turn then
      return outcome
    end
    return require('rewind.restore').run(client, turn, scope, 'rewind', (opts or {}).confirm)
  end)
end

--- The turn named by `ref`, or the one the person picks when `ref` is empty.
local function turn_from(client, ref, prompt)
  if ref == nil or ref == '' then
    return pick_turn(client, prompt)
  end
  return resolve(client, ref)
end

--- `:Rewind revert {n}`: undo only turn `ref`'s changes, keeping later work. `opts.confirm`: always ask.
function M.revert(ref, opts)
  operation('revert', function(client)
    local turn, outcome = turn_from(client, ref, 'Revert which turn (later work is kept)?')
    if not turn then
      return outcome
    end
    return require('rewind.restore').run(client, turn, 'code', 'revert', (opts or {}).confirm)
  end)
end

--- `:Rewind history [path]`: one file's recorded versions, one restored (rewind.history).
function M.history(path)
  operation('history', function(client)
    return require('rewind.history').history(client, path)
  end)
end

--- The code actions: revert hunk `hunk` (0-based; nil: the whole file) of turn `ref`'s change to `uri`,
--- keeping later edits; previewed and asked like every restore, the buffer written after.
function M.revert_change(ref, uri, hunk)
  operation('revert', function(client)
    local turn, outcome = resolve(client, ref)
    if not turn then
      return outcome
    end
    local only = { paths = { uri }, hunks = hunk ~= nil and { hunk } or nil }
    return require('rewind.restore').run(client, turn, 'code', 'revert', true, only)
  end)
end

--- `:Rewind undo`: undo the latest rewind, revert or undo.
function M.undo()
  operation('undo', function(client)
    return require('rewind.restore').undo(client)
  end)
end

--- `:Rewind`: pick a turn (newest first), then what to rewind.
function M.pick()
  operation('pick', function(client)
    local turn, outcome = pick_turn(client, 'Rewind to the start of which turn (or undo which restore)?', true)
    if not turn then
      return outcome
    end
    if turn.sessionKind == 'rewind' then
      -- Going back to a restore point puts back what the files held before that restore: its undo.
      return require('rewind.restore').run(client, turn, 'code', 'rewind')
    end
    local n = turn.number
    local scopes = {
      { label = string.format('Code only: files go back to the start of #%d', n), scope = 'code', mode = 'rewind' },
      { label = 'Code and conversation', scope = 'both', mode = 'rewind' },
      { label = string.format('Conversation only: fork the chat before prompt #%d', n), scope = 'conversation', mode = 'rewind' },
      { label = string.format('Revert only turn #%d (keep later work)', n), scope = 'code', mode = 'revert' },
      { label = string.format('Summarize from here: keep the chat before #%d, summarize the rest', n), summarize = 'from' },
      { label = string.format('Summarize up to here: summarize the chat before #%d, keep the rest', n), summarize = 'upTo' },
    }
    -- The configured default scope first.
    for i, c in ipairs(scopes) do
      if c.mode == 'rewind' and c.scope == config.options.default_scope and i > 1 then
        table.insert(scopes, 1, table.remove(scopes, i))
        break
      end
    end
    local choice = async.select(scopes, {
      prompt = string.format('Rewind #%d: what?', n),
      kind = 'rewind.scope',
      format_item = function(c)
        return c.label
      end,
    })
    if not choice then
      return { status = 'cancelled', message = 'cancelled' }
    end
    if choice.summarize then
      return require('rewind.restore').summarize(client, turn, choice.summarize)
    end
    return require('rewind.restore').run(client, turn, choice.scope, choice.mode)
  end)
end

--- `:Rewind diff {n} [path]`: diff split of the file at turn n against its buffer.
function M.diff(ref, path)
  operation('diff', function(client)
    local turn, outcome = turn_from(client, ref, 'Diff which turn?')
    if not turn then
      return outcome
    end
    local res = require('rewind.diff').run(client, turn, path)
    if res.status == 'error' then
      message.notify('rewind: ' .. res.message, levels.ERROR)
    elseif res.status == 'shown' then
      message.notify(res.message, levels.INFO)
    end
    return res
  end)
end

--- `:Rewind browse {n} [after]`: the workspace at the start (or end) of turn n, read-only; no n: pick a turn.
function M.browse(ref, side)
  operation('browse', function(client)
    local turn, outcome = turn_from(client, ref, 'Browse the workspace at the start of which turn?')
    if not turn then
      return outcome
    end
    local res = require('rewind.browse').open(client, turn, side == 'after' and 'after' or 'before')
    message.notify(res.message, levels.INFO)
    return res
  end)
end

--- `:Rewind changes [n]`: what turn n changed (before | after it), a diff tab per file; no n: pick a turn.
function M.changes(ref)
  operation('changes', function(client)
    local turn, outcome = turn_from(client, ref, 'Show what which turn changed?')
    if not turn then
      return outcome
    end
    local res = require('rewind.changes').run(client, turn)
    message.notify(res.status == 'error' and ('rewind: ' .. res.message) or res.message, res.status == 'error' and levels.ERROR or levels.INFO)
    return res
  end)
end

--- `:Rewind quickfix [n]`: the files of turn n (default: the latest) in the quickfix list.
function M.quickfix(ref)
  operation('quickfix', function(client)
    local turn, outcome
    if ref == nil or ref == '' then
      local err, list = turns.fetch(client)
      if err then
        local msg = require('rewind.restore').err_message(err)
        message.notify('rewind: ' .. msg, levels.ERROR)
        return { status = 'error', message = msg }
      end
      local current = turns.current_turns(list)
      turn = current[#current]
      if not turn then
        message.notify('rewind: no agent turns recorded yet', levels.WARN)
        return { status = 'empty', message = 'no agent turns recorded yet' }
      end
    else
      turn, outcome = resolve(client, ref)
      if not turn then
        return outcome
      end
    end
    local res = require('rewind.ui').quickfix(client, turn)
    message.say('rewind: ' .. res.message)
    return res
  end)
end

--- `:Rewind log`: the timeline with its code lenses.
function M.log()
  operation('log', function(client)
    local res = require('rewind.log').open(client)
    if res.status == 'error' then
      message.notify('rewind: ' .. res.message, levels.ERROR)
    end
    return res
  end)
end

return M
