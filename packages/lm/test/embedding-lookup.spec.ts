// The embedding's hand-written gradient (a host scatter-add) against the one-hot form
// dTable = onehot(ids)ᵀ·dRows, with repeated ids, on cpu and wasm.
import { beforeAll, describe, expect, it } from "vitest";
import * as tf from "@tensorflow/tfjs-core";
import { useBackend } from "../src/backend/tensor-backend.js";
import { embeddingLookup } from "../src/model/embedding-lookup.js";
import { lossGradients } from "../src/gradients/adapter-gradients.js";

describe.each(["cpu", "wasm"] as const)("embeddingLookup on %s", (backend) => {
  beforeAll(async () => {
    await useBackend(backend);
  });

  it("returns the rows of the table and accumulates the gradient of repeated ids", async () => {
    const vocab = 7;
    const hidden = 3;
    const table = tf.variable(
      tf.tensor2d(
        Array.from({ length: vocab * hidden }, (_, i) => Math.sin(i)),
        [vocab, hidden],
      ),
      true,
      `emb-${backend}`,
    );
    const ids = Int32Array.from([4, 1, 4, 6, 4, 1]);
    const rowWeights = tf.tensor2d(
      Array.from({ length: ids.length * hidden }, (_, i) => Math.cos(3 * i)),
      [ids.length, hidden],
    );

    const rows = embeddingLookup(table, ids);
    const tableData = table.arraySync();
    expect(rows.arraySync()).toEqual(Array.from(ids, (id) => tableData[id]));

    const { value, grads } = lossGradients(() => tf.sum(tf.mul(embeddingLookup(table, ids), rowWeights)) as tf.Scalar, [table]);
    const expected = tf.matMul(tf.cast(tf.oneHot(tf.tensor1d(ids, "int32"), vocab), "float32"), rowWeights, true, false);
    const got = grads[table.name]!.arraySync() as number[][];
    (expected.arraySync() as number[][]).forEach((row, r) => row.forEach((v, c) => expect(got[r]![c]!).toBeCloseTo(v, 5)));
    expect(got[4]![0]).not.toBeCloseTo(0, 3); // id 4 appears three times: its row is a sum
    tf.dispose([value, ...Object.values(grads), expected, rows, rowWeights, table]);
  });

  it("is a plain gather for a frozen table", () => {
    const table = tf.tensor2d([
      [1, 2],
      [3, 4],
    ]);
    const rows = embeddingLookup(table, Int32Array.from([1, 1, 0]));
    expect(rows.arraySync()).toEqual([
      [3, 4],
      [3, 4],
      [1, 2],
    ]);
    tf.dispose([table, rows]);
  });
});
