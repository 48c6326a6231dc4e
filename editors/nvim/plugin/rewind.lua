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
  desc = 'rewind-ls: rewind, revert, undo, diff, log (see :help rewind)',
  complete = function(arglead, cmdline, cursorpos)
    return require('rewind.commands').complete(arglead, cmdline, cursorpos)
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
