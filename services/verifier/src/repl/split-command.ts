// A REPL command given as one string (LEAN_REPL_CMD, `--repl-cmd`, or a YAML string)
// split into argv the way a POSIX shell splits words: whitespace separates, single
// quotes keep everything, double quotes keep everything but \" and \\, a backslash
// outside quotes escapes the next character. No expansion of any kind.

export function splitCommand(text: string): string[] {
  const words: string[] = [];
  let word = "";
  let inWord = false;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quote === "'") {
      if (ch === "'") quote = undefined;
      else word += ch;
    } else if (quote === '"') {
      if (ch === '"') quote = undefined;
      else if (ch === "\\" && (text[i + 1] === '"' || text[i + 1] === "\\")) word += text[++i];
      else word += ch;
    } else if (ch === "'" || ch === '"') {
      quote = ch;
      inWord = true;
    } else if (ch === "\\" && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
    } else if (/\s/.test(ch)) {
      if (inWord) words.push(word);
      word = "";
      inWord = false;
    } else {
      word += ch;
      inWord = true;
    }
  }
  if (quote) throw new Error(`unterminated ${quote} quote in command: ${text}`);
  if (inWord) words.push(word);
  return words;
}
