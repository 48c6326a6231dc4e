-- rewind.nvim: defines :Rewind and starts rewind-ls for file buffers. Everything else loads on use.
if vim.g.loaded_rewind then
  return
end
vim.g.loaded_rewind = true

if vim.fn.has('nvim-0.8') == 0 then
  vim.api.nvim_echo({ { 'rewind.nvim needs Neovim 0.8 or newer', 'WarningMsg' } }, true, {})
  return
end

vim.api.nvim_create_user_command('Rewind', function(opts)
  require('rewind.commands').run(opts)
end, {
  nargs = '*',
  desc = 'rewind-ls: rewind, revert, undo, diff, log, quickfix, last (see :help rewind.nvim)',
  complete = function(arglead, cmdline, cursorpos)
    return require('rewind.commands').complete(arglead, cmdline, cursorpos)
  end,
})

-- A turn browsed read-only (:Rewind browse): each rewind-turn:// buffer is filled from the server.
vim.api.nvim_create_autocmd('BufReadCmd', {
  group = vim.api.nvim_create_augroup('rewind.browse', { clear = true }),
  pattern = 'rewind-turn://*',
  callback = function(ev)
    require('rewind.browse').load(ev.buf)
  end,
})

-- Highlight groups (linked to standard ones, again after a colorscheme change) and <Plug> mappings; no
-- keys of our own unless setup({ mappings = true }).
require('rewind.ui').define_highlights()
require('rewind.ui').define_plugs()
vim.api.nvim_create_autocmd('ColorScheme', {
  group = vim.api.nvim_create_augroup('rewind.highlights', { clear = true }),
  callback = function()
    require('rewind.ui').define_highlights()
  end,
})

-- setup() is optional: without it the defaults apply once startup is done (init.lua had its chance).
-- Set vim.g.rewind_autostart = false to start nothing until require('rewind').setup() is called.
if vim.v.vim_did_enter == 1 then
  vim.schedule(function()
    require('rewind')._auto_setup()
  end)
else
  vim.api.nvim_create_autocmd('VimEnter', {
    group = vim.api.nvim_create_augroup('rewind.plugin', { clear = true }),
    once = true,
    callback = function()
      require('rewind')._auto_setup()
    end,
  })
end
