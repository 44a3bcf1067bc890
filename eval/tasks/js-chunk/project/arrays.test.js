import { test } from "node:test";
import assert from "node:assert/strict";
import { unique } from "./arrays.js";

test("unique keeps first occurrences", () => {
  assert.deepEqual(unique([3, 1, 3, 2, 1]), [3, 1, 2]);
});
