export { rowSeed, SeededRandom } from "./seeded-random.js";
