-- flow: Neovim commands for flow's verified coding workflow. This file
-- only defines commands and mappings; everything else loads on first use.
if vim.g.loaded_flow then
  return
end
if vim.fn.has("nvim-0.7.2") ~= 1 then
  vim.api.nvim_echo({ { "flow: Neovim 0.7.2 or newer is required", "ErrorMsg" } }, true, {})
  return
end
vim.g.loaded_flow = true

local function run(name)
  return function(o)
    require("flow.commands")[name](o)
  end
end

local command = vim.api.nvim_create_user_command
command("FlowBuild", run("build"), { nargs = "*", range = true, desc = "flow: run a task" })
command("FlowCheck", run("check"), {
  nargs = "?",
  desc = "flow: run configured checks",
  complete = function(arglead)
    return require("flow.commands").complete_check(arglead)
  end,
})
command("FlowStatus", run("status"), { nargs = 0, desc = "flow: show the status report" })
command("FlowStop", run("stop"), { nargs = 0, desc = "flow: cancel the running job" })
command("FlowUndo", run("undo"), { nargs = "?", desc = "flow: undo a run" })
command("FlowLog", run("log"), { nargs = 0, desc = "flow: open the log file" })
command("FlowDiff", run("diff"), { nargs = 0, desc = "flow: show the last run's diff" })
command("FlowReview", run("review"), {
  nargs = "?",
  desc = "flow: keep or revert a run's hunks",
  complete = function(arglead)
    return require("flow.commands").complete_review(arglead)
  end,
})
command("FlowInstall", function()
  require("flow.install").command()
end, { nargs = 0, desc = "flow: build bin/flow and the help tags" })

-- A plugin manager that loads flow from a local directory makes no help
-- tags; make them once, so that :help flow works.
local doc = vim.fn.fnamemodify(debug.getinfo(1, "S").source:sub(2), ":p:h:h") .. "/doc"
if vim.fn.filereadable(doc .. "/tags") == 0 and vim.fn.filewritable(doc) == 2 then
  pcall(vim.cmd, "silent! helptags " .. vim.fn.fnameescape(doc))
end

vim.keymap.set("n", "<Plug>(flow-build)", "<Cmd>FlowBuild<CR>", { desc = "flow: run a task" })
vim.keymap.set("x", "<Plug>(flow-build)", ":FlowBuild<CR>", { desc = "flow: run a task on the selection" })
vim.keymap.set("n", "<Plug>(flow-check)", "<Cmd>FlowCheck<CR>", { desc = "flow: run checks" })
vim.keymap.set("n", "<Plug>(flow-stop)", "<Cmd>FlowStop<CR>", { desc = "flow: cancel" })
for _, m in ipairs({ { "keep", "hunk", "" }, { "revert", "hunk", "" }, { "keep", "file", "-file" },
  { "revert", "file", "-file" }, { "keep", "all", "-all" }, { "revert", "all", "-all" } }) do
  vim.keymap.set("n", "<Plug>(flow-review-" .. m[1] .. m[3] .. ")", function()
    require("flow.review").decide(m[1], m[2])
  end, { desc = "flow: " .. m[1] .. " the " .. (m[2] == "all" and "run's hunks" or m[2]) })
end
vim.keymap.set("n", "<Plug>(flow-review-next)", function() require("flow.review").jump(1) end, { desc = "flow: next hunk" })
vim.keymap.set("n", "<Plug>(flow-review-prev)", function() require("flow.review").jump(-1) end, { desc = "flow: previous hunk" })

-- Count each buffer's diagnostic changes from the start, so that
-- editor_diagnostics can tell a server that has not published yet.
require("flow.tools.lsp").track()
