-- flow.ui: the flow://run buffer (live progress, final summaries with each
-- changed file's diff and the tail of failing checks), the one-line
-- notifications, the quickfix list (failing checks' locations through
-- 'errorformat', then the first line of each changed hunk) and the
-- :FlowDiff scratch buffer.

local config = require("flow.config")

local M = {}

local NAME = "flow://run"
local DIFF_NAME = "flow://diff"
local MAX_LINES = 10000
-- Lines of a failing check's output shown in flow://run and the log.
M.TAIL_LINES = 20

local ns = vim.api.nvim_create_namespace("flow_run")

-- Highlight groups, linked by default so that colour schemes and users can
-- override them (:help flow-highlight).
local LINKS = {
  FlowDiffAdd = "DiffAdd",
  FlowDiffDelete = "DiffDelete",
  FlowDiffHunk = "DiffChange",
  FlowDiffFile = "DiffText",
  FlowHeading = "Title",
  FlowFailure = "ErrorMsg",
  FlowCheckOutput = "Comment",
  FlowReviewAdd = "DiffAdd",
  FlowReviewDelete = "DiffDelete",
}

--- Defines the default highlight links (again after a colour scheme
--- cleared them).
function M.highlights()
  for group, target in pairs(LINKS) do
    vim.cmd(string.format("highlight default link %s %s", group, target))
  end
end
M.highlights()
vim.api.nvim_create_autocmd("ColorScheme", {
  group = vim.api.nvim_create_augroup("flow_highlights", { clear = true }),
  callback = M.highlights,
})

