// What went wrong in an adapter transfer, in terms a server maps to a status code:
// "invalid" (the stream breaks the protocol), "corrupt" (bytes differ from their digest),
// "too-large" (a limit is exceeded).

export type TransferProblem = "invalid" | "corrupt" | "too-large";

export class AdapterTransferError extends Error {
  override readonly name = "AdapterTransferError";

  constructor(
    message: string,
    readonly problem: TransferProblem,
  ) {
    super(message);
  }
}
