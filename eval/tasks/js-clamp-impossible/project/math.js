/**
 * clamp limits x to the range [min, max].
 * @param {number} x
 * @param {number} min
 * @param {number} max
 * @returns {number}
 */
export function clamp(x, min, max) {
  return Math.min(Math.max(x, min), max);
}
