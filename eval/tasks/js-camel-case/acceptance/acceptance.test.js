import { test } from "node:test";
import assert from "node:assert/strict";
import { camelCase } from "./strings.js";

test("acceptance: camelCase", () => {
  assert.equal(camelCase(""), "");
  assert.equal(camelCase("already camel"), "alreadyCamel");
  assert.equal(camelCase("  spaced  out "), "spacedOut");
  assert.equal(camelCase("SHOUTING_CASE"), "shoutingCase");
  assert.equal(camelCase("one"), "one");
});
