--- Server notifications: `rewind/didChangeTurns` (turns recorded by any process, e.g. the agent's hook).
local M = {}

function M.did_change_turns(params, ctx)
  require('rewind.turns').invalidate(ctx and ctx.client_id)
  require('rewind.log').refresh_all(ctx and ctx.client_id)
  vim.api.nvim_exec_autocmds('User', {
    pattern = 'RewindTurnsChanged',
    modeline = false,
    data = { client_id = ctx and ctx.client_id, session_ids = params.sessionIds, reason = params.reason },
  })
end

return M
