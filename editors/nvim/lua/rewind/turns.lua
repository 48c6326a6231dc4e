--- The turn list (`rewind/listTurns`): cache, resolving `:Rewind {n}`, labels for pickers.
local rpc = require('rewind.client')

local M = {}

--- client id -> ListTurnsResult
M.cache = {}

function M.invalidate(client_id)
  if client_id then
    M.cache[client_id] = nil
  else
    M.cache = {}
  end
end

--- Turns per session in one page of `rewind/listTurns` (the newest; older pages on demand).
M.PAGE = 100

--- Fetches the newest page of each session (in a coroutine). Returns err, result.
function M.fetch(client)
  local err, res = rpc.request(client, 'rewind/listTurns', { limit = M.PAGE })
  if not err and res then
    M.cache[client.id] = res
  end
  return err, res
end

--- Adds the next older page of `session` (a session of `list`, which has an `olderCursor`) before its
--- turns, in place (in a coroutine). Returns err.
function M.fetch_older(client, list, session)
  if session.olderCursor == nil or session.olderCursor == vim.NIL then
    return nil
  end
  local err, res = rpc.request(
    client,
    'rewind/listTurns',
    { limit = M.PAGE, sessionId = session.id, before = session.olderCursor }
  )
  if err or not res then
    return err or 'no answer'
  end
  local older = (res.sessions or {})[1]
  if not older then
    return nil
  end
  local merged = {}
  vim.list_extend(merged, older.turns or {})
  vim.list_extend(merged, session.turns or {})
  session.turns = merged
  session.olderCursor = older.olderCursor
  return nil
end

--- Whether `session` has turns older than those listed.
function M.has_older(session)
  return session ~= nil and session.olderCursor ~= nil and session.olderCursor ~= vim.NIL
end

--- A turn from a number or an id, fetching older pages (or the turn by id) when the listed page does
--- not hold it (in a coroutine). Returns turn, err.
function M.resolve_fetch(client, list, ref)
  local turn, err = M.resolve(list, ref)
  if turn or ref == nil or ref == '' then
    return turn, err
  end
  local n = tonumber(ref)
  if not n then
    local ferr, res = rpc.request(client, 'rewind/listTurns', { turnId = ref })
    local s = not ferr and res and (res.sessions or {})[1]
    return (s and (s.turns or {})[1]) or nil, err
  end
  local s = M.current_session(list)
  while s and M.has_older(s) and s.turns[1] and s.turns[1].number > n do
    if M.fetch_older(client, list, s) then
      break
    end
  end
  return M.resolve(list, ref)
end

