-- Argument validation of the editor tool module: the JSON-Schema subset that
-- flow's Go side applies to a tool call (runtime/tools ValidateArgs). flow
-- checks a call before the editor sees it, but other editor clients call
-- this module directly, so here the same rules are the only check. Both
-- sides are held to one table of cases, runtime/tools/testdata/args.json.
--
-- The keywords are type (object, array, string, boolean, integer, number,
-- null), enum, properties, required and items, and also minimum and
-- maximum, which the editor tool contract asks for; every other keyword is
-- ignored. Objects are always closed, booleans are never numbers, and
-- numbers must be finite. A value is at most 16 levels deep and the whole
-- tree at most 4096 values. The walk is iterative, so deep input cannot
-- overflow the Lua stack; a malformed schema fails closed.
--
-- Lua sees decoded values, so two things Go can tell apart are one here: a
-- number's spelling (1.0 is the integer 1) and an empty array from an empty
-- object (an empty table is either, unless vim.empty_dict() marks it as an
-- object).

local M = {}

--- The deepest nesting of an argument value; the arguments are depth 0.
M.max_depth = 16
--- The most values (containers and scalars) in one argument tree.
M.max_nodes = 4096

local empty_dict_mt = getmetatable(vim.empty_dict())

-- The largest integer a double holds exactly with all its neighbours; Go
-- accepts a decoded float64 as an integer up to the same bound.
local max_exact = 2 ^ 53

-- The JSON kind of a Lua value: "null", "boolean", "string", "number",
-- "object", "array", "empty" (a plain empty table, which can be either
-- container), "mixed" (a table with both kinds of keys, or holes) or
-- "unsupported" (a function or userdata).
local function kind(v)
  if v == nil or v == vim.NIL then
    return "null"
  end
  local t = type(v)
  if t == "boolean" or t == "string" or t == "number" then
    return t
  elseif t ~= "table" then
    return "unsupported"
  end
  if next(v) == nil then
    return getmetatable(v) == empty_dict_mt and "object" or "empty"
  end
  local n, total, strings, indices = #v, 0, 0, 0
  for k in pairs(v) do
    total = total + 1
    if type(k) == "string" then
      strings = strings + 1
    elseif type(k) == "number" and k >= 1 and k <= n and k % 1 == 0 then
      indices = indices + 1
    end
  end
  if strings == total then
    return "object"
  elseif indices == total and total == n then
    return "array"
  end
  return "mixed"
end

local function is_list(v)
  local k = kind(v)
  return k == "array" or k == "empty"
end

local function is_integer(v)
  return type(v) == "number" and v % 1 == 0 and v >= -max_exact and v <= max_exact
end

local function is_finite(v)
  return v == v and v ~= math.huge and v ~= -math.huge
end

-- The kind of v for messages, with an article.
local function described(v, k)
  if k == "number" then
    return is_integer(v) and "an integer" or "a number"
  end
  return ({
    null = "null",
    boolean = "a boolean",
    string = "a string",
    object = "an object",
    array = "an array",
    empty = "an empty table",
    mixed = "a table with both list and named entries",
  })[k] or ("an unsupported value (" .. type(v) .. ")")
end

local function article(typ)
  if typ == "object" or typ == "array" or typ == "integer" then
    return "an " .. typ
  elseif typ == "null" then
    return "null"
  end
  return "a " .. typ
end

-- Whether v, of kind k, has schema type typ; nil when typ is not one.
local function has_type(v, k, typ)
  if typ == "object" then
    return k == "object" or k == "empty"
  elseif typ == "array" then
    return k == "array" or k == "empty"
  elseif typ == "integer" then
    return k == "number" and is_integer(v)
  elseif typ == "string" or typ == "boolean" or typ == "number" or typ == "null" then
    return k == typ
  end
  return nil
end

-- Cuts s to at most n bytes without leaving half a UTF-8 sequence.
local function cut(s, n)
  if #s <= n then
    return s
  end
  return (s:sub(1, n):gsub("[\192-\255][\128-\191]*$", "")) .. "..."
end

local function describe(at)
  return at == "" and "arguments" or "argument " .. cut(at, 80)
end

local function schema_error(at, what)
  return "invalid tool schema: " .. describe(at) .. ": " .. what
end

