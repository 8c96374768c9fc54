// "Did you mean" suggestions for unknown tool names.

function editDistance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}

/** Up to `count` names closest to `name`, substring matches first. */
export function closestNames(name: string, names: readonly string[], count = 3): string[] {
  const lower = name.toLowerCase();
  return names
    .map((candidate) => {
      const c = candidate.toLowerCase();
      const contains = c.includes(lower) || lower.includes(c);
      return { candidate, score: contains ? -1 : editDistance(lower, c) };
    })
    .filter(({ score, candidate }) => score <= Math.max(2, Math.floor(candidate.length / 2)))
    .sort((x, y) => x.score - y.score || x.candidate.localeCompare(y.candidate))
    .slice(0, count)
    .map(({ candidate }) => candidate);
}
