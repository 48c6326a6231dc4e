--- `:Rewind browse {n} [after]`: the workspace as it was at the start (or end) of turn n, read-only.
--- A listing buffer per folder (`rewind-turn://<turn id>/<side>/<folder>/`: <CR> or gf opens the entry
--- under the cursor, `-` the parent folder) and a read-only buffer per file
--- (`rewind-turn://<turn id>/<side>/<path>`, its filetype from the name; gf opens the file under the
--- cursor as it was at the same turn). Backed by `rewind/listFolder` and `rewind/fileAt`; nothing is
--- written anywhere. The buffers load through BufReadCmd, so `:edit rewind-turn://…` works too.
local rpc = require('rewind.client')

local M = {}

M.prefix = 'rewind-turn://'
local TIMEOUT = 10000

-- turn id -> the id of the client that listed it (the server of that workspace).
local clients = {}

--- The buffer name of `path` ('' or ending in '/': a folder) at `turn_id`'s `side`.
function M.name(turn_id, side, path)
  return string.format('%s%s/%s/%s', M.prefix, turn_id, side, path)
end

--- turn id, side, path of a `rewind-turn://` name; nil when it is not one.
function M.parse(name)
  local turn_id, side, path = name:match('^rewind%-turn://([^/]+)/([a-z]+)/(.*)$')
  if not turn_id or (side ~= 'before' and side ~= 'after') then
    return nil
  end
  return turn_id, side, path
end

local function client_for(turn_id)
  local id = clients[turn_id]
  local client = id and vim.lsp.get_client_by_id(id)
  if client and client.initialized then
    return client
  end
  client = rpc.get(0)
  if client and client.initialized then
    return client
  end
  return nil
end

--- A request answered before TIMEOUT: result, or nil and a message.
local function call(client, method, params)
  local res = rpc.call(client, 'request_sync', method, params, TIMEOUT, 0)
  if not res then
    return nil, 'rewind-ls did not answer ' .. method
  end
  if res.err then
    return nil, res.err.message or tostring(res.err)
  end
  return res.result
end

local function uri_of(client, path)
  local root = rpc.normalize(client.root_dir or vim.fn.getcwd())
  return vim.uri_from_fname(path == '' and root or (root .. '/' .. path:gsub('/$', '')))
end

local function fill(buf, lines)
  vim.bo[buf].modifiable = true
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, lines)
  vim.bo[buf].modifiable = false
  vim.bo[buf].modified = false
  vim.bo[buf].readonly = true
end

local function setup_buffer(buf)
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].swapfile = false
  vim.bo[buf].bufhidden = 'hide'
end

