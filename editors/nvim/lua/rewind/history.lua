--- `:Rewind history [path]`: one file's recorded versions (local history: each agent turn's version and
--- each of the person's own, edits between turns included), newest first, in a picker; the chosen
--- version is restored through the usual flow (`rewind/preview` then `rewind/restore` with mode
--- "version", compare-and-swap, a restore point so `:Rewind undo` takes it back). The file may no
--- longer exist: its versions are still listed by name.
local async = require('rewind.async')
local config = require('rewind.config')
local rpc = require('rewind.client')

local M = {}

local levels = vim.log.levels

local function say(msg, level)
  require('rewind.message').say(msg, nil, level)
end

--- "2026-11-28 12:04  your edit   3f2a9c01  <prompt>" for one version of `rewind/fileVersions`.
function M.label(v)
  local when = (v.time or 'first seen'):gsub('T', ' '):gsub('Z$', ''):sub(1, 16)
  local hash = v.hash and v.hash:sub(1, 8) or (v.kind or '-')
  local prompt = (v.prompt or ''):gsub('%s+', ' ')
  return string.format('%-16s  %-10s  %-8s  %s', when, v.source, hash, prompt)
end

--- The file's URI: `path` (relative to the cwd) or the current buffer's.
local function uri_of(path)
  if path and path ~= '' then
    return vim.uri_from_fname(vim.fn.fnamemodify(path, ':p'))
  end
  local name = vim.api.nvim_buf_get_name(0)
  if name == '' then
    return nil
  end
  return vim.uri_from_fname(name)
end

--- Lists the versions, lets the person pick one, restores it (in a coroutine). Returns the outcome.
function M.history(client, path)
  local uri = uri_of(path)
  if not uri then
    say('rewind: history of which file? (:Rewind history PATH, or from a file buffer)', levels.ERROR)
    return { status = 'error', message = 'no file' }
  end
  local restore = require('rewind.restore')
  local err, res = rpc.request(client, 'rewind/fileVersions', { uri = uri })
  if err then
    local msg = restore.err_message(err)
    say('rewind: ' .. msg, levels.ERROR)
    return { status = 'error', message = msg, error = err }
  end
  local restorable = {}
  for _, v in ipairs(res.versions or {}) do
    if v.hash ~= nil and v.hash ~= vim.NIL and v.kind == 'file' then
      restorable[#restorable + 1] = v
    end
  end
  if #restorable == 0 then
    say(string.format('rewind: %s: no recorded version to restore', res.path))
    return { status = 'nothing-to-do', message = 'no version' }
  end
  local chosen = async.select(restorable, {
    prompt = string.format('Restore which version of %s (newest first)?', res.path),
    kind = 'rewind.history',
    format_item = M.label,
  })
  if not chosen then
    return { status = 'cancelled', message = 'cancelled' }
  end
  local short = chosen.hash:sub(1, 8)
  local title = string.format('Restore %s to version %s', res.path, short)
  local params = { turnId = chosen.turnId, mode = 'version', scope = 'code', paths = { uri }, version = chosen.hash }
  local perr, preview = rpc.request(client, 'rewind/preview', params)
  if perr then
    local msg = restore.err_message(perr)
    say(title .. ': ' .. msg, levels.ERROR)
    return { status = 'error', message = msg, error = perr }
  end
  if (preview.conflicts or 0) == 0 and config.options.confirm then
    local go = string.format('%s (nothing is written before this)', title)
    local yes = async.select({ go, 'Cancel' }, { prompt = title .. '?', kind = 'rewind.preview' })
    if yes ~= go then
      say(title .. ': cancelled, nothing was changed.')
      return { status = 'cancelled', message = 'cancelled', preview = preview }
    end
  end
  return restore.send(client, 'rewind/restore', params, title, 'code')
end

return M
