--- `:checkhealth rewind`: Neovim version, the server command and its version, the store location,
--- each agent's hooks as `rewind-ls doctor` sees them, the Claude Code hooks of the workspace by
--- settings file, and the running client.
local M = {}

local health = vim.health or require('health')
local start = health.start or health.report_start
local ok = health.ok or health.report_ok
local warn = health.warn or health.report_warn
local error_ = health.error or health.report_error
local info = health.info or health.report_info

--- Runs a command; returns exit code, stdout, stderr (code -1 when it could not run or timed out).
local function run(cmd, timeout, cwd)
  local env = require('rewind.config').options.cmd_env
  if vim.system then
    local okk, proc = pcall(vim.system, cmd, { text = true, env = env, cwd = cwd })
    if not okk then
      return -1, '', tostring(proc)
    end
    local res = proc:wait(timeout or 10000)
    if res.signal and res.signal ~= 0 and res.code == 0 then
      return -1, res.stdout or '', 'timed out'
    end
    return res.code, res.stdout or '', res.stderr or ''
  end
  local out = vim.fn.system(cmd)
  return vim.v.shell_error, out, ''
end

local function first_line(s)
  return (vim.split(vim.trim(s or ''), '\n', { plain = true })[1] or '')
end

local function check_neovim()
  local v = vim.version()
  local version = string.format('%d.%d.%d', v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.11') == 1 then
    ok('Neovim ' .. version .. ' (vim.lsp.config + vim.lsp.enable)')
  elseif vim.fn.has('nvim-0.8') == 1 then
    warn('Neovim ' .. version .. ': works through vim.lsp.start; 0.11 or newer is the tested version')
  else
    error_('Neovim ' .. version .. ' is too old: rewind.nvim needs 0.8 or newer')
  end
end

local function check_server(config)
  local cmd, source = config.cmd()
  if type(cmd) ~= 'table' then
    info('server command is a function (set in setup()); not checked')
    return false
  end
  local shown = table.concat(cmd, ' ')
  if vim.fn.executable(cmd[1]) ~= 1 then
    error_(string.format('server command not found: %s', shown), {
      'Install rewind-ls (pipx install rewind-ls, or pip install -e . in its repository)',
      'or set the command: require("rewind").setup({ cmd = { "/path/to/rewind-ls", "serve" } })',
    })
    return false
  end
  local origin = source == 'setup' and 'from setup()' or 'default'
  if source == 'python3' then
    info('`rewind-ls` is not on PATH: trying the fallback python3 -m rewind_ls')
  end
  -- The command is OK only once it runs: an executable python3 without rewind_ls is a broken fallback.
  local version_cmd = config.cli({ '--version' })
  local code, out, err = run(version_cmd, 15000)
  if code == 0 then
    ok(string.format('server command: %s (%s)', shown, origin))
    ok('version: ' .. first_line(out ~= '' and out or err))
    return true
  end
  error_(string.format('server command: %s (%s) does not run: `%s` exited %d: %s', shown, origin, table.concat(version_cmd, ' '), code, first_line(err ~= '' and err or out)), {
    source == 'python3' and 'Install rewind-ls (pipx install rewind-ls) so that `rewind-ls` is on PATH'
      or 'Check that this Python environment has rewind-ls and its dependencies installed',
    'or set the command: require("rewind").setup({ cmd = { "/path/to/rewind-ls", "serve" } })',
  })
  return false
end

local function default_store()
  local env = require('rewind.config').options.cmd_env or {}
  local home = env.REWIND_LS_HOME or vim.env.REWIND_LS_HOME
  if home and home ~= '' then
    return home, 'REWIND_LS_HOME'
  end
  local data = vim.env.XDG_DATA_HOME
  if not data or data == '' then
    data = (vim.env.HOME or '~') .. '/.local/share'
  end
  return data .. '/rewind-ls', 'default'
end

local function writable_dir(path)
  -- The store, or the nearest existing parent it would be created in.
  local p = path
  while p and p ~= '' and vim.fn.isdirectory(p) == 0 do
    local parent = vim.fs.dirname(p)
    if parent == p then
      break
    end
    p = parent
  end
  return p and vim.fn.filewritable(p) == 2, p
end

--- Whether a doctor check is about an agent's hooks (shown in their own section, one line per
--- agent), not the store. The hook server is the store's side: it serves every agent.
local function agent_check(name)
  name = name:lower()
  return (name:find('hook') ~= nil and name ~= 'hook server') or name:find('worktrees') ~= nil
