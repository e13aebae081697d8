// Numeric command-line flags: each parser names the flag, what was given and what is accepted.
function invalid(flag: string, text: string, accepted: string): Error {
  return new Error(`${flag} is ${JSON.stringify(text)}; it must be ${accepted}`);
}

export function positiveInteger(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw invalid(flag, text, "an integer >= 1");
  return value;
}

export function nonNegativeInteger(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0) throw invalid(flag, text, "an integer >= 0");
  return value;
}

export function positiveNumber(flag: string, text: string): number {
  const value = Number(text);
  if (!(value > 0) || !Number.isFinite(value)) throw invalid(flag, text, "a positive number");
  return value;
}

export function nonNegativeNumber(flag: string, text: string): number {
  const value = Number(text);
  if (!(value >= 0) || !Number.isFinite(value)) throw invalid(flag, text, "a number >= 0");
  return value;
}

/** A comma-separated list of integers >= 1, e.g. `--k 1,8,32`. */
export function positiveIntegerList(flag: string, text: string): number[] {
  const parts = text.split(",").map((part) => part.trim());
  if (parts.length === 0 || parts.some((part) => part === "")) throw invalid(flag, text, "integers >= 1 separated by commas, e.g. 1,8,32");
  return parts.map((part) => {
    const value = Number(part);
    if (!Number.isSafeInteger(value) || value < 1) throw invalid(flag, text, "integers >= 1 separated by commas, e.g. 1,8,32");
    return value;
  });
}

/** A probability in (0, 1], e.g. `--top-p 0.95`. */
export function unitInterval(flag: string, text: string): number {
  const value = Number(text);
  if (!(value > 0 && value <= 1)) throw invalid(flag, text, "a number in (0, 1]");
  return value;
}
