// The address syntax of `toolfence serve --http`.

/** Splits `HOST:PORT` (or `PORT`, or `[v6]:PORT`). */
export function parseHttpAddress(text: string): { hostname: string; port: number } {
  const match = /^(?:(\[[0-9a-fA-F:.]+\]|[^:\[\]]+):)?(\d{1,5})$/.exec(text);
  const port = match ? Number(match[2]) : NaN;
  if (!match || !(port >= 0 && port <= 65535)) {
    throw new Error(`--http must be HOST:PORT or PORT, not ${JSON.stringify(text)}`);
  }
  return { hostname: (match[1] ?? "127.0.0.1").replace(/^\[|\]$/g, ""), port };
}
