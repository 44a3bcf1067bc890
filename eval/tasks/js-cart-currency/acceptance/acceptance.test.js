import { test } from "node:test";
import assert from "node:assert/strict";
import { formatPrice } from "./format.js";
import { cartTotal } from "./cart.js";

test("acceptance: formatPrice takes a currency", () => {
  assert.equal(formatPrice(1234, "EUR"), "12.34 EUR");
  assert.equal(formatPrice(5, "USD"), "0.05 USD");
});

test("acceptance: cartTotal passes the currency on", () => {
  const items = [{ name: "pen", cents: 150, quantity: 3 }, { name: "pad", cents: 400, quantity: 1 }];
  assert.equal(cartTotal(items, "CHF"), "8.50 CHF");
  assert.equal(cartTotal([], "EUR"), "0.00 EUR");
});
