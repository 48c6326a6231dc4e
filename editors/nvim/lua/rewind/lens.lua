--- Code lens clicks and code actions: the server's commands (`rewind.rewind`, `rewind.revert`, `rewind.undo`,
--- `rewind.diff`, and the code actions' `rewind.revertHunk` / `rewind.revertInFile`) go through the plugin's
--- own flow, and a restore from a lens or an action always shows its preview and asks first, even with no
--- conflict and `confirm = false` (one click must never write at once); the buffers it changed are
--- written like after every other restore.
local M = {}

function M.commands()
  local function args(command)
    return command.arguments or {}
  end
  return {
    ['rewind.rewind'] = function(command)
      local a = args(command)
      require('rewind').rewind(a[1], a[2], { confirm = true })
    end,
    ['rewind.revert'] = function(command)
      require('rewind').revert(args(command)[1], { confirm = true })
    end,
    ['rewind.undo'] = function()
      require('rewind').undo()
    end,
    ['rewind.revertHunk'] = function(command)
      local a = args(command)
      require('rewind').revert_change(a[1], a[2], a[3])
    end,
    ['rewind.revertInFile'] = function(command)
      local a = args(command)
      require('rewind').revert_change(a[1], a[2], nil)
    end,
    ['rewind.diff'] = function(command)
      local a = args(command)
      require('rewind').diff(a[1], a[2] and vim.uri_to_fname(a[2]) or nil)
    end,
  }
end

return M
