--- Starting rewind-ls, finding its client for a buffer or the cwd, and talking to it.
---
--- Neovim 0.11+: `vim.lsp.config('rewind', ...)` + `vim.lsp.enable('rewind')`, plus a BufReadPost/BufNewFile
--- autocmd for buffers that never get a FileType event (no detected filetype): the server must see every
--- open buffer of the workspace for its compare-and-swap. Neovim 0.8-0.10: `vim.lsp.start` from the same
--- autocmds.
local config = require('rewind.config')
local async = require('rewind.async')

local M = {}

M.name = 'rewind'

local has_011 = vim.fn.has('nvim-0.11') == 1
local uv = vim.uv or vim.loop

--- Documents outside any workspace that belong to a client (the timeline): file name -> root.
M.extra_docs = {}

--- Calls a client method on 0.11 (`client:m()`) and on older versions (`client.m()`).
function M.call(client, method, ...)
  if has_011 then
    return client[method](client, ...)
  end
  return client[method](...)
end

function M.get_clients(filter)
  if vim.lsp.get_clients then
    return vim.lsp.get_clients(filter)
  end
  return vim.lsp.get_active_clients(filter) ---@diagnostic disable-line: deprecated
end

local function normalize(path)
  if not path or path == '' then
    return nil
  end
  path = vim.fn.fnamemodify(path, ':p')
  path = vim.fs.normalize(path)
  if #path > 1 and path:sub(-1) == '/' then
    path = path:sub(1, -2)
  end
  return path
end
M.normalize = normalize

local function git_root(dir)
  local found = vim.fs.find('.git', { path = dir, upward = true, limit = 1 })[1]
  return found and normalize(vim.fs.dirname(found)) or nil
end

local function is_under(path, root)
  return path == root or vim.startswith(path, root == '/' and root or root .. '/')
end

M.NO_CWD = 'the current directory no longer exists: :cd to your project first'

--- The workspace of the current directory: its git top level, else the directory itself; nil when the
--- current directory was deleted (getcwd() is then empty).
---@return string?
function M.cwd_root()
  local cwd = normalize(vim.fn.getcwd())
  if not cwd or vim.fn.isdirectory(cwd) == 0 then
    return nil
  end
  return git_root(cwd) or cwd
end