--- How many turns the current session has (all pages).
function M.current_count(list)
  local s = M.current_session(list)
  return s and (s.turnCount or #s.turns) or 0
end

--- While the first checkpoint of a large workspace is taken in the background (`baseline` of
--- rewind/listTurns): "first checkpoint 1500/4000" ("first checkpoint…" while it lists the files);
--- nil when none runs.
function M.baseline_label(list)
  local b = list and list.baseline
  if b == nil or b == vim.NIL then
    return nil
  end
  if (b.total or 0) > 0 then
    return string.format('first checkpoint %d/%d', b.done, b.total)
  end
  return 'first checkpoint…'
end

--- The cached list, or a synchronous fetch (for completion).
function M.cached_or_sync(client)
  if not client then
    return nil
  end
  local res = M.cache[client.id]
  if res then
    return res
  end
  res = rpc.request_sync(client, 'rewind/listTurns', { limit = M.PAGE }, require('rewind.config').options.request_timeout)
  if res then
    M.cache[client.id] = res
  end
  return res
end

--- The session a bare turn number refers to.
function M.current_session(list)
  if not list or list.currentSessionId == vim.NIL then
    return nil
  end
  for _, s in ipairs(list.sessions or {}) do
    if s.id == list.currentSessionId then
      return s
    end
  end
  return nil
end

--- Turns of the current session, oldest first.
function M.current_turns(list)
  local s = M.current_session(list)
  return s and s.turns or {}
end

--- A turn from a number (in the current session) or a turn id (any session).
---@return table? turn
---@return string? err
function M.resolve(list, ref)
  if ref == nil or ref == '' then
    return nil, 'no turn given'
  end
  local n = tonumber(ref)
  if n then
    for _, t in ipairs(M.current_turns(list)) do
      if t.number == n then
        return t
      end
    end
    local s = M.current_session(list)
    if not s then
      return nil, 'no agent session recorded in this workspace yet'
    end
    return nil, string.format('there is no turn %d in the current session (it has %d)', n, s.turnCount or #s.turns)
  end
  for _, s in ipairs(list.sessions or {}) do
    for _, t in ipairs(s.turns or {}) do
      if t.id == ref then
        return t
      end
    end
  end
  return nil, 'unknown turn ' .. tostring(ref)
end

local function tz_offset()
  local now = os.time()
  return os.difftime(now, os.time(os.date('!*t', now) --[[@as osdateparam]]))
end

local MONTHS = { 'Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec' }

--- "today 14:03", "yesterday 09:12", "Nov 21 14:03" (this year), "2025-11-21 14:03" (local time) from an
--- ISO 8601 UTC timestamp.
---@param now? integer  os.time() of "now" (tests)
function M.format_time(iso, now)
  if type(iso) ~= 'string' then
    return '?'
  end
  local y, mo, d, h, mi, s = iso:match('^(%d+)-(%d+)-(%d+)[T ](%d+):(%d+):?(%d*)')
  if not y then
    return iso
  end
  local t = os.time({
    year = tonumber(y),
    month = tonumber(mo),
    day = tonumber(d),
    hour = tonumber(h),
    min = tonumber(mi),
    sec = tonumber(s) or 0,
    isdst = false,
  }) + tz_offset()
  now = now or os.time()
  local hm = os.date('%H:%M', t) --[[@as string]]
  local day = os.date('%Y-%m-%d', t)
  if day == os.date('%Y-%m-%d', now) then
    return 'today ' .. hm
  elseif day == os.date('%Y-%m-%d', now - 86400) then
    return 'yesterday ' .. hm
  elseif os.date('%Y', t) == os.date('%Y', now) then
    local dt = os.date('*t', t) --[[@as osdate]]
    return string.format('%s %d %s', MONTHS[dt.month], dt.day, hm)
  end
  return os.date('%Y-%m-%d %H:%M', t) --[[@as string]]
end

local function one_line(s, max)
  s = (s or ''):gsub('%s+', ' '):gsub('^ ', ''):gsub(' $', '')
  if vim.fn.strchars(s) > max then
    s = vim.fn.strcharpart(s, 0, max - 1) .. '…'
  end
  return s
end
M.one_line = one_line

local MARK = { created = 'A', modified = 'M', deleted = 'D' }
M.MARK = MARK

--- "M src/a.py, A README.md +2 more" (git-style marks: A added, M modified, D deleted)
function M.files_summary(turn, max)
  max = max or 3
  local files = turn.files or {}
  if #files == 0 then
    return 'no file changes'
  end
  local names = {}
  for i = 1, math.min(#files, max) do
    names[#names + 1] = (MARK[files[i].change] or '?') .. ' ' .. files[i].path
  end
  local s = table.concat(names, ', ')
  if #files > max then
    s = s .. string.format(' +%d more', #files - max)
  end
  return s
end

--- What a turn is called: "#3" for an agent's prompt; the person's own saves have no number.
function M.name(turn)
  local kind = turn.sessionKind
  if kind == 'editor' then
    return 'your saves'
  elseif kind == 'external' then
    return 'outside changes'
  elseif kind == 'rewind' then
    return 'restore point'
  end
  return '#' .. tostring(turn.number)
end

--- " (fork of 1a2b3c4d before #3)" for a forked conversation (its earlier turns are the source's), else "".
function M.fork_label(session)
  local f = session and session.forkOf
  if f == nil or f == vim.NIL then
    return ''
  end
  return string.format(' (fork of %s before #%d)', f.sessionId:sub(1, 8), f.beforeNumber)
end

--- The mark on the row whose end is the workspace's current state.
M.YOU_ARE_HERE = 'you are here'

--- Restore points (what the files held just before each rewind, revert or undo), newest first.
function M.restore_points(list)
  local out = {}
  for _, s in ipairs((list and list.sessions) or {}) do
    if s.kind == 'rewind' then
      for i = #s.turns, 1, -1 do
        out[#out + 1] = s.turns[i]
      end
    end
  end
  return out
end

--- The id of the row holding the current state: the newest restore point when a restore came after the
--- current session's newest turn (undoing it goes back), else that newest turn.
function M.here_id(list)
  local current = M.current_turns(list)
  local turn = current[#current]
  local restore = M.restore_points(list)[1]
  -- Times are to the second: a restore point of the same second as the latest turn's start was
  -- made after it (a restore follows the turn it undoes), so a tie is the restore's.
  if restore and (turn == nil or restore.startedAt >= turn.startedAt) then
    return restore.id
  end
  return turn and turn.id
end

--- "#3  today 14:03  add a parser  (M src/a.py, A README.md)"; a restore point: "restore point  14:05  before
--- rewind to turn 2 (code)  (M a.txt)". `here_id`: the row marked "← you are here".
function M.label(turn, here_id)
  local prompt = ''
  if turn.sessionKind == nil or turn.sessionKind == 'agent' then
    prompt = one_line(turn.prompt, 60)
    if prompt == '' then
      prompt = '(no prompt)'
    end
    prompt = '  ' .. prompt
  elseif turn.sessionKind == 'rewind' then
    prompt = '  before ' .. one_line(turn.prompt, 60)
  end
  -- A restore point's row is the state before its restore (picking it undoes the restore): when the
  -- files are what the last restore wrote, its row says they are after it.
  local mark = turn.sessionKind == 'rewind' and (M.YOU_ARE_HERE .. ': after this restore') or M.YOU_ARE_HERE
  local here = (here_id ~= nil and turn.id == here_id) and ('  ← ' .. mark) or ''
  return string.format('%s  %s%s  (%s)%s', M.name(turn), M.format_time(turn.startedAt), prompt, M.files_summary(turn), here)
end

return M
