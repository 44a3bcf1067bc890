/**
 * unique returns the elements of array without repeats, in first-seen order.
 * @template T
 * @param {T[]} array
 * @returns {T[]}
 */
export function unique(array) {
  return [...new Set(array)];
}
