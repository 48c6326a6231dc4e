--- The plugin's presence in the editor: highlight groups, <Plug> mappings (and the default keys when asked),
--- the statusline component, the quickfix list of a turn, and signs on the lines the latest turn changed.
local async = require('rewind.async')
local config = require('rewind.config')
local rpc = require('rewind.client')
local turns = require('rewind.turns')

local M = {}

--- Groups of our own, linked to standard ones (`default`: a colorscheme or the person may override them).
M.highlights = {
  RewindTitle = 'Title',
  RewindAdded = 'Added',
  RewindChanged = 'Changed',
  RewindRemoved = 'Removed',
  RewindConflict = 'WarningMsg',
  RewindSignAdd = 'Added',
  RewindSignChange = 'Changed',
  RewindSignDelete = 'Removed',
}

function M.define_highlights()
  for group, link in pairs(M.highlights) do
    vim.api.nvim_set_hl(0, group, { link = link, default = true })
  end
end

--- <Plug>(rewind-…) → what it runs; `key` is the default key set by setup({ mappings = true }).
M.plugs = {
  { plug = '<Plug>(rewind-pick)', rhs = '<Cmd>Rewind<CR>', key = '<Leader>rr', desc = 'Rewind to a turn' },
  { plug = '<Plug>(rewind-revert)', rhs = '<Cmd>Rewind revert<CR>', key = '<Leader>rR', desc = 'Revert one turn' },
  { plug = '<Plug>(rewind-undo)', rhs = '<Cmd>Rewind undo<CR>', key = '<Leader>ru', desc = 'Undo the last rewind' },
  { plug = '<Plug>(rewind-diff)', rhs = '<Cmd>Rewind diff<CR>', key = '<Leader>rd', desc = 'Diff a turn' },
  { plug = '<Plug>(rewind-log)', rhs = '<Cmd>Rewind log<CR>', key = '<Leader>rl', desc = 'Rewind timeline' },
  { plug = '<Plug>(rewind-quickfix)', rhs = '<Cmd>Rewind quickfix<CR>', key = '<Leader>rq', desc = "Quickfix: a turn's files" },
  { plug = '<Plug>(rewind-last)', rhs = '<Cmd>Rewind last<CR>', key = '<Leader>r?', desc = 'Details of the last rewind' },
}

function M.define_plugs()
  for _, m in ipairs(vim.list_extend(vim.deepcopy(M.plugs), require('rewind.review').plugs)) do
    vim.keymap.set('n', m.plug, m.rhs, { desc = 'rewind: ' .. m.desc, silent = true })
  end
end

--- The default keys (only with setup({ mappings = true })); a key the person mapped already is left alone.
function M.default_mappings()
  for _, m in ipairs(vim.list_extend(vim.deepcopy(M.plugs), require('rewind.review').plugs)) do
    if vim.fn.maparg(m.key, 'n') == '' then
      vim.keymap.set('n', m.key, m.plug, { desc = 'rewind: ' .. m.desc, remap = true })
    end
  end
end

--- The client of the current buffer (or of the cwd), without starting one: the statusline must be cheap.
local function current_client()
  local c = rpc.get_clients({ name = rpc.name, bufnr = 0 })[1]
  if c then
    return c
  end
  local root = rpc.cwd_root()
  for _, client in ipairs(rpc.get_clients({ name = rpc.name })) do
    if root and client.root_dir and rpc.normalize(client.root_dir) == root then
      return client
    end
  end
  return nil
end

local fetching = {}

--- Fetches the turn list in the background (once at a time) and redraws the statuslines.
local function refresh(client)
  if fetching[client.id] or not client.initialized then
    return
  end
  fetching[client.id] = true
  async.run(function()
    turns.fetch(client)
  end, function()
    fetching[client.id] = nil
    vim.schedule(function()
      vim.cmd('redrawstatus!')
    end)
  end)
end

--- How often the statusline asks again while the first checkpoint runs in the background.
M.POLL_MS = 2000
local polling = {}

--- Asks for the turn list again in POLL_MS (once at a time): the server sends no notification when the
--- background first checkpoint ends, so the statusline polls while it shows one.
local function poll(client)
  if polling[client.id] then
    return
  end
  polling[client.id] = true
  vim.defer_fn(function()
    polling[client.id] = nil
    if vim.lsp.get_client_by_id(client.id) then
      refresh(client)
    end
  end, M.POLL_MS)
end

--- For 'statusline' / lualine: "⟲ 3 turns" of the current agent session, "⟲ rewinding…" while an operation
--- runs, "⟳ first checkpoint 1500/4000" while the first checkpoint of a large workspace is taken in
--- the background, "" when rewind-ls is not attached. Never waits for the server.
function M.statusline()
  local state = require('rewind.state')
  if state.busy then
    return '⟲ ' .. state.busy .. '…'
  end
  local client = current_client()
  if not client then
    return ''
  end
  local list = turns.cache[client.id]
  if not list then
    refresh(client)
    return ''
  end
  local first = turns.baseline_label(list)
  if first then
    poll(client)
    return '⟳ ' .. first
  end
  local n = turns.current_count(list)
  return string.format('⟲ %d %s', n, n == 1 and 'turn' or 'turns')
end

