// The HandlerContext of a call grpc-js serves: its headers read from the call's metadata.
import type { DescMethod, DescService } from "@bufbuild/protobuf";
import type { Metadata } from "@grpc/grpc-js";
import { CallContext } from "../calls/call-context.js";
import { metadataEntries, metadataValue } from "./grpc-status.js";

export class GrpcCallContext extends CallContext {
  constructor(
    service: DescService,
    method: DescMethod,
    deadlineAt: number | undefined,
    private readonly metadata: Metadata,
  ) {
    super(service, method, "grpc", deadlineAt);
  }

  header(name: string): string | undefined {
    return metadataValue(this.metadata, name);
  }

  protected headerEntries(): Iterable<[string, string]> {
    return metadataEntries(this.metadata);
  }
}
