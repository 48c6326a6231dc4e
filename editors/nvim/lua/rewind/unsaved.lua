--- Exact undo over unsaved buffers: after a restore's buffers are written, put back the unsaved text the
--- server lists (`result.unsaved`), left modified, so the disk keeps its last saved bytes.
local M = {}

--- Paths of `result.unsaved` (the buffers this module brings back), as a set.
function M.paths(result)
  local out = {}
  for _, u in ipairs(result.unsaved or {}) do
    out[u.path] = true
  end
  return out
end

--- Applies each unsaved text of `result` to its buffer (loading it if the person had closed it) without
--- writing it. Returns the paths brought back and the errors ("path: reason").
function M.restore(client, result)
  local back, errors = {}, {}
  local failed = {}
  for _, p in ipairs(result.failed or {}) do
    failed[p] = true
  end
  if result.status == 'conflict' then
    return back, errors
  end
  for _, u in ipairs(result.unsaved or {}) do
    if not failed[u.path] and type(u.edit) == 'table' then
      local ok, err = pcall(vim.lsp.util.apply_workspace_edit, u.edit, client.offset_encoding or 'utf-16')
      if ok then
        local b = vim.fn.bufnr(vim.uri_to_fname(u.uri))
        if b > 0 then
          vim.bo[b].buflisted = true
        end
        back[#back + 1] = u.path
      else
        errors[#errors + 1] = string.format('%s: %s', u.path, tostring(err))
      end
    end
  end
  return back, errors
end

return M
