// Sizes as the policy file writes them: a whole number of bytes, or a whole
// number with a binary unit (`512MiB`, `2GiB`).

const UNITS: Record<string, number> = {
  B: 1,
  KiB: 1024,
  MiB: 1024 ** 2,
  GiB: 1024 ** 3,
  TiB: 1024 ** 4,
};

/** A size with a unit: digits, then one of B, KiB, MiB, GiB, TiB (no fractions, no spaces). */
export const SIZE_PATTERN = /^([1-9][0-9]{0,12})(B|KiB|MiB|GiB|TiB)$/;

/** The bytes of a size as written, or undefined when it is not one (or not a safe integer). */
export function sizeBytes(size: number | string): number | undefined {
  if (typeof size === "number") return Number.isSafeInteger(size) && size > 0 ? size : undefined;
  const match = SIZE_PATTERN.exec(size);
  if (!match) return undefined;
  const bytes = Number(match[1]) * UNITS[match[2]];
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}
