/**
 * formatPrice formats an amount in cents as dollars, e.g. "$12.34".
 * @param {number} cents
 * @returns {string}
 */
export function formatPrice(cents) {
  return "$" + (cents / 100).toFixed(2);
}
