/**
 * camelCase joins the words of s (separated by spaces, hyphens or
 * underscores) into one identifier: the first word lower-case, every later
 * word capitalised.
 * @param {string} s
 * @returns {string}
 */
export function camelCase(s) {
  const words = s.split(" ");
  return words
    .map((w, i) => (i === 0 ? w : w[0].toUpperCase() + w.slice(1)))
    .join("");
}
