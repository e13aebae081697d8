// Receiving an adapter stream (header first, then chunks) into the directory the header
// names (`directoryFor`: a fresh directory under a root, asked for once the header passed
// its checks). Each part is yielded once written and checked, so a caller can relay the
// stream while keeping a copy; if the stream fails or is left unfinished, the directory is removed.
import type { AdapterEnvelope, AdapterHeader, AdapterPart } from "./adapter-envelope.js";
import { AdapterDirWriter, DEFAULT_TRANSFER_LIMITS, type AdapterDirectory, type TransferLimits } from "./adapter-dir-writer.js";
import { AdapterTransferError } from "./adapter-transfer-error.js";

export async function* receiveAdapter<Message>(
  envelope: AdapterEnvelope<Message, unknown>,
  messages: AsyncIterable<Message>,
  directoryFor: (header: AdapterHeader) => Promise<AdapterDirectory>,
  limits: TransferLimits = DEFAULT_TRANSFER_LIMITS,
): AsyncGenerator<AdapterPart> {
  let writer: AdapterDirWriter | undefined;
  let complete = false;
  try {
    for await (const message of messages) {
      const part = envelope.open(message);
      if (!writer) {
        if (part.case !== "header")
          throw new AdapterTransferError(`the first message must be \`${envelope.headerField}\`, not \`${part.case}\``, "invalid");
        const header = part.value;
        writer = await AdapterDirWriter.create(() => directoryFor(header), header.files, limits);
      } else if (part.case === "header") {
        throw new AdapterTransferError(`after \`${envelope.headerField}\`, every message must be a \`chunk\``, "invalid");
      } else {
        await writer.write(part.value);
      }
      yield part;
    }
    if (!writer) throw new AdapterTransferError(`the stream ended before its \`${envelope.headerField}\``, "invalid");
    await writer.finish();
    complete = true;
  } finally {
    if (!complete) await writer?.discard();
  }
}
