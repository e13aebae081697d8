import type { DescFile, DescService } from "@bufbuild/protobuf";
import { nestedTypes } from "@bufbuild/protobuf/reflect";

/**
 * Lookup tables over the files that define the served services and everything they
 * import, built once so that reflection requests are map look-ups.
 */
export class DescriptorIndex {
  private readonly files = new Map<string, DescFile>();
  private readonly symbols = new Map<string, DescFile>();
  /** extendee type name → extension number → file declaring the extension */
  private readonly extensions = new Map<string, Map<number, DescFile>>();

  constructor(services: readonly DescService[]) {
    for (const service of services) this.add(service.file);
  }

  /** By proto file name, e.g. `leangrpo/v1/common.proto`. */
  fileByName(name: string): DescFile | undefined {
    return this.files.get(name);
  }

  /** By fully-qualified name of a message, enum, service, method or extension. */
  fileBySymbol(symbol: string): DescFile | undefined {
    return this.symbols.get(symbol);
  }

  fileByExtension(extendee: string, number: number): DescFile | undefined {
    return this.extensions.get(extendee)?.get(number);
  }

  /** Numbers of the known extensions of a message; undefined if the message is unknown. */
  extensionNumbers(extendee: string): number[] | undefined {
    const known = this.extensions.get(extendee);
    if (known) return [...known.keys()];
    return this.symbols.has(extendee) ? [] : undefined;
  }

  /**
   * The file first, then every file it imports transitively, each once: a client can
   * only build a descriptor once it has all of its imports.
   */
  withDependencies(file: DescFile): DescFile[] {
    const seen = new Set<DescFile>();
    const visit = (f: DescFile): void => {
      if (seen.has(f)) return;
      seen.add(f);
      f.dependencies.forEach(visit);
    };
    visit(file);
    return [...seen];
  }

  private add(file: DescFile): void {
    if (this.files.has(file.proto.name)) return;
    this.files.set(file.proto.name, file);
    for (const type of nestedTypes(file)) {
      this.symbols.set(type.typeName, file);
      if (type.kind === "service") {
        for (const method of type.methods) this.symbols.set(`${type.typeName}.${method.name}`, file);
      } else if (type.kind === "extension") {
        const byNumber = this.extensions.get(type.extendee.typeName) ?? new Map<number, DescFile>();
        byNumber.set(type.number, file);
        this.extensions.set(type.extendee.typeName, byNumber);
      }
    }
    for (const dep of file.dependencies) this.add(dep);
  }
}
