// The product's TypeScript sources below a folder: no tests, no build output, no dependencies.
import { readdirSync, statSync } from "node:fs";
import path from "node:path";

export function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const file = path.join(dir, name);
    if (name === "node_modules" || name === "test" || name === "dist") return [];
    if (statSync(file).isDirectory()) return sourceFiles(file);
    return /\.tsx?$/u.test(name) && !/\.spec\.tsx?$/u.test(name) ? [file] : [];
  });
}
