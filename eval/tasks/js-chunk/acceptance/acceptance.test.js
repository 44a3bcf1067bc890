import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { chunk } from "./arrays.js";

test("acceptance: chunk", () => {
  assert.deepEqual(chunk([1, 2, 3, 4, 5], 2), [[1, 2], [3, 4], [5]]);
  assert.deepEqual(chunk([1, 2, 3], 3), [[1, 2, 3]]);
  assert.deepEqual(chunk([1, 2], 5), [[1, 2]]);
  assert.deepEqual(chunk([], 2), []);
});

test("acceptance: chunk rejects bad sizes", () => {
  for (const size of [0, -1, 1.5]) {
    assert.throws(() => chunk([1, 2], size), RangeError, `size ${size}`);
  }
});

test("acceptance: arrays.test.js tests chunk", () => {
  assert.match(readFileSync("arrays.test.js", "utf8"), /chunk\(/);
});
