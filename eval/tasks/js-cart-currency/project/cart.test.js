import { test } from "node:test";
import assert from "node:assert/strict";
import { itemCount } from "./cart.js";

test("itemCount counts quantities", () => {
  assert.equal(itemCount([{ name: "pen", cents: 150, quantity: 3 }, { name: "pad", cents: 400, quantity: 1 }]), 4);
});
