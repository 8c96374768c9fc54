// The one implicit conversion the validator allows (xun's rule): models often
// send an array parameter as a string, either JSON ('["a","b"]') or a
// comma-separated list ("a, b").

/** Parses a string argument into an array, or returns undefined if it is not one. */
export function arrayFromString(text: string): unknown[] | undefined {
  const trimmed = text.trim();
  if (trimmed.startsWith("[")) {
    try {
      const parsed = JSON.parse(trimmed);
      return Array.isArray(parsed) ? parsed : undefined;
    } catch {
      return undefined;
    }
  }
  if (trimmed === "") return [];
  return trimmed.split(",").map((part) => part.trim());
}

/** Applies {@linkcode arrayFromString} to the top-level parameters `isArrayParam` names. */
export function coerceArrayStrings(
  args: Record<string, unknown>,
  isArrayParam: (key: string) => boolean,
): Record<string, unknown> {
  let copy: Record<string, unknown> | undefined;
  for (const [key, value] of Object.entries(args)) {
    if (typeof value !== "string" || !isArrayParam(key)) continue;
    const parsed = arrayFromString(value);
    if (parsed === undefined) continue;
    copy ??= { ...args };
    copy[key] = parsed;
  }
  return copy ?? args;
}
