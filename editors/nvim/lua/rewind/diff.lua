--- `:Rewind diff {n} [path]`: a vertical diff split, the file as it was at turn n (a scratch buffer,
--- from `rewind/fileAt`) against the current buffer of that file.
local async = require('rewind.async')
local config = require('rewind.config')
local rpc = require('rewind.client')

local M = {}

--- `text` (nil: empty) as buffer lines: no final empty line, no CR of a CRLF.
function M.to_lines(text)
  local lines = vim.split(text or '', '\n', { plain = true })
  if #lines > 0 and lines[#lines] == '' then
    table.remove(lines)
  end
  for i, l in ipairs(lines) do
    lines[i] = l:gsub('\r$', '')
  end
  return lines
end
local to_lines = M.to_lines

--- Absolute file name of `path` (absolute, or relative to the client's root).
local function resolve_path(client, path)
  if path:sub(1, 1) == '/' then
    return rpc.normalize(path)
  end
  return rpc.normalize((client.root_dir or vim.fn.getcwd()) .. '/' .. path)
end

local function relative(client, fname)
  local root = client.root_dir and rpc.normalize(client.root_dir)
  if root and vim.startswith(fname, root .. '/') then
    return fname:sub(#root + 2)
  end
  return fname
end

--- Shows the diff (in a coroutine). Returns the outcome table.
function M.run(client, turn, path)
  local fname
  if path and path ~= '' then
    fname = resolve_path(client, path)
  else
    local cur = vim.api.nvim_buf_get_name(0)
    local cur_norm = cur ~= '' and rpc.normalize(cur) or nil
    for _, f in ipairs(turn.files or {}) do
      if cur_norm and rpc.normalize(vim.uri_to_fname(f.uri)) == cur_norm then
        fname = cur_norm
      end
    end
    if not fname then
      local files = turn.files or {}
      if #files == 0 then
        return { status = 'error', message = string.format('turn #%d changed no files', turn.number) }
      elseif #files == 1 then
        fname = rpc.normalize(vim.uri_to_fname(files[1].uri))
      else
        local f = async.select(files, {
          prompt = string.format('Diff which file of turn #%d?', turn.number),
          kind = 'rewind.file',
          format_item = function(item)
            return string.format('%s (%s)', item.path, item.change)
          end,
        })
        if not f then
          return { status = 'cancelled', message = 'cancelled' }
        end
        fname = rpc.normalize(vim.uri_to_fname(f.uri))
      end
    end
  end
  local side = config.options.diff_side or 'before'
  local err, res = rpc.request(client, 'rewind/fileAt', { turnId = turn.id, uri = vim.uri_from_fname(fname), side = side })
  if err then
    return { status = 'error', message = require('rewind.restore').err_message(err), error = err }
  end
  if res.binary then
    return { status = 'error', message = relative(client, fname) .. ' is binary: no text diff' }
  end
  if res.tooLarge then
    return { status = 'error', message = relative(client, fname) .. ' was too large to record' }
  end

  -- The person's side: the buffer of the file (opened when it is not the current one).
  if rpc.normalize(vim.api.nvim_buf_get_name(0) ~= '' and vim.api.nvim_buf_get_name(0) or '/') ~= fname then
    vim.cmd('edit ' .. vim.fn.fnameescape(fname))
  end
  local target_win = vim.api.nvim_get_current_win()
  local target_buf = vim.api.nvim_get_current_buf()

  local name = string.format('rewind://%d/%s/%s', turn.number, side, relative(client, fname))
  local old = vim.fn.bufnr('^' .. vim.fn.escape(name, '\\/.*$^~[]') .. '$')
  if old > 0 then
    pcall(vim.api.nvim_buf_delete, old, { force = true })
  end
  vim.cmd('leftabove vnew')
  local scratch = vim.api.nvim_get_current_buf()
  vim.bo[scratch].buftype = 'nofile'
  vim.bo[scratch].bufhidden = 'wipe'
  vim.bo[scratch].swapfile = false
  vim.api.nvim_buf_set_lines(scratch, 0, -1, false, res.exists and to_lines(res.text) or {})
  vim.api.nvim_buf_set_name(scratch, name)
  vim.bo[scratch].modifiable = false
  vim.bo[scratch].modified = false
  local ft = vim.bo[target_buf].filetype
  if ft ~= '' then
    vim.bo[scratch].filetype = ft
  end
  vim.b[scratch].rewind_diff = { turn = turn.id, number = turn.number, side = side, file = fname }
  vim.cmd('diffthis')
  vim.api.nvim_set_current_win(target_win)
  vim.cmd('diffthis')
  local msg = string.format('Diff: %s %s turn #%d (left) vs now (right)', relative(client, fname), side == 'before' and 'before' or 'after', turn.number)
  if not res.exists then
    msg = msg .. string.format('; the file did not exist %s the turn', side == 'before' and 'before' or 'after')
  end
  return { status = 'shown', message = msg, scratch = scratch, target = target_buf }
end

return M
