import { test } from "node:test";
import assert from "node:assert/strict";
import { camelCase } from "./strings.js";

test("two words", () => {
  assert.equal(camelCase("hello world"), "helloWorld");
});

test("hyphens, underscores and capitals", () => {
  assert.equal(camelCase("Hello-big_world"), "helloBigWorld");
});
