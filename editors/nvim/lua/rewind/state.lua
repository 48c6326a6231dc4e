--- What the plugin is doing and what its last operation answered (for statuslines, tests and
--- `require('rewind').status()`). Every operation ends with `User RewindDone`.
local M = {
  busy = nil, ---@type string? name of the running operation
  seq = 0, ---@type integer operations finished so far
  last = nil, ---@type table? { op, status, message, result?, error? }
}

--- The statuslines show "⟲ op…" while an operation runs and the turn count after: redrawn at once.
local function redraw_status()
  vim.schedule(function()
    pcall(vim.cmd, 'redrawstatus!')
  end)
end

function M.begin(op)
  if M.busy then
    return false
  end
  M.busy = op
  redraw_status()
  return true
end

---@param op string
---@param info table { status, message, result?, error? }
function M.finish(op, info)
  M.busy = nil
  M.seq = M.seq + 1
  info.op = op
  info.seq = M.seq
  M.last = info
  redraw_status()
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'RewindDone',
    modeline = false,
    data = { op = op, status = info.status, message = info.message },
  })
end

return M
