--- Coroutines for callback APIs (LSP requests, vim.ui.select), so each flow reads top to bottom.
local M = {}

local function report(err)
  vim.schedule(function()
    vim.notify('rewind: internal error: ' .. tostring(err), vim.log.levels.ERROR)
  end)
end

local function resume(co, ...)
  local ok, err = coroutine.resume(co, ...)
  if not ok then
    report(debug.traceback(co, err))
  end
end

--- Runs `fn(...)` in a new coroutine; `on_done` (optional) runs after it, even when it errors.
function M.run(fn, on_done, ...)
  local args = { n = select('#', ...), ... }
  local co
  co = coroutine.create(function()
    local ok, err = xpcall(function()
      fn(unpack(args, 1, args.n))
    end, debug.traceback)
    if on_done then
      on_done(ok, err)
    end
    if not ok then
      error(err, 0)
    end
  end)
  resume(co)
end

--- Waits (inside M.run) for `start(callback)` to call its callback; returns the callback's arguments.
function M.await(start)
  local co = coroutine.running()
  assert(co, 'rewind.async.await outside a coroutine')
  local result, finished, yielded = nil, false, false
  start(function(...)
    if finished then
      return
    end
    result = { n = select('#', ...), ... }
    finished = true
    if yielded then
      resume(co)
    end
  end)
  if not finished then
    yielded = true
    coroutine.yield()
  end
  return unpack(result, 1, result.n)
end

--- vim.ui.select as a value: returns the chosen item (nil when cancelled) and its index.
function M.select(items, opts)
  return M.await(function(cb)
    vim.ui.select(items, opts, function(choice, idx)
      -- Some pickers call back inside a textlock; resume on the main loop.
      vim.schedule(function()
        -- The built-in select (inputlist) leaves its list on screen: a message now would ask to
        -- "Press ENTER". A redraw first clears it.
        vim.cmd('redraw')
        cb(choice, idx)
      end)
    end)
  end)
end

--- Sleeps `ms` inside a coroutine without blocking the editor.
function M.sleep(ms)
  M.await(function(cb)
    vim.defer_fn(cb, ms)
  end)
end

return M