--- `:Rewind quickfix [n]`: the files of turn n (default: the latest of the current session) in the
--- quickfix list, each with its change (A/M/D) and the prompt; opens the list.
function M.quickfix(client, turn)
  local items = {}
  for _, f in ipairs(turn.files or {}) do
    items[#items + 1] = {
      filename = vim.uri_to_fname(f.uri),
      lnum = 1,
      text = string.format('%s %s in %s: %s', turns.MARK[f.change] or '?', f.change, turns.name(turn), turns.one_line(turn.prompt, 60)),
      type = f.change == 'deleted' and 'W' or 'I',
    }
  end
  local title = string.format('rewind: %s %s', turns.name(turn), turns.one_line(turn.prompt, 60))
  vim.fn.setqflist({}, ' ', { title = title, items = items })
  if #items > 0 then
    vim.cmd('botright copen')
  end
  return { status = 'shown', message = string.format('%d file(s) of %s in the quickfix list', #items, turns.name(turn)), count = #items, client = client.id }
end

-- --- signs ----------------------------------------------------------------------------------------

M.ns = vim.api.nvim_create_namespace('rewind.signs')

local function buf_text(bufnr)
  local lines = vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)
  return table.concat(lines, '\n') .. '\n'
end

--- Lines of `after` (1-based) that differ from `before`: { lnum = kind } with kind add/change/delete.
function M.changed_lines(before, after)
  local out = {}
  local hunks = vim.diff(before, after, { result_type = 'indices' }) --[[@as integer[][] ]]
  for _, h in ipairs(hunks) do
    local _, count_a, start_b, count_b = h[1], h[2], h[3], h[4]
    if count_b == 0 then
      out[math.max(start_b, 1)] = 'delete'
    else
      for l = start_b, start_b + count_b - 1 do
        out[l] = count_a == 0 and 'add' or 'change'
      end
    end
  end
  return out
end

local SIGN = {
  add = { text = '┃', hl = 'RewindSignAdd' },
  change = { text = '┃', hl = 'RewindSignChange' },
  delete = { text = '▁', hl = 'RewindSignDelete' },
}

--- Places signs on the lines of `bufnr` that the latest turn of the current session changed (in a coroutine).
function M.update_signs(client, bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  local err, list = turns.fetch(client)
  local current = not err and turns.current_turns(list) or {}
  local latest = current[#current]
  local fname = rpc.normalize(vim.api.nvim_buf_get_name(bufnr))
  local file
  for _, f in ipairs(latest and latest.files or {}) do
    if fname and rpc.normalize(vim.uri_to_fname(f.uri)) == fname then
      file = f
    end
  end
  local marks = {}
  if file then
    local ferr, res = rpc.request(client, 'rewind/fileAt', { turnId = latest.id, uri = file.uri, side = 'before' })
    if not ferr and res and not res.binary and not res.tooLarge then
      marks = M.changed_lines(res.exists and (res.text or '') or '', buf_text(bufnr))
    end
  end
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  local count = vim.api.nvim_buf_line_count(bufnr)
  for lnum, kind in pairs(marks) do
    if lnum <= count then
      vim.api.nvim_buf_set_extmark(bufnr, M.ns, lnum - 1, 0, {
        -- The turn's number (issue #28), so the gutter says which turn changed the line.
        sign_text = require('rewind.review').sign_text(latest.number) or SIGN[kind].text,
        sign_hl_group = SIGN[kind].hl,
        priority = 5,
      })
    end
  end
end

local function signs_for(bufnr)
  local client = rpc.get_clients({ name = rpc.name, bufnr = bufnr })[1]
  if client and client.initialized then
    async.run(M.update_signs, nil, client, bufnr)
  end
end

--- The statusline is current as soon as the server answers: when rewind-ls attaches, the turn list is
--- fetched (again while the server is still setting its workspace up) and the statuslines redrawn.
function M.follow_attach()
  local group = vim.api.nvim_create_augroup('rewind.statusline', { clear = true })
  vim.api.nvim_create_autocmd('LspAttach', {
    group = group,
    callback = function(ev)
      local client = vim.lsp.get_client_by_id(ev.data and ev.data.client_id or -1)
      if not client or client.name ~= rpc.name or turns.cache[client.id] then
        return
      end
      async.run(function()
        for _ = 1, 50 do
          local err = turns.fetch(client)
          if not err then
            break
          end
          async.sleep(200)
        end
      end, function()
        vim.schedule(function()
          vim.cmd('redrawstatus!')
        end)
      end)
    end,
  })
end

--- With setup({ signs = true }): signs follow turns, saves and entering a buffer.
function M.enable_signs()
  local group = vim.api.nvim_create_augroup('rewind.signs', { clear = true })
  if not config.options.signs then
    for _, b in ipairs(vim.api.nvim_list_bufs()) do
      if vim.api.nvim_buf_is_loaded(b) then
        vim.api.nvim_buf_clear_namespace(b, M.ns, 0, -1)
      end
    end
    return
  end
  vim.api.nvim_create_autocmd({ 'BufEnter', 'BufWritePost', 'LspAttach' }, {
    group = group,
    callback = function(ev)
      signs_for(ev.buf)
    end,
  })
  vim.api.nvim_create_autocmd('User', {
    group = group,
    pattern = { 'RewindTurnsChanged', 'RewindDone' },
    callback = function()
      for _, w in ipairs(vim.api.nvim_list_wins()) do
        signs_for(vim.api.nvim_win_get_buf(w))
      end
    end,
  })
end

return M