--- 'errorformat' used to read locations from failing checks' output: Python
--- tracebacks, TypeScript (tsc plain and --pretty), Node stack traces and
--- `node --test` locations, `file:line:col: msg` (go vet, compilers, eslint
--- -f unix), `file:line: msg` (go test, pytest), eslint's default output
--- (a file name line, then `line:col  error  msg` lines).
M.errorformat = table.concat({
  [[%\s%#File "%f"\, line %l%.%#]],
  [[%f(%l\,%c): %m]],
  [[%f:%l:%c - %m]],
  [[%\s%#at %.%#(file://%f:%l:%c)]],
  [[%\s%#at %.%#(%f:%l:%c)]],
  [[%\s%#at file://%f:%l:%c]],
  [[%\s%#at %f:%l:%c]],
  [[%\s%#location: '%f:%l:%c']],
  [[%\s%#%f:%l:%c: %m]],
  [[%\s%#%f:%l: %m]],
  [[%\s%#%l:%c%\s%\+%m]],
  [[%-P%f]],
}, ",")

-- Wording written for the model ("or ask the user to") that must not reach
-- a person.
local MODEL_WORDING = { ", or ask the user to", " or ask the user to" }

--- Returns text without wording meant for the model.
---@param text string
---@return string
function M.human(text)
  text = tostring(text or "")
  for _, w in ipairs(MODEL_WORDING) do
    local i = text:find(w, 1, true)
    while i do
      text = text:sub(1, i - 1) .. text:sub(i + #w)
      i = text:find(w, 1, true)
    end
  end
  return text
end

local function str(v)
  if v == nil or v == vim.NIL then
    return ""
  end
  return tostring(v)
end

local function list(v)
  return type(v) == "table" and v or {}
end

--- Returns the flow://run buffer, creating it when needed.
---@return integer
function M.buffer()
  local b = vim.fn.bufnr("^" .. NAME .. "$")
  if b > 0 and vim.api.nvim_buf_is_valid(b) then
    return b
  end
  b = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_name(b, NAME)
  vim.api.nvim_buf_set_option(b, "buftype", "nofile")
  vim.api.nvim_buf_set_option(b, "bufhidden", "hide")
  vim.api.nvim_buf_set_option(b, "swapfile", false)
  vim.api.nvim_buf_set_option(b, "filetype", "flowrun")
  vim.api.nvim_buf_set_option(b, "modifiable", false)
  return b
end

--- Shows the flow://run buffer in a bottom split without leaving the
--- current window (does nothing when a window already shows it).
function M.open()
  local b = M.buffer()
  if vim.fn.bufwinid(b) ~= -1 then
    return
  end
  local win = vim.api.nvim_get_current_win()
  vim.cmd("botright 12split")
  vim.api.nvim_win_set_buf(0, b)
  vim.api.nvim_set_current_win(win)
end

--- Appends lines to the flow://run buffer (at most MAX_LINES are kept) and
--- scrolls the windows that show it. An item is a string or {text, group}:
--- the group highlights the whole line.
---@param lines (string|string[])[]
function M.append(lines)
  local b = M.buffer()
  local clean, groups = {}, {}
  for _, item in ipairs(lines) do
    local text, group = item, nil
    if type(item) == "table" then
      text, group = item[1], item[2]
    end
    for part in (str(text) .. "\n"):gmatch("([^\n]*)\n") do
      clean[#clean + 1] = part
      groups[#clean] = group
    end
  end
  vim.api.nvim_buf_set_option(b, "modifiable", true)
  local n = vim.api.nvim_buf_line_count(b)
  local empty = n == 1 and vim.api.nvim_buf_get_lines(b, 0, 1, false)[1] == ""
  local first = empty and 0 or n
  vim.api.nvim_buf_set_lines(b, first, -1, false, clean)
  for i, group in pairs(groups) do
    vim.api.nvim_buf_add_highlight(b, ns, group, first + i - 1, 0, -1)
  end
  n = vim.api.nvim_buf_line_count(b)
  if n > MAX_LINES then
    vim.api.nvim_buf_set_lines(b, 0, n - MAX_LINES, false, {})
  end
  vim.api.nvim_buf_set_option(b, "modifiable", false)
  for _, w in ipairs(vim.fn.win_findbuf(b)) do
    vim.api.nvim_win_set_cursor(w, { vim.api.nvim_buf_line_count(b), 0 })
  end
end

--- Marks the start of an operation in the run buffer.
---@param what string
function M.start(what)
  M.append({ "", { "== " .. os.date("%H:%M:%S") .. " " .. what, "FlowHeading" } })
  if config.options.open_run then
    M.open()
  end
end

--- Renders one progress event pushed by the host; an edit's event is
--- followed by its diff.
---@param payload table
function M.on_event(payload)
  local items = { M.human(payload.text or vim.inspect(payload.event)) }
  local d = type(payload.event) == "table" and payload.event.diff
  if type(d) == "table" then
    for _, l in ipairs(M.diff_lines({ diffs = { d } })) do
      items[#items + 1] = { l, M.diff_group(l) }
    end
  end
  M.append(items)
end

--- The highlight group of one line of a unified diff.
---@param line string
---@return string|nil
function M.diff_group(line)
  local c = line:sub(1, 1)
  if line:sub(1, 4) == "+++ " or line:sub(1, 4) == "--- " then
    return "FlowDiffFile"
  elseif line:sub(1, 2) == "@@" then
    return "FlowDiffHunk"
  elseif c == "+" then
    return "FlowDiffAdd"
  elseif c == "-" then
    return "FlowDiffDelete"
  elseif c ~= " " and c ~= "" and c ~= "\\" then
    return "FlowCheckOutput" -- binary notes and the "diff cut" marker
  end
  return nil
end

-- "+3 -1", "binary".
local function stat(d)
  if d.binary == true then
    return "binary"
  end
  return string.format("+%d -%d", tonumber(d.added) or 0, tonumber(d.removed) or 0)
end

--- The report's file diffs (an empty list when it has none).
---@param r table
---@return table[]
function M.diffs(r)
  local out = {}
  for _, d in ipairs(list(type(r) == "table" and r.diffs)) do
    if type(d) == "table" and type(d.path) == "string" then
      out[#out + 1] = d
    end
  end
  return out
end

--- The text of every diff of a report, one file after the other.
---@param r table
---@return string[]
function M.diff_lines(r)
  local lines = {}
  for _, d in ipairs(M.diffs(r)) do
    for l in (str(d.diff):gsub("\n$", "") .. "\n"):gmatch("([^\n]*)\n") do
      lines[#lines + 1] = l
    end
  end
  return lines
end

--- The checks of a report that did not pass (skipped ones excluded).
---@param r table
---@return table[]
function M.failed_checks(r)
  local out = {}
  for _, c in ipairs(list(r.checks)) do
    if type(c) == "table" and c.status ~= "ok" and c.status ~= "skipped" then
      out[#out + 1] = c
    end
  end
  return out
end

-- The last n lines of s (trailing blank lines dropped).
local function tail(s, n)
  local lines = vim.split(str(s):gsub("%s+$", ""), "\n", { plain = true })
  if #lines == 1 and lines[1] == "" then
    return {}
  end
  local first = math.max(1, #lines - n + 1)
  return { unpack(lines, first) }
end

--- The tail of a check's output: the last TAIL_LINES lines of stdout,
--- then of stderr.
---@param c table a CheckResult
---@return string[]
function M.check_tail(c)
  local out = {}
  for _, l in ipairs(tail(c.stdout, M.TAIL_LINES)) do
    out[#out + 1] = l
  end
  for _, l in ipairs(tail(c.stderr, M.TAIL_LINES)) do
    out[#out + 1] = l
  end
  return out
end

-- "check test: failed (exit 1)".
local function check_line(c)
  local s = string.format("check %s: %s", str(c.name), str(c.status))
  if tonumber(c.returncode) then
    s = s .. " (exit " .. c.returncode .. ")"
  end
  if str(c.error) ~= "" then
    s = s .. ": " .. M.human(c.error)
  end
  return s
end

-- Workspace-relative paths of modified loaded buffers under root.
local function unsaved_buffers(root)
  local out = {}
  local prefix = root:sub(-1) == "/" and root or root .. "/"
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(b) and vim.api.nvim_buf_get_option(b, "modified") then
      local name = vim.api.nvim_buf_get_name(b)
      local real = name ~= "" and (vim.loop.fs_realpath(name) or name) or ""
      if real:sub(1, #prefix) == prefix then
        out[#out + 1] = real:sub(#prefix + 1)
      end
    end
  end
  table.sort(out)
  return out
end

--- The one sentence a result leads with: on success what changed; else the
--- report's reason (the cause), its error, the verification's reason or
--- the first undo conflict. A reason about unsaved buffers that names no
--- file names the editor's unsaved buffers.
---@param r table
---@return string
-- "a.go has unsaved changes: save or discard it" for the unsaved buffers of
-- the result's workspace, or nil when there are none.
local function unsaved_sentence(r)
  local files = unsaved_buffers(str(r.workspace) ~= "" and r.workspace or config.workspace())
  if #files == 0 then
    return nil, files
  end
  return string.format("%s %s unsaved changes: save or discard %s",
    table.concat(files, ", "), #files == 1 and "has" or "have", #files == 1 and "it" or "them"), files
end

local function about_unsaved(text)
  return text:lower():find("unsaved", 1, true) ~= nil
end

function M.reason(r)
  if r.status == "ok" and r.verified == false and str(r.reason) ~= "" then
    return M.human(r.reason)
  end
  if r.status == "ok" then
    local diffs = M.diffs(r)
    if #diffs > 0 then
      local parts = {}
      for _, d in ipairs(diffs) do
        parts[#parts + 1] = d.path .. " " .. stat(d)
      end
      return "changed " .. table.concat(parts, ", ")
    end
    if #list(r.changed_files) > 0 then
      return "changed " .. table.concat(r.changed_files, ", ")
    end
    return M.human(str(r.message) ~= "" and r.message or str(r.reason))
  end
  local v = type(r.verification) == "table" and r.verification or {}
  local conflict = list(r.conflicts)[1]
  local text = str(r.reason)
  if text == "" and type(conflict) == "table" then
    if str(conflict.reason):lower():find("unsaved", 1, true) then
      text = str(conflict.path) .. " has unsaved changes: save or discard it"
    else
      text = str(conflict.path) .. ": " .. str(conflict.reason)
    end
  end
  if text == "" then
    text = str(r.error)
  end
  if text == "" then
    text = str(v.reason)
  end
  if text == "" then
    text = str(r.message)
  end
  if about_unsaved(text) then
    local sentence, files = unsaved_sentence(r)
    local named = false
    for _, f in ipairs(files) do
      named = named or text:find(f, 1, true) ~= nil
    end
    if sentence and not named then
      text = sentence
    end
  end
  return M.human(text)
end

--- The summary lines of a result shown in flow://run: status, verified,
--- the reason, changed files with their diffstat, failing checks with the
--- tail of their output, reviewer summary, error, then each file's diff.
--- Items are strings or {text, highlight group}.
---@param op string|nil
---@param r table
---@return (string|string[])[]
function M.summary(op, r)
  local lines = {}
  local head = string.format("flow %s: %s", op or "result", str(r.status))
  if r.verified ~= nil and r.verified ~= vim.NIL then
    head = head .. (r.verified and " (verified)" or " (not verified)")
  end
  lines[#lines + 1] = { head, r.status == "ok" and "FlowHeading" or "FlowFailure" }
  local reason = M.reason(r)
  local diffs = M.diffs(r)
  if r.status ~= "ok" and reason ~= "" then
    lines[#lines + 1] = "reason: " .. reason
  elseif reason ~= "" and #diffs == 0 and #list(r.changed_files) == 0 then
    lines[#lines + 1] = reason
  end
  if type(r.reviewer) == "table" and str(r.reviewer.warning) ~= "" then
    -- Next to the verdict: the reviewer that gave one does not
    -- discriminate (doc/design.md §8.10).
    lines[#lines + 1] = "note: " .. M.human(r.reviewer.warning)
  end
  if #diffs > 0 then
    for _, d in ipairs(diffs) do
      lines[#lines + 1] = string.format("changed: %s (%s, %s)", d.path, str(d.change), stat(d))
    end
  elseif #list(r.changed_files) > 0 then
    lines[#lines + 1] = "changed: " .. table.concat(r.changed_files, ", ")
  end
  -- A change the host did not verify: a person can review it hunk by hunk.
  if op == "run" and r.verified ~= true and (#diffs > 0 or #list(r.changed_files) > 0) then
    lines[#lines + 1] = "review: :FlowReview to keep or revert each hunk"
  end
  -- Changes flow made to files itself (mended imports): the diffs above
  -- hold them too, and a person should not take them for the model's.
  for _, e in ipairs(list(r.host_edits)) do
    if type(e) == "table" then
      local line = string.format("changed by flow itself: %s (cycle %s): %s", str(e.path), str(e.cycle), str(e.what))
      if e.status ~= "ok" then
        lines[#lines + 1] = { line .. " (not written: " .. M.human(e.error) .. ")", "FlowFailure" }
      else
        lines[#lines + 1] = line
      end
    end
  end
  for _, key in ipairs({ "restored", "removed" }) do
    if #list(r[key]) > 0 then
      lines[#lines + 1] = key .. ": " .. table.concat(r[key], ", ")
    end
  end
  for _, c in ipairs(list(r.conflicts)) do
    if type(c) == "table" then
      lines[#lines + 1] = "left untouched: " .. str(c.path) .. ": " .. M.human(c.reason)
    end
  end
  for _, c in ipairs(M.failed_checks(r)) do
    lines[#lines + 1] = { check_line(c), "FlowFailure" }
    for _, l in ipairs(M.check_tail(c)) do
      lines[#lines + 1] = { "  " .. l, "FlowCheckOutput" }
    end
  end
  for _, role in ipairs(list(r.roles)) do
    if type(role) == "table" and role.role == "reviewer" and str(role.summary) ~= "" then
      lines[#lines + 1] = "reviewer: " .. role.summary
    end
  end
  if str(r.error) ~= "" and M.human(r.error) ~= reason then
    lines[#lines + 1] = "error: " .. M.human(r.error)
  end
  for _, l in ipairs(M.diff_lines(r)) do
    lines[#lines + 1] = { l, M.diff_group(l) }
  end
  return lines
end

--- The one-line notification of a result: "flow build failed: <reason>",
--- cut to fit the command line so that no hit-enter prompt follows (the
--- whole text is in flow://run).
---@param op string|nil
---@param r table
---@return string
function M.notification(op, r)
  local what = "flow " .. (op == "run" and "build" or op or "result")
  local head
  if r.status == "ok" then
    head = what .. (r.verified == true and " ok, verified" or (r.verified == false and " ok, not verified" or " ok"))
  else
    head = what .. " " .. str(r.status)
  end
  local reason = M.reason(r)
  local text = reason ~= "" and (head .. ": " .. reason) or head
  text = text:gsub("%s*\n%s*", " ")
  local room = M.room()
  if vim.fn.strdisplaywidth(text) > room and r.status ~= "ok" and about_unsaved(reason) then
    -- The editor knows the unsaved buffers: a shorter sentence that fits.
    local sentence = unsaved_sentence(r)
    if sentence then
      text = head .. ": " .. sentence
    end
  end
  return M.fit(text, room)
end

--- The display cells a one-line message may take on the command line
--- without a hit-enter prompt.
---@return integer
function M.room()
  local room = tonumber(vim.v.echospace) or 0
  if room <= 0 then
    room = vim.o.columns - 12
  end
  return math.max(room - 1, 20)
end

--- Cuts text to one line of room display cells (default: M.room()),
--- ending it with "…".
---@param text string
---@param room integer|nil
---@return string
function M.fit(text, room)
  text = text:gsub("%s*\n%s*", " ")
  room = room or M.room()
  if vim.fn.strdisplaywidth(text) > room then
    local chars = vim.fn.strchars(text)
    while chars > 0 and vim.fn.strdisplaywidth(text) > room - 1 do
      chars = chars - 1
      text = vim.fn.strcharpart(text, 0, chars)
    end
    text = text .. "…"
  end
  return text
end

-- Resolves a file name parsed from check output (relative to Neovim's
-- directory) against the workspace: the same relative path in the
-- workspace, the name itself, or the file of that name below the
-- workspace. Returns nil when there is no such file.
local function resolve(name, root)
  local cwd = vim.loop.cwd() or ""
  local rel = name
  if cwd ~= "" and name:sub(1, #cwd + 1) == cwd .. "/" then
    rel = name:sub(#cwd + 2)
  end
  if rel:sub(1, 7) == "file://" then
    rel = rel:sub(8)
  end
  if rel:sub(1, 1) ~= "/" and vim.fn.filereadable(root .. "/" .. rel) == 1 then
    return root .. "/" .. rel
  end
  if vim.fn.filereadable(rel) == 1 then
    return vim.fn.fnamemodify(rel, ":p")
  end
  if rel:sub(1, 1) ~= "/" then
    -- 'path' syntax: escape the separators a directory name may hold.
    local found = vim.fn.findfile(vim.fn.fnamemodify(rel, ":t"), root:gsub("([ ,;\\])", "\\%1") .. "/**6")
    if found ~= "" then
      return vim.fn.fnamemodify(found, ":p")
    end
  end
  return nil
end

--- The quickfix items of the locations in a failing check's output, parsed
--- with M.errorformat; only locations of existing files are kept.
---@param c table a CheckResult
---@param root string the workspace
---@return table[]
function M.check_items(c, root)
  local text = str(c.stdout) .. "\n" .. str(c.stderr)
  local before = {}
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    before[b] = true
  end
  local ok, parsed = pcall(vim.fn.getqflist, {
    lines = vim.split(text, "\n", { plain = true }),
    efm = M.errorformat,
  })
  local items, seen = {}, {}
  local keep = {}
  for _, it in ipairs(ok and type(parsed) == "table" and list(parsed.items) or {}) do
    if it.valid == 1 and it.bufnr > 0 and it.lnum > 0 then
      local file = resolve(vim.api.nvim_buf_get_name(it.bufnr), root)
      local key = file and (file .. ":" .. it.lnum)
      if file and not seen[key] then
        seen[key] = true
        items[#items + 1] = {
          filename = file,
          lnum = it.lnum,
          col = it.col,
          text = vim.trim(it.text) ~= "" and vim.trim(it.text) or ("check " .. str(c.name) .. " failed here"),
          type = "E",
        }
        keep[vim.fn.bufnr(file)] = true
      end
    end
  end
  -- Parsing made buffers for every name it met: drop the ones not kept.
  for _, b in ipairs(vim.api.nvim_list_bufs()) do
    if not before[b] and not keep[b] and not vim.api.nvim_buf_get_option(b, "buflisted") then
      pcall(vim.api.nvim_buf_delete, b, { force = true })
    end
  end
  return items
end

--- The quickfix items of a result: the failing checks' locations, then the
--- first changed line of each hunk of each changed file (line 1 for files
--- the report has no diff for).
---@param r table
---@return table[]
function M.quickfix_items(r)
  local root = str(r.workspace) ~= "" and r.workspace or config.workspace()
  local items = {}
  for _, c in ipairs(M.failed_checks(r)) do
    vim.list_extend(items, M.check_items(c, root))
  end
  local diffs = M.diffs(r)
  local covered = {}
  for _, d in ipairs(diffs) do
    covered[d.path] = true
    local hunks = list(d.hunks)
    if #hunks == 0 then
      hunks = { 1 }
    end
    for i, line in ipairs(hunks) do
      local text = string.format("%s by flow (%s, %s)", str(d.change), str(r.status), stat(d))
      if #hunks > 1 then
        text = string.format("%s by flow, hunk %d of %d (%s, %s)", str(d.change), i, #hunks, str(r.status), stat(d))
      end
      items[#items + 1] = { filename = root .. "/" .. d.path, lnum = tonumber(line) or 1, text = text }
    end
  end
  for _, p in ipairs(list(r.changed_files)) do
    if not covered[p] then
      items[#items + 1] = { filename = root .. "/" .. p, lnum = 1, text = "changed by flow (" .. str(r.status) .. ")" }
    end
  end
  return items
end

--- Shows a finished operation's result: in the run buffer, as a one-line
--- notification, its failing checks' output in the log, and its locations
--- in the quickfix list.
---@param op string|nil
---@param result table
function M.on_done(op, result)
  if op == "status" then
    return
  end
  M.append(M.summary(op, result))
  local log = require("flow.log")
  for _, c in ipairs(M.failed_checks(result)) do
    log.block("WARN", check_line(c), M.check_tail(c))
  end
  if config.options.quickfix then
    local items = M.quickfix_items(result)
    if #items > 0 then
      vim.fn.setqflist({}, " ", { title = "flow: " .. (op or "result") .. " " .. str(result.status), items = items })
    end
  end
  if config.options.notify then
    local level = result.status == "ok" and vim.log.levels.INFO or vim.log.levels.WARN
    local text = M.notification(op, result)
    vim.schedule(function()
      vim.notify(text, level, { title = "flow" })
    end)
  end
end

--- Shows the diff of a report in the flow://diff scratch buffer (filetype
--- diff) in the current window; returns false when it has no diff.
---@param r table|nil
---@return boolean
function M.show_diff(r)
  local lines = r and M.diff_lines(r) or {}
  if #lines == 0 then
    return false
  end
  local b = vim.fn.bufnr("^" .. DIFF_NAME .. "$")
  if b <= 0 or not vim.api.nvim_buf_is_valid(b) then
    b = vim.api.nvim_create_buf(false, true)
    vim.api.nvim_buf_set_name(b, DIFF_NAME)
    vim.api.nvim_buf_set_option(b, "buftype", "nofile")
    vim.api.nvim_buf_set_option(b, "bufhidden", "hide")
    vim.api.nvim_buf_set_option(b, "swapfile", false)
  end
  vim.api.nvim_buf_set_option(b, "modifiable", true)
  vim.api.nvim_buf_set_lines(b, 0, -1, false, lines)
  vim.api.nvim_buf_set_option(b, "modifiable", false)
  vim.api.nvim_buf_set_option(b, "modified", false)
  if vim.fn.bufwinid(b) == -1 then
    vim.cmd("botright split")
    vim.api.nvim_win_set_buf(0, b)
  else
    vim.api.nvim_set_current_win(vim.fn.bufwinid(b))
  end
  vim.api.nvim_buf_set_option(b, "filetype", "diff")
  return true
end

return M
