import { test } from "node:test";
import assert from "node:assert/strict";
import { clamp } from "./math.js";

test("clamp limits values above the maximum", () => {
  assert.equal(clamp(15, 0, 10), 10);
});

test("clamp leaves values above the maximum unchanged", () => {
  assert.equal(clamp(15, 0, 10), 15);
});