-- Formats keys as "a, b", at most 20 of them, each cut to 64 bytes.
local function key_list(keys)
  table.sort(keys)
  local shown = {}
  for i = 1, math.min(#keys, 20) do
    shown[i] = cut(keys[i], 64)
  end
  local s = table.concat(shown, ", ")
  if #keys > 20 then
    s = s .. ", ... " .. (#keys - 20) .. " more"
  end
  return s
end

local function in_enum(v, allowed)
  for _, a in ipairs(allowed) do
    if v == a or (type(v) == "table" and type(a) == "table" and vim.deep_equal(v, a)) then
      return true
    end
  end
  return false
end

local function enum_text(allowed)
  local ok, s = pcall(vim.json.encode, allowed)
  return cut(ok and s or vim.inspect(allowed), 300)
end

-- Checks the keys of object v at path at against schema: every key
-- declared in properties, every required key present. Returns a message.
local function check_keys(v, schema, at)
  local props = schema.properties or {}
  if type(props) ~= "table" then
    return schema_error(at, "properties is not an object")
  end
  for k, p in pairs(props) do
    if type(p) ~= "table" then
      return schema_error(at, "property " .. cut(tostring(k), 64) .. " is not an object")
    end
  end
  local required = schema.required or {}
  if not is_list(required) then
    return schema_error(at, "required is not a list")
  end
  local missing, unknown = {}, {}
  for _, k in ipairs(required) do
    if type(k) ~= "string" then
      return schema_error(at, "required holds a " .. type(k) .. ", not a string")
    end
    if v[k] == nil then
      missing[#missing + 1] = k
    end
  end
  for k in pairs(v) do
    if type(k) ~= "string" or props[k] == nil then
      unknown[#unknown + 1] = tostring(k)
    end
  end
  local parts = {}
  if #missing > 0 then
    parts[#parts + 1] = "missing argument: " .. key_list(missing)
  end
  if #unknown > 0 then
    -- Naming the accepted keys lets a model correct a misspelt one at once.
    local accepted = {}
    for k in pairs(props) do
      accepted[#accepted + 1] = tostring(k)
    end
    parts[#parts + 1] = "unknown argument: " .. key_list(unknown) .. " (accepted: " .. key_list(accepted) .. ")"
  end
  if #parts == 0 then
    return nil
  end
  local msg = table.concat(parts, "; ")
  return at == "" and msg or "in " .. describe(at) .. ": " .. msg
end

-- Applies type, finiteness, enum, range and (for objects) the keys of
-- schema to v at path at. schema nil accepts any finite value.
local function check_value(v, k, schema, at)
  if schema ~= nil and schema.type ~= nil then
    local ok = nil
    if type(schema.type) == "string" then
      ok = has_type(v, k, schema.type)
    end
    if ok == nil then
      return schema_error(at, "type " .. cut(vim.inspect(schema.type), 64) .. " is not a JSON type name")
    elseif not ok then
      return describe(at) .. " must be " .. article(schema.type) .. ", got " .. described(v, k)
    end
  end
  if k == "number" and not is_finite(v) then
    return describe(at) .. " is not a finite number"
  end
  if schema == nil then
    return nil
  end
  if schema.enum ~= nil then
    if not is_list(schema.enum) then
      return schema_error(at, "enum is not a list")
    end
    if not in_enum(v, schema.enum) then
      return describe(at) .. " must be one of " .. enum_text(schema.enum)
    end
  end
  if k == "number" then
    local lo, hi = schema.minimum, schema.maximum
    if (type(lo) == "number" and v < lo) or (type(hi) == "number" and v > hi) then
      return describe(at) .. " must be between " .. tostring(lo or "-inf") .. " and " .. tostring(hi or "inf")
    end
  end
  if (k == "object" or k == "empty") and (schema.properties ~= nil or schema.type == "object") then
    return check_keys(v, schema, at)
  end
  return nil
end

-- Returns the children of v, of kind k, as frames with their schemas (objects
-- by key, sorted), or nil and a message when the schema is malformed.
local function children(v, k, schema, at, depth)
  local out = {}
  if k == "array" then
    local items = schema and schema.items
    if items ~= nil and type(items) ~= "table" then
      return nil, schema_error(at, "items is not an object")
    end
    for i, e in ipairs(v) do
      out[i] = { v = e, s = items, d = depth, at = at .. "[" .. (i - 1) .. "]" }
    end
    return out
  end
  local props = schema and schema.properties or {}
  if type(props) ~= "table" then
    return nil, schema_error(at, "properties is not an object")
  end
  local keys = {}
  for key in pairs(v) do
    keys[#keys + 1] = key
  end
  table.sort(keys, function(a, b)
    return tostring(a) < tostring(b)
  end)
  for i, key in ipairs(keys) do
    local sub = props[key]
    if sub ~= nil and type(sub) ~= "table" then
      return nil, schema_error(at, "property " .. cut(tostring(key), 64) .. " is not an object")
    end
    local name = tostring(key)
    out[i] = { v = v[key], s = sub, d = depth, at = at == "" and name or at .. "." .. name }
  end
  return out
end

--- Checks args against schema and returns the first problem as a message
--- for the caller, or nil when the arguments are valid. nil (or vim.NIL) for
--- args means no arguments, {}.
---@param schema table
---@param args any
---@return string|nil
function M.validate(schema, args)
  if type(schema) ~= "table" then
    return "invalid tool schema: no schema"
  end
  if args == nil or args == vim.NIL then
    args = vim.empty_dict()
  end
  local stack = { { v = args, s = schema, d = 0, at = "" } }
  local nodes = 1
  while #stack > 0 do
    local f = table.remove(stack)
    local k = kind(f.v)
    local err = check_value(f.v, k, f.s, f.at)
    if err then
      return err
    end
    local n = 0
    if k == "array" then
      n = #f.v
    elseif k == "object" or k == "mixed" then
      for _ in pairs(f.v) do
        n = n + 1
      end
    end
    if n > 0 then
      -- Both limits are checked before the children are expanded, as Go
      -- does, so the two sides stop at the same value.
      if f.d + 1 > M.max_depth then
        return "arguments exceed nesting depth " .. M.max_depth
      end
      if nodes + n > M.max_nodes then
        return "arguments exceed " .. M.max_nodes .. " nodes"
      end
      nodes = nodes + n
      local kids, cerr = children(f.v, k, f.s, f.at, f.d + 1)
      if not kids then
        return cerr
      end
      -- Pushed in reverse, so the first key or element is checked first.
      for i = #kids, 1, -1 do
        stack[#stack + 1] = kids[i]
      end
    end
  end
  return nil
end

return M