--- The folder `path` with `.`/`..` segments resolved; nil when it climbs above the workspace.
local function clean(path)
  local out = {}
  for part in path:gmatch('[^/]+') do
    if part == '..' then
      if #out == 0 then
        return nil
      end
      table.remove(out)
    elseif part ~= '.' then
      out[#out + 1] = part
    end
  end
  return table.concat(out, '/')
end

local function parent_of(path)
  local trimmed = path:gsub('/$', '')
  local parent = trimmed:match('^(.*)/[^/]*$')
  return parent and (parent .. '/') or ''
end

local function open(name)
  vim.cmd('edit ' .. vim.fn.fnameescape(name))
end

--- The entry of a listing line: its path at the turn ('' for the root, a trailing '/' for a folder).
local function entry_path(folder, line)
  if line == '' or line:sub(1, 1) == '"' then
    return nil
  end
  if line == '../' then
    return parent_of(folder)
  end
  return folder .. line
end

local function open_entry()
  local turn_id, side, folder = M.parse(vim.api.nvim_buf_get_name(0))
  local path = turn_id and entry_path(folder, vim.api.nvim_get_current_line())
  if path then
    open(M.name(turn_id, side, path))
  end
end

--- Whether `path` is a file of the turn (its folder listed, the name among the files).
local function exists(client, turn_id, side, path)
  local folder = parent_of(path)
  local res = call(client, 'rewind/listFolder', {
    turnId = turn_id,
    side = side,
    uri = folder ~= '' and uri_of(client, folder) or nil,
  })
  local name = path:match('([^/]+)$')
  for _, e in ipairs(res and res.entries or {}) do
    if e.name == name and not e.folder then
      return true
    end
  end
  return false
end

--- gf in a browsed file: the file under the cursor, relative to this file's folder then to the root,
--- with 'suffixesadd', as it was at the same turn.
local function goto_file()
  local turn_id, side, path = M.parse(vim.api.nvim_buf_get_name(0))
  local client = turn_id and client_for(turn_id)
  local cfile = vim.fn.expand('<cfile>')
  if not client or cfile == '' then
    return
  end
  local suffixes = { '' }
  for s in (vim.bo.suffixesadd or ''):gmatch('[^,]+') do
    suffixes[#suffixes + 1] = s
  end
  for _, base in ipairs({ parent_of(path), '' }) do
    for _, suffix in ipairs(suffixes) do
      local candidate = clean(base .. cfile .. suffix)
      if candidate and candidate ~= '' and exists(client, turn_id, side, candidate) then
        return open(M.name(turn_id, side, candidate))
      end
    end
  end
  vim.notify(string.format('rewind: %s is not a file of this turn', cfile), vim.log.levels.WARN)
end

local function load_folder(buf, client, turn_id, side, folder)
  local res, err = call(client, 'rewind/listFolder', {
    turnId = turn_id,
    side = side,
    uri = folder ~= '' and uri_of(client, folder) or nil,
  })
  if not res then
    fill(buf, { '" rewind: ' .. err })
    return
  end
  local lines = {
    string.format('" Turn #%d, %s (%s): /%s', res.number, side == 'after' and 'its end' or 'its start', res.startedAt or '', folder),
  }
  if folder ~= '' then
    lines[#lines + 1] = '../'
  end
  for _, e in ipairs(res.entries) do
    lines[#lines + 1] = e.folder and (e.name .. '/') or e.name
  end
  fill(buf, lines)
  vim.bo[buf].filetype = 'rewindbrowse'
  vim.b[buf].rewind_browse = { turnId = turn_id, number = res.number, side = side, folder = folder }
  for _, key in ipairs({ '<CR>', 'gf' }) do
    vim.keymap.set('n', key, open_entry, { buffer = buf, desc = 'rewind: open the entry at this turn' })
  end
  vim.keymap.set('n', '-', function()
    if folder ~= '' then
      open(M.name(turn_id, side, parent_of(folder)))
    end
  end, { buffer = buf, desc = 'rewind: the parent folder at this turn' })
  pcall(vim.api.nvim_win_set_cursor, 0, { math.min(2, #lines), 0 })
end

local function load_file(buf, client, turn_id, side, path)
  local res, err = call(client, 'rewind/fileAt', { turnId = turn_id, uri = uri_of(client, path), side = side })
  local lines
  if not res then
    lines = { 'rewind: ' .. err }
  elseif not res.exists then
    lines = { string.format('rewind: %s did not exist then', path) }
  elseif res.binary then
    lines = { '(binary file: not shown)' }
  elseif res.tooLarge then
    lines = { '(file too large: not recorded)' }
  else
    lines = require('rewind.diff').to_lines(res.text)
  end
  fill(buf, lines)
  local ft = vim.filetype.match({ filename = path, buf = buf })
  if ft and ft ~= '' then
    vim.bo[buf].filetype = ft
  end
  vim.b[buf].rewind_browse = { turnId = turn_id, side = side, path = path }
  vim.keymap.set('n', 'gf', goto_file, { buffer = buf, desc = 'rewind: the file under the cursor at this turn' })
end

--- BufReadCmd of `rewind-turn://*`: fills the buffer from the server.
function M.load(buf)
  local turn_id, side, path = M.parse(vim.api.nvim_buf_get_name(buf))
  setup_buffer(buf)
  if not turn_id then
    fill(buf, { '" rewind: not a rewind-turn:// name' })
    return
  end
  local client = client_for(turn_id)
  if not client then
    fill(buf, { '" rewind: rewind-ls is not running for this workspace (:Rewind browse {n} starts it)' })
    return
  end
  if path == '' or path:sub(-1) == '/' then
    load_folder(buf, client, turn_id, side, path)
  else
    load_file(buf, client, turn_id, side, path)
  end
end

--- Opens the listing of the workspace's root at `turn` (in a coroutine, from `:Rewind browse`).
function M.open(client, turn, side)
  clients[turn.id] = client.id
  local name = M.name(turn.id, side, '')
  vim.schedule(function()
    open(name)
  end)
  return {
    status = 'shown',
    message = string.format('Turn #%d at its %s, read-only: <CR> opens, - goes up', turn.number, side == 'after' and 'end' or 'start'),
    name = name,
  }
end

return M