end

local function check_store(config, server_ok, root)
  local store, why = default_store()
  local agents = {}
  if server_ok then
    local doctor = config.cli({ 'doctor', '--json' })
    local code, out = run(doctor, 20000, root)
    local decoded_ok, report = pcall(vim.json.decode, out or '')
    if decoded_ok and type(report) == 'table' then
      -- { ok, workspace, storeDir, checks = [{ name, ok, detail }] }
      if type(report.storeDir) == 'string' then
        store, why = report.storeDir, 'from rewind-ls doctor'
      end
      for _, c in ipairs(type(report.checks) == 'table' and report.checks or {}) do
        -- Hooks get their own sections below (per agent, and Claude Code's per settings file).
        if type(c) == 'table' and agent_check(tostring(c.name)) then
          agents[#agents + 1] = c
        elseif type(c) == 'table' and not tostring(c.name):lower():find('hook') then
          local line = string.format('doctor: %s: %s', tostring(c.name), tostring(c.detail or ''))
          if c.ok then
            ok(line)
          else
            warn(line)
          end
        end
      end
      if code ~= 0 and report.ok ~= false then
        warn(string.format('`%s` exited %d', table.concat(doctor, ' '), code))
      end
    else
      info('`rewind-ls doctor --json` gave no report; checking the store location directly')
    end
  end
  local writable, existing = writable_dir(store)
  if writable then
    ok(string.format('store: %s (%s), writable%s', store, why, existing ~= store and ' (will be created)' or ''))
  else
    error_(string.format('store: %s (%s) is not writable', store, why), {
      'Set REWIND_LS_HOME to a directory you own, or fix the permissions of ' .. tostring(existing),
    })
  end
  return agents
end

--- `rewind-ls doctor`'s line for each agent: its hooks installed and running (with what the agent
--- still asks first), failing, or not installed and where `install` would put them.
local function check_agents(agents)
  if #agents == 0 then
    info('`rewind-ls doctor` gave no agent lines (the server command does not run)')
    return
  end
  for _, c in ipairs(agents) do
    local detail = tostring(c.detail or '')
    local line = string.format('%s: %s', tostring(c.name), detail)
    if c.ok and vim.startswith(detail, 'not installed') then
      info(line)
    elseif c.ok then
      ok(line)
    elseif tostring(c.name) == 'agent hooks' then
      warn(line)
    else
      error_(line)
    end
  end
end

local HOOK_EVENTS = { 'UserPromptSubmit', 'PreToolUse', 'PostToolUse', 'Stop' }

--- Events of a Claude Code settings file whose hook commands run `rewind-ls hook claude-code`.
local function hooked_events(path)
  local fd = io.open(path, 'r')
  if not fd then
    return nil
  end
  local text = fd:read('*a')
  fd:close()
  local decoded, settings = pcall(vim.json.decode, text)
  if not decoded or type(settings) ~= 'table' then
    return nil, 'not valid JSON'
  end
  local found, commands = {}, {}
  for event, matchers in pairs(type(settings.hooks) == 'table' and settings.hooks or {}) do
    for _, m in ipairs(type(matchers) == 'table' and matchers or {}) do
      for _, h in ipairs(type(m) == 'table' and type(m.hooks) == 'table' and m.hooks or {}) do
        local c = type(h) == 'table' and h.command or nil
        if type(c) == 'string' and (c:find('rewind%-ls') or c:find('rewind_ls')) and c:find('hook') then
          found[event] = true
          commands[c] = true
        end
      end
    end
  end
  return found, nil, commands
end

--- The program a hook command runs (its first word, quotes removed), when it cannot be run from here.
local function unrunnable(command)
  local word = command:match('^%s*"([^"]+)"') or command:match("^%s*'([^']+)'") or command:match('^%s*(%S+)')
  if not word or word:find('%$') then
    return nil -- an environment variable ($CLAUDE_PROJECT_DIR/...): not resolvable here
  end
  if vim.fn.executable(word) == 1 then
    return nil
  end
  return word
end

local function check_hooks(root)
  local files = {
    root .. '/.claude/settings.json',
    root .. '/.claude/settings.local.json',
    (vim.env.HOME or '~') .. '/.claude/settings.json',
  }
  local all, broken = {}, {}
  for _, f in ipairs(files) do
    local found, err, commands = hooked_events(f)
    if err then
      warn(f .. ': ' .. err)
    elseif found and next(found) then
      info(string.format('%s: hooks for %s', f, table.concat(vim.tbl_keys(found), ', ')))
      for e in pairs(found) do
        all[e] = true
      end
      for c in pairs(commands or {}) do
        local prog = unrunnable(c)
        if prog then
          broken[#broken + 1] = string.format('%s (in %s)', prog, f)
        end
      end
    end
  end
  if #broken > 0 then
    warn('hook command not found on PATH: ' .. table.concat(broken, ', ') .. ': the agent\'s turns are not recorded', {
      'Install rewind-ls so that the hook command is on PATH (pipx install rewind-ls),',
      'or run `rewind-ls install claude-code` again with the rewind-ls you use (it writes its full path)',
    })
    return
  end
  local missing = vim.tbl_filter(function(e)
    return not all[e]
  end, HOOK_EVENTS)
  if #missing == 0 then
    ok('Claude Code hooks installed (' .. table.concat(HOOK_EVENTS, ', ') .. ')')
  elseif #missing == #HOOK_EVENTS then
    warn('Claude Code hooks are not installed for ' .. root .. ': agent turns will not be recorded', {
      'Run `rewind-ls install claude-code` in ' .. root .. ' (or `--user` for every project)',
    })
  else
    warn('Claude Code hooks missing for: ' .. table.concat(missing, ', '), {
      'Run `rewind-ls install claude-code` again: it keeps your other hooks',
    })
  end
end

local function check_client(rpc)
  local clients = rpc.get_clients({ name = rpc.name })
  if #clients == 0 then
    info('no rewind-ls client running yet (it starts with the first file buffer of a workspace)')
    return
  end
  for _, c in ipairs(clients) do
    local stopped = false
    pcall(function()
      stopped = rpc.call(c, 'is_stopped')
    end)
    local msg = string.format('client %d: root %s, position encoding %s%s', c.id, tostring(c.root_dir), tostring(c.offset_encoding), stopped and ' (stopped)' or '')
    if stopped then
      warn(msg)
    else
      ok(msg)
    end
  end
end

function M.check()
  local config = require('rewind.config')
  local rpc = require('rewind.client')
  start('rewind: Neovim')
  check_neovim()
  start('rewind: server')
  local server_ok = check_server(config)
  local root = rpc.cwd_root()
  start('rewind: store')
  local agents = check_store(config, server_ok, root)
  start('rewind: agent hooks')
  check_agents(agents)
  if root then
    start('rewind: Claude Code hooks (' .. root .. ')')
    check_hooks(root)
  else
    start('rewind: Claude Code hooks')
    error_(rpc.NO_CWD)
  end
  start('rewind: clients')
  if not rpc.is_enabled() then
    info('not started: setup() was not called yet, or vim.g.rewind_autostart = false')
  end
  check_client(rpc)
end

return M
