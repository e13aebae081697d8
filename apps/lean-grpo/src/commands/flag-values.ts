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