--- The workspace root of a buffer, or nil when rewind-ls should not attach to it.
---@param bufnr integer
---@return string?
function M.root_for_buf(bufnr)
  if bufnr == 0 then
    bufnr = vim.api.nvim_get_current_buf()
  end
  if not vim.api.nvim_buf_is_valid(bufnr) or vim.bo[bufnr].buftype ~= '' then
    return nil
  end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or name:match('^%a[%w+.-]*://') then
    return nil -- unnamed, or not a file (fugitive://, oil://, ...)
  end
  local fname = normalize(name)
  if M.extra_docs[fname] then
    return M.extra_docs[fname]
  end
  if config.options.root_dir then
    local root = config.options.root_dir(bufnr)
    return root and normalize(root) or nil
  end
  local root = git_root(vim.fs.dirname(fname))
  if root then
    return root
  end
  local cwd = normalize(vim.fn.getcwd())
  if cwd and is_under(fname, cwd) then
    return cwd
  end
  return nil
end

local function on_did_change_turns(err, params, ctx)
  if err then
    return
  end
  require('rewind.events').did_change_turns(params or {}, ctx)
end

--- The LSP client configuration shared by every Neovim version (without root_dir).
function M.lsp_config()
  local cmd = config.cmd()
  return {
    name = M.name,
    cmd = cmd,
    cmd_env = config.server_env(),
    init_options = config.options.init_options,
    -- Send every change at once: the server verifies applied edits and compares buffers before it
    -- overwrites anything, so it must never look at a text that is 150 ms old.
    flags = { debounce_text_changes = 0 },
    handlers = {
      ['rewind/didChangeTurns'] = on_did_change_turns,
      ['window/showMessage'] = function(...)
        return require('rewind.review').on_show_message(...)
      end,
    },
    commands = require('rewind.lens').commands(),
  }
end

local enabled = false

--- Attaches rewind-ls to `bufnr` when it is a file buffer inside a workspace.
function M.attach(bufnr)
  if not enabled or not vim.api.nvim_buf_is_valid(bufnr) or not vim.api.nvim_buf_is_loaded(bufnr) then
    return nil
  end
  if M.get_clients({ name = M.name, bufnr = bufnr })[1] then
    return M.get_clients({ name = M.name, bufnr = bufnr })[1].id
  end
  local root = M.root_for_buf(bufnr)
  if not root then
    return nil
  end
  local cfg
  if has_011 then
    cfg = vim.deepcopy(vim.lsp.config[M.name] or M.lsp_config())
  else
    cfg = M.lsp_config()
  end
  cfg.root_dir = root
  cfg.workspace_folders = nil
  return vim.lsp.start(cfg, { bufnr = bufnr })
end

--- Registers the server with Neovim and attaches it to the buffers that are already open.
function M.enable()
  local group = vim.api.nvim_create_augroup('rewind.attach', { clear = true })
  enabled = true
  if has_011 then
    local cfg = M.lsp_config()
    cfg.root_dir = function(bufnr, on_dir)
      local root = M.root_for_buf(bufnr)
      if root then
        on_dir(root)
      end
    end
    vim.lsp.config(M.name, cfg)
    vim.lsp.enable(M.name)
  end
  vim.api.nvim_create_autocmd({ 'BufReadPost', 'BufNewFile', 'BufFilePost', 'FileType' }, {
    group = group,
    callback = function(ev)
      vim.schedule(function()
        M.attach(ev.buf)
      end)
    end,
  })
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    M.attach(bufnr)
  end
end

function M.disable()
  enabled = false
  pcall(vim.api.nvim_del_augroup_by_name, 'rewind.attach')
  if has_011 then
    vim.lsp.enable(M.name, false)
  end
  for _, client in ipairs(M.get_clients({ name = M.name })) do
    M.call(client, 'stop')
  end
end

function M.is_enabled()
  return enabled
end

--- The client for commands: the one attached to `bufnr` (default: current), else the one of the cwd's
--- workspace; started (without a buffer) when there is none.
---@return table? client
---@return string? err
function M.get(bufnr)
  bufnr = (bufnr == nil or bufnr == 0) and vim.api.nvim_get_current_buf() or bufnr
  local attached = M.get_clients({ name = M.name, bufnr = bufnr })[1]
  if attached then
    return attached
  end
  local root = M.root_for_buf(bufnr) or M.cwd_root()
  if not root then
    return nil, M.NO_CWD
  end
  for _, client in ipairs(M.get_clients({ name = M.name })) do
    if client.root_dir and normalize(client.root_dir) == root then
      return client
    end
  end
  local cfg = has_011 and vim.deepcopy(vim.lsp.config[M.name] or M.lsp_config()) or M.lsp_config()
  cfg.root_dir = root
  cfg.workspace_folders = nil
  local id
  if has_011 then
    id = vim.lsp.start(cfg, { attach = false, bufnr = bufnr })
  else
    id = vim.lsp.start_client(cfg) ---@diagnostic disable-line: deprecated
  end
  local client = id and vim.lsp.get_client_by_id(id)
  if not client then
    return nil, 'rewind-ls could not be started (see :checkhealth rewind)'
  end
  return client
end

local function stopped(client)
  local ok, res = pcall(M.call, client, 'is_stopped')
  return ok and res
end

--- Waits (in a coroutine) until the client finished `initialize`. Returns an error message on failure.
function M.ready(client, timeout_ms)
  local deadline = uv.now() + (timeout_ms or 30000)
  while not client.initialized do
    if stopped(client) then
      return 'rewind-ls exited during start-up (see :checkhealth rewind and :LspLog)'
    end
    if uv.now() > deadline then
      return 'rewind-ls did not finish starting in time'
    end
    async.sleep(20)
  end
  return nil
end

--- A request, awaited inside a coroutine. Returns err (a table with `message`, or nil) and result.
function M.request(client, method, params)
  return async.await(function(cb)
    local ok = M.call(client, 'request', method, params or vim.empty_dict(), function(err, result)
      cb(err, result)
    end)
    if not ok then
      cb({ message = 'rewind-ls is not running' }, nil)
    end
  end)
end

--- The client, initialized, inside a coroutine; or nil and a message.
function M.ready_client(bufnr)
  local client, err = M.get(bufnr)
  if not client then
    return nil, err
  end
  err = M.ready(client)
  if err then
    return nil, err
  end
  return client
end

--- A synchronous request (for completion): result or nil.
function M.request_sync(client, method, params, timeout)
  if not client or not client.initialized then
    return nil
  end
  local res = M.call(client, 'request_sync', method, params or vim.empty_dict(), timeout or 1000, 0)
  if res and not res.err then
    return res.result
  end
  return nil
end

return M
