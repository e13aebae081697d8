export { JsonLinesError, parseJsonLines, readJsonLines, readJsonObjects, type JsonLine } from "./json-lines.js";
