--- Options of rewind.nvim: defaults, merging, and resolving the server command.
local M = {}

---@class rewind.Options
---@field cmd? string[]|fun(dispatchers: table): table  Server command (default: see |rewind-cmd|).
---@field cmd_env? table<string,string>                  Extra environment for the server process.
---@field root_dir? fun(bufnr: integer): string?         Workspace root of a buffer (nil: do not attach).
---@field autostart? boolean                              Attach to file buffers automatically (true).
---@field init_options? table                             initializationOptions ({ closedFiles = "server", didChangeTurns = true, restoreUnsaved = true }).
---@field default_scope? '"code"'|'"conversation"'|'"both"'
---@field confirm? boolean                                Preview and ask before every restore (true).
---@field write_unmodified? boolean                       Write buffers that were unmodified before a restore.
---@field registers? { resume: string|false, prompt: string|false, clipboard: boolean }  Opt-in (all off).
---@field signs? boolean                                  Signs on lines the agent changed in the latest turn.
---@field mappings? boolean                               The default keys (|rewind-mappings|); off: <Plug> only.
---@field diff_side? '"before"'|'"after"'                 Side of the turn shown by :Rewind diff.
---@field log_open? string                                Ex command that opens the timeline (e.g. "edit", "split").
---@field request_timeout? integer                        ms for synchronous requests (completion).
---@field summarizer? string                              Shell command for "Summarize" (REWIND_LS_SUMMARIZER).

M.defaults = {
  cmd = nil, -- resolved lazily: { "rewind-ls", "serve" } or { "python3", "-m", "rewind_ls", "serve" }
  cmd_env = nil,
  root_dir = nil,
  autostart = true,
  init_options = { closedFiles = 'server', didChangeTurns = true, restoreUnsaved = true },
  default_scope = 'code',
  -- The preview before every restore (files, +/- lines, a diff per file); false: restores without
  -- conflicts are written at once.
  confirm = true,
  write_unmodified = true,
  -- Off by default: a register is the person's; a conversation rewind writes one only when asked to.
  registers = { resume = false, prompt = false, clipboard = false },
  signs = false,
  mappings = false,
  diff_side = 'before',
  log_open = 'edit',
  request_timeout = 2000,
  summarizer = nil, -- nil: the agent's own `claude -p`
}

M.options = vim.deepcopy(M.defaults)

---@param opts? rewind.Options
function M.set(opts)
  M.options = vim.tbl_deep_extend('force', vim.deepcopy(M.defaults), opts or {})
  -- A list is replaced, never merged element by element.
  if opts and opts.cmd then
    M.options.cmd = opts.cmd
  end
  return M.options
end

--- The server's extra environment: `cmd_env`, with `summarizer` as REWIND_LS_SUMMARIZER.
function M.server_env()
  local env = M.options.cmd_env
  if M.options.summarizer and M.options.summarizer ~= '' then
    env = vim.tbl_extend('force', env or {}, { REWIND_LS_SUMMARIZER = M.options.summarizer })
  end
  return env
end

--- The server command: the configured one, else `rewind-ls serve`, else `python3 -m rewind_ls serve`.
---@return string[]|function cmd
---@return string source  "setup", "rewind-ls" or "python3"
function M.cmd()
  local cmd = M.options.cmd
  if cmd then
    return cmd, 'setup'
  end
  if vim.fn.executable('rewind-ls') == 1 then
    return { 'rewind-ls', 'serve' }, 'rewind-ls'
  end
  return { 'python3', '-m', 'rewind_ls', 'serve' }, 'python3'
end

--- The server command with its trailing `serve` replaced by `args` (for --version, doctor).
---@param args string[]
---@return string[]?
function M.cli(args)
  local cmd = M.cmd()
  if type(cmd) ~= 'table' then
    return nil
  end
  local out = {}
  for i, a in ipairs(cmd) do
    if a == 'serve' then
      break
    end
    out[i] = a
  end
  vim.list_extend(out, args)
  return out
end

return M
