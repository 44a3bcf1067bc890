import { formatPrice } from "./format.js";

/**
 * @typedef {{name: string, cents: number, quantity: number}} Item
 */

/**
 * itemCount is the number of items in the cart, counting quantities.
 * @param {Item[]} items
 * @returns {number}
 */
export function itemCount(items) {
  return items.reduce((n, item) => n + item.quantity, 0);
}

/**
 * cartTotal is the formatted total price of the cart.
 * @param {Item[]} items
 * @returns {string}
 */
export function cartTotal(items) {
  const cents = items.reduce((sum, item) => sum + item.cents * item.quantity, 0);
  return formatPrice(cents);
}
