-- flow.review: :FlowReview, a person's review of a finished run's change
-- hunk by hunk (doc/design.md §12.7), in the buffers themselves. The host
-- (flow_review) computes the hunks and applies each decision through the
-- buffer-aware file system, so a revert is an edit of the loaded buffer
-- that |u| undoes, and a buffer with unsaved changes is refused. This
-- module only shows the hunks and sends the decisions:
--
--   * each pending hunk of a loaded file gets a sign and a highlight on its
--     added lines and its old lines as virtual lines above them (extmarks
--     in the flow_review namespace);
--   * the quickfix list holds every hunk of the run;
--   * reviewed buffers get ]h / [h and the keys of the <Plug>(flow-review-*)
--     mappings, unless the `mappings` option is off.

local config = require("flow.config")

local M = {}

M.ns = vim.api.nvim_create_namespace("flow_review")

-- The default buffer-local keys of reviewed buffers: lhs → <Plug> name.
M.keys = {
  ["]h"] = "<Plug>(flow-review-next)",
  ["[h"] = "<Plug>(flow-review-prev)",
  ["<LocalLeader>hk"] = "<Plug>(flow-review-keep)",
  ["<LocalLeader>hr"] = "<Plug>(flow-review-revert)",
  ["<LocalLeader>fk"] = "<Plug>(flow-review-keep-file)",
  ["<LocalLeader>fr"] = "<Plug>(flow-review-revert-file)",
  ["<LocalLeader>ak"] = "<Plug>(flow-review-keep-all)",
  ["<LocalLeader>ar"] = "<Plug>(flow-review-revert-all)",
}

-- The review on screen: the last report of flow_review and the buffers
-- that show it (bufnr → path).
local state = { report = nil, root = nil, bufs = {}, busy = false }

local function str(v)
  if v == nil or v == vim.NIL then
    return ""
  end
  return tostring(v)
end

local function list(v)
  return type(v) == "table" and v or {}
end

local function notify(msg, level)
  vim.notify(msg, level or vim.log.levels.INFO, { title = "flow" })
end

--- The report of the review on screen, or nil.
---@return table|nil
function M.report()
  return state.report
end

-- The lines of a hunk's text after its @@ header, each {mark, text}; nil
-- for a hunk without one (a binary file's).
local function body(h)
  local lines = vim.split(str(h.text), "\n", { plain = true })
  if not (lines[1] or ""):match("^@@ %-") then
    return nil
  end
  local out = {}
  for i = 2, #lines do
    local l = lines[i]
    local mark = l:sub(1, 1)
    if mark == " " or mark == "-" or mark == "+" then
      out[#out + 1] = { mark, l:sub(2) }
    end
  end
  return out
end

-- "-2 +1": the lines a hunk removes and adds.
local function counts(h)
  local del, add = 0, 0
  for _, l in ipairs(body(h) or {}) do
    if l[1] == "-" then
      del = del + 1
    elseif l[1] == "+" then
      add = add + 1
    end
  end
  return string.format("-%d +%d", del, add)
end

-- The hunks of the review by path, in file order, each with where it
-- stands in the file now: `at` (0-based first line) and `size` (its lines
-- now: the old side once reverted, else the new side). The review's
-- decisions moved the later hunks of a file by what a revert took out or
-- put back, as the host computes it.
local function placed(rep)
  local by_path, order = {}, {}
  for _, h in ipairs(list(rep and rep.hunks)) do
    if type(h) == "table" and type(h.path) == "string" then
      if not by_path[h.path] then
        by_path[h.path] = {}
        order[#order + 1] = h.path
      end
      table.insert(by_path[h.path], h)
    end
  end
  for _, hunks in pairs(by_path) do
    table.sort(hunks, function(a, b)
      return (tonumber(a.new_start) or 0) < (tonumber(b.new_start) or 0)
    end)
    local shift = 0
    for _, h in ipairs(hunks) do
      local new_lines, old_lines = tonumber(h.new_lines) or 0, tonumber(h.old_lines) or 0
      local start = tonumber(h.new_start) or 1
      -- An empty side starts after the line its header names.
      local idx = new_lines > 0 and start - 1 or start
      h.at = math.max(idx + shift, 0)
      if h.state == "reverted" then
        h.size = old_lines
        shift = shift + old_lines - new_lines
      else
        h.size = new_lines
      end
    end
  end
  return by_path, order
end

-- The real path of buffer b's file, or nil.
local function buf_path(b)
  local name = vim.api.nvim_buf_get_name(b)
  if name == "" or vim.api.nvim_buf_get_option(b, "buftype") ~= "" then
    return nil
  end
  return vim.loop.fs_realpath(name) or name
end

-- The workspace-relative path of buffer b when the review changed it.
local function reviewed_path(b, by_path)
  local p = buf_path(b)
  local prefix = state.root and state.root .. "/"
  if not p or not prefix or p:sub(1, #prefix) ~= prefix then
    return nil
  end
  local rel = p:sub(#prefix + 1)
  return by_path[rel] and rel or nil
end

-- Tabs expanded for a virtual line, which shows them as they are.
local function expand_tabs(s, ts)
  if not s:find("\t", 1, true) then
    return s
  end
  local out, col = {}, 0
  for ch in s:gmatch("[^\128-\191][\128-\191]*") do
    if ch == "\t" then
      local n = ts - col % ts
      out[#out + 1] = string.rep(" ", n)
      col = col + n
    else
      out[#out + 1] = ch
      col = col + 1
    end
  end
  return table.concat(out)
end

-- Marks one pending hunk in buffer b: a sign and highlight on each added
-- line, the removed lines as virtual lines above the line that now stands
-- where they were (below the last line at the end of the buffer), with a
-- sign of their own when no added line replaces them.
local function mark_hunk(b, h)
  local lines = body(h)
  if not lines then
    return
  end
  local n = vim.api.nvim_buf_line_count(b)
  local ts = vim.api.nvim_buf_get_option(b, "tabstop")
  local row, removed = h.at, {}
  local function flush(replaced)
    if #removed == 0 then
      return
    end
    local virt = {}
    for _, text in ipairs(removed) do
      virt[#virt + 1] = { { expand_tabs(text, ts), "FlowReviewDelete" } }
    end
    local above = row < n
    vim.api.nvim_buf_set_extmark(b, M.ns, above and row or math.max(n - 1, 0), 0, {
      virt_lines = virt,
      virt_lines_above = above,
      sign_text = not replaced and "-" or nil,
      sign_hl_group = not replaced and "FlowReviewDelete" or nil,
    })
    removed = {}
  end
  for _, l in ipairs(lines) do
    if l[1] == "-" then
      removed[#removed + 1] = l[2]
    else
      flush(l[1] == "+")
      if l[1] == "+" and row < n then
        vim.api.nvim_buf_set_extmark(b, M.ns, row, 0, {
          sign_text = "+",
          sign_hl_group = "FlowReviewAdd",
          line_hl_group = "FlowReviewAdd",
        })
      end
      row = row + 1
    end
  end
  flush(false)
end

-- The 0-based line of a hunk's first change now: its first added line, or
-- for a deletion the line that stands where the removed lines were.
local function first_change(h)
  local row = h.at
  for _, l in ipairs(body(h) or {}) do
    if l[1] ~= " " then
      return row
    end
    row = row + 1
  end
  return h.at
end

-- Sets the default keys in reviewed buffer b (once).
local function map_keys(b)
  if not config.options.mappings or vim.b[b].flow_review_keys then
    return
  end
  vim.b[b].flow_review_keys = true
  for lhs, plug in pairs(M.keys) do
    vim.keymap.set("n", lhs, plug, { buffer = b, remap = true, desc = "flow: " .. plug:match("%((.*)%)") })
  end
end

--- Shows the review's hunks in buffer b when it is a loaded file of the
--- review (its marks are redrawn from the report).
---@param b integer
function M.render(b)
  if not state.report or not vim.api.nvim_buf_is_loaded(b) then
    return
  end
  vim.api.nvim_buf_clear_namespace(b, M.ns, 0, -1)
  local by_path = placed(state.report)
  local rel = reviewed_path(b, by_path)
  if not rel then
    state.bufs[b] = nil
    return
  end
  state.bufs[b] = rel
  vim.b[b].flow_review = state.report.run_id
  for _, h in ipairs(by_path[rel]) do
    if h.state == "pending" then
      local ok, err = pcall(mark_hunk, b, h)
      if not ok then
        require("flow.log").error("review marks of " .. rel .. ": " .. tostring(err))
      end
    end
  end
  map_keys(b)
end

-- The quickfix items of the review: one a hunk, at its first line now.
local function quickfix_items(rep)
  local by_path, order = placed(rep)
  local items = {}
  for _, path in ipairs(order) do
    for _, h in ipairs(by_path[path]) do
      local ev = type(h.evidence) == "table" and h.evidence or {}
      local evidence = str(ev.sentence) ~= "" and ev.sentence or ("evidence: " .. str(ev.shows))
      local text = string.format("hunk %s: %s, %s", str(h.id), counts(h), evidence)
      if h.state ~= "pending" then
        text = text .. " [" .. str(h.state) .. "]"
      end
      items[#items + 1] = { filename = state.root .. "/" .. path, lnum = h.at + 1, text = text }
    end
  end
  return items
end

-- Redraws every loaded buffer of the review and the quickfix list.
local function refresh()
  for b in pairs(state.bufs) do
    if vim.api.nvim_buf_is_valid(b) then
      vim.api.nvim_buf_clear_namespace(b, M.ns, 0, -1)
    end
  end
  state.bufs = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    M.render(b)
  end
  if config.options.quickfix then
    vim.fn.setqflist({}, " ", {
      title = "flow review " .. str(state.report.run_id),
      items = quickfix_items(state.report),
    })
  end
end

-- What went wrong in a review report, for a person, in one line: the
-- first refused decision's reason (and how many more there were), else
-- its message or error.
local function trouble(rep)
  local ui = require("flow.ui")
  local refused = {}
  for _, c in ipairs(list(rep.conflicts)) do
    if type(c) == "table" and str(c.reason) ~= "" then
      refused[#refused + 1] = c
    end
  end
  local text
  if #refused > 0 then
    text = str(refused[1].reason)
    if text:lower():find("unsaved", 1, true) then
      -- Nothing was written: what matters is what to do about it.
      text = str(refused[1].path) .. " has unsaved changes: save or discard them first"
    elseif not text:find(str(refused[1].path), 1, true) then
      text = str(refused[1].path) .. ": " .. text
    end
    if #refused > 1 then
      text = text .. string.format(" (and %d more refused)", #refused - 1)
    end
  else
    text = str(rep.message) ~= "" and rep.message or (str(rep.error) ~= "" and rep.error or str(rep.status))
  end
  return ui.fit("flow review: " .. ui.human(text))
end

-- Takes a report of flow_review: shows it when it describes the review
-- (ok or conflict), and says what went wrong otherwise. Returns whether
-- the review on screen is this report.
local function take(rep)
  if rep.status ~= "ok" and rep.status ~= "conflict" or type(rep.hunks) ~= "table" then
    notify(trouble(rep), vim.log.levels.WARN)
    return false
  end
  require("flow.ui").highlights()
  state.report = rep
  state.root = str(rep.workspace) ~= "" and (vim.loop.fs_realpath(rep.workspace) or rep.workspace) or config.workspace()
  refresh()
  if rep.status == "conflict" then
    notify(trouble(rep), vim.log.levels.WARN)
  end
  return true
end

-- Counts the review's hunks by state.
local function tally(rep)
  local n = { pending = 0, kept = 0, reverted = 0, all = 0 }
  for _, h in ipairs(list(rep.hunks)) do
    n.all = n.all + 1
    n[h.state] = (n[h.state] or 0) + 1
  end
  return n
end

-- Only loaded buffers are marked; a file of the review is marked when it
-- is opened later (from the quickfix list, say). Not while a decision is
-- being applied: the host's write reloads the buffer, and the marks are
-- redrawn from the new report once it arrives.
local group = vim.api.nvim_create_augroup("flow_review", { clear = true })
vim.api.nvim_create_autocmd("BufReadPost", {
  group = group,
  callback = function(ev)
    if state.report and not state.busy then
      M.render(ev.buf)
    end
  end,
})

--- :FlowReview [run]: fetches the run's hunks (the workspace's last run
--- when run_id is nil or "") and shows them.
---@param run_id string|nil
---@return table|nil the report shown
function M.open(run_id)
  local rep = require("flow").review(run_id)
  if not take(rep) then
    return nil
  end
  local n = tally(rep)
  if rep.status == "ok" and #list(rep.conflicts) > 0 then
    -- Files whose hunks cannot be shown (their journal copy is gone).
    notify(trouble(rep), vim.log.levels.WARN)
  elseif n.all == 0 then
    notify("flow review: run " .. str(rep.run_id) .. " has no hunk to review")
  else
    notify(require("flow.ui").fit(string.format("flow review %s: %d hunk(s), %d pending (:help flow-review)",
      str(rep.run_id), n.all, n.pending)))
  end
  return rep
end

-- The hunk of the review on screen under the cursor of the current
-- buffer, or nil and why not.
local function hunk_at_cursor()
  if not state.report then
    return nil, "no review is open: run :FlowReview first"
  end
  local by_path = placed(state.report)
  local rel = reviewed_path(vim.api.nvim_get_current_buf(), by_path)
  if not rel then
    return nil, "this buffer has no hunk of run " .. str(state.report.run_id)
  end
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  for _, h in ipairs(by_path[rel]) do
    if row >= h.at and row < h.at + math.max(h.size, 1) then
      return h
    end
  end
  return nil, "no hunk under the cursor (]h moves to the next one)"
end

--- Keeps or reverts the hunk under the cursor (scope "hunk"), every hunk
--- of the current buffer's file ("file") or of the run ("all"), through
--- flow_review; then redraws the review. A refusal (an unsaved buffer,
--- lines changed since the run) is shown as a warning and changes nothing.
---@param action "keep"|"revert"
---@param scope "hunk"|"file"|"all"
---@return table|nil the report, when the request was made
function M.decide(action, scope)
  if not state.report then
    notify("flow review: no review is open: run :FlowReview first", vim.log.levels.WARN)
    return nil
  end
  local selector
  if scope == "all" then
    selector = "all"
  elseif scope == "file" then
    selector = reviewed_path(vim.api.nvim_get_current_buf(), placed(state.report))
    if not selector then
      notify("flow review: this buffer has no hunk of run " .. str(state.report.run_id), vim.log.levels.WARN)
      return nil
    end
  else
    local h, why = hunk_at_cursor()
    if not h then
      notify("flow review: " .. why, vim.log.levels.WARN)
      return nil
    end
    selector = h.id
  end
  local opts = { keep = {}, revert = {} }
  table.insert(opts[action], selector)
  state.busy = true
  local ok, rep = pcall(require("flow").review, state.report.run_id, opts)
  state.busy = false
  if not ok then
    rep = { status = "error", error = tostring(rep) }
  end
  take(rep)
  return rep
end

--- Moves the cursor to the first changed line of the next (dir 1) or
--- previous (dir -1) pending hunk of the current buffer, wrapping around.
---@param dir integer
function M.jump(dir)
  if not state.report then
    return
  end
  local by_path = placed(state.report)
  local rel = reviewed_path(vim.api.nvim_get_current_buf(), by_path)
  if not rel then
    return
  end
  local rows = {}
  local last = vim.api.nvim_buf_line_count(0)
  for _, h in ipairs(by_path[rel]) do
    if h.state == "pending" then
      rows[#rows + 1] = math.max(math.min(first_change(h) + 1, last), 1)
    end
  end
  if #rows == 0 then
    notify("flow review: no pending hunk in this buffer")
    return
  end
  local cur = vim.api.nvim_win_get_cursor(0)[1]
  local target
  if dir > 0 then
    for _, r in ipairs(rows) do
      if r > cur then
        target = r
        break
      end
    end
    target = target or rows[1]
  else
    for i = #rows, 1, -1 do
      if rows[i] < cur then
        target = rows[i]
        break
      end
    end
    target = target or rows[#rows]
  end
  vim.cmd("normal! m'")
  vim.api.nvim_win_set_cursor(0, { target, 0 })
end

return M
