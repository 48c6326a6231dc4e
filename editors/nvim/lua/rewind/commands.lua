--- `:Rewind` argument parsing and completion.
local M = {}

M.subcommands = { 'revert', 'undo', 'diff', 'changes', 'browse', 'log', 'history', 'quickfix', 'last', 'review' }
M.scopes = { 'code', 'conversation', 'both' }

local usage = 'usage: :Rewind [{n} [code|conversation|both] | revert {n} | undo | diff {n} [path] | changes [n] | browse {n} [after] | log | history [path] | quickfix [n] | review [n] | last]'

local function is_turn(s)
  return s ~= nil and (s:match('^%d+$') ~= nil or #s > 8)
end

function M.run(opts)
  local rewind = require('rewind')
  local args = opts.fargs or {}
  local sub = args[1]
  if sub == nil then
    return rewind.pick()
  elseif sub == 'undo' and #args == 1 then
    return rewind.undo()
  elseif sub == 'log' and #args == 1 then
    return rewind.log()
  elseif sub == 'history' and #args <= 2 then
    return rewind.history(args[2])
  elseif sub == 'last' and #args == 1 then
    return require('rewind.message').show_last()
  elseif sub == 'quickfix' and #args <= 2 then
    return rewind.quickfix(args[2])
  elseif sub == 'review' and #args <= 2 then
    return require('rewind.review').review(args[2])
  elseif sub == 'revert' and #args <= 2 then
    return rewind.revert(args[2])
  elseif sub == 'browse' and #args <= 3 and (args[3] == nil or args[3] == 'after') then
    return rewind.browse(args[2], args[3])
  elseif sub == 'changes' and #args <= 2 then
    return rewind.changes(args[2])
  elseif sub == 'diff' and #args <= 3 then
    return rewind.diff(args[2], args[3])
  elseif is_turn(sub) and #args <= 2 then
    local scope = args[2]
    if scope and not vim.tbl_contains(M.scopes, scope) then
      vim.notify('rewind: unknown scope "' .. scope .. '"; ' .. usage, vim.log.levels.ERROR)
      return
    end
    return rewind.rewind(sub, scope)
  end
  vim.notify('rewind: ' .. usage, vim.log.levels.ERROR)
end

local function turn_list()
  local ok, rpc = pcall(require, 'rewind.client')
  if not ok then
    return nil
  end
  local clients = rpc.get_clients({ name = rpc.name, bufnr = 0 })
  local client = clients[1]
  if not client then
    local root = rpc.cwd_root()
    for _, c in ipairs(rpc.get_clients({ name = rpc.name })) do
      if root and c.root_dir and rpc.normalize(c.root_dir) == root then
        client = c
      end
    end
  end
  return require('rewind.turns').cached_or_sync(client)
end

local function numbers()
  local list = turn_list()
  local out = {}
  local current = list and require('rewind.turns').current_turns(list) or {}
  for i = #current, 1, -1 do
    out[#out + 1] = tostring(current[i].number)
  end
  return out
end

local function paths_of(n)
  local list = turn_list()
  if not list then
    return {}
  end
  local turn = require('rewind.turns').resolve(list, n)
  local out = {}
  for _, f in ipairs(turn and turn.files or {}) do
    out[#out + 1] = f.path
  end
  return out
end

function M.complete(arglead, cmdline, cursorpos)
  local before = cmdline:sub(1, cursorpos)
  local words = vim.split(vim.trim(before), '%s+')
  table.remove(words, 1) -- the command name
  if arglead ~= '' then
    table.remove(words) -- the word being completed
  end
  local pos = #words + 1
  local candidates = {}
  if pos == 1 then
    candidates = vim.list_extend(vim.deepcopy(M.subcommands), numbers())
  elseif pos == 2 then
    if words[1] == 'revert' or words[1] == 'diff' or words[1] == 'changes' or words[1] == 'browse' or words[1] == 'quickfix' or words[1] == 'review' then
      candidates = numbers()
    elseif is_turn(words[1]) then
      candidates = M.scopes
    end
  elseif pos == 3 and words[1] == 'diff' then
    candidates = paths_of(words[2])
  elseif pos == 3 and words[1] == 'browse' then
    candidates = { 'after' }
  end
  return vim.tbl_filter(function(c)
    return vim.startswith(c, arglead)
  end, candidates)
end

return M
