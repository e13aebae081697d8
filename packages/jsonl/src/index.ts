export { JsonLinesError, jsonErrorPlace, parseJsonLines, readJsonLines, readJsonObjects, type JsonLine } from "./json-lines.js";
