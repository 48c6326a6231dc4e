-- Minimal init for the Neovim tests (tests/editors/test_nvim.py): the plugin from this repository, the
-- server command of the test, and recording stubs for vim.ui.select / vim.notify so a test can answer
-- pickers by label. The plugin's own code paths are the real ones.
vim.opt.runtimepath:prepend(assert(vim.env.REWIND_TEST_PLUGIN, 'REWIND_TEST_PLUGIN not set'))
vim.opt.swapfile = false
vim.opt.shadafile = 'NONE'
vim.opt.more = false
vim.opt.updatetime = 100
vim.lsp.set_log_level('INFO')

_G.rewind_test = {
  notes = {}, -- every vim.notify: { msg, level }
  selects = {}, -- every vim.ui.select: { prompt, kind, labels, chosen }
  answers = {}, -- queue of plain substrings; each select picks the first item whose label contains it
  passthrough = false, -- true: vim.notify also shows the message as Neovim's own vim.notify does
}

local real_notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(_G.rewind_test.notes, { msg = tostring(msg), level = level or vim.log.levels.INFO })
  if _G.rewind_test.passthrough then
    real_notify(msg, level, opts)
  end
end

vim.ui.select = function(items, opts, on_choice)
  opts = opts or {}
  local fmt = opts.format_item or tostring
  local labels = {}
  for i, item in ipairs(items) do
    labels[i] = fmt(item)
  end
  local want = table.remove(_G.rewind_test.answers, 1)
  -- What the screen shows while the question is asked: the tab and whether its window is a diff.
  local record = {
    prompt = opts.prompt,
    kind = opts.kind,
    labels = labels,
    want = want,
    tab = vim.fn.tabpagenr(),
    tabs = vim.fn.tabpagenr('$'),
    diff = vim.wo.diff,
    wins = {},
  }
  for _, w in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
    local b = vim.api.nvim_win_get_buf(w)
    table.insert(record.wins, {
      name = vim.fn.fnamemodify(vim.api.nvim_buf_get_name(b), ':t'),
      diff = vim.wo[w].diff,
      lines = vim.api.nvim_buf_get_lines(b, 0, -1, false),
    })
  end
  table.insert(_G.rewind_test.selects, record)
  vim.schedule(function()
    if want then
      for i, label in ipairs(labels) do
        if label:find(want, 1, true) then
          record.chosen = label
          return on_choice(items[i], i)
        end
      end
    end
    record.chosen = vim.NIL
    on_choice(nil, nil)
  end)
end

require('rewind').setup({
  cmd = vim.json.decode(assert(vim.env.REWIND_TEST_SERVER_CMD)),
  -- The preview (on by default) has its own tests (test_nvim_preview.py), which turn it back on;
  -- here a restore runs on its command, as the older tests expect.
  confirm = vim.env.REWIND_TEST_CONFIRM == '1',
})
