// vitest setup: every test file loads tfjs afresh, and each would print its CPU backend's
// "install our node backend" banner; the filter drops exactly that message (other warnings pass).
import { filterTfjsBanner } from "../../src/process/tfjs-banner-filter.js";

filterTfjsBanner();
