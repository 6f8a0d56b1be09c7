// Names a message lists when there may be thousands: the first few, and how many more (a message about 100,000
// directories stays a line, not 70 KB).

/** "a, b, c, d, e and 3 more" for eight names; all of them when there are no more than `shown`. */
export function fewNames(names: readonly string[], shown = 5): string {
  const first = names.slice(0, shown).join(', ');
  return names.length > shown ? `${first} and ${names.length - shown} more` : first;
}
