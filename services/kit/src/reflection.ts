import { create, toBinary, type DescFile, type DescService } from "@bufbuild/protobuf";
import { FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt";
import type { ConnectRouter } from "@connectrpc/connect";
import * as v1 from "./gen/grpc/reflection/v1/reflection_pb.ts";
import * as v1alpha from "./gen/grpc/reflection/v1alpha/reflection_pb.ts";

/**
 * gRPC server reflection (v1 and v1alpha) over the descriptors of the served services,
 * so that `buf curl` and grpcurl list and call methods without a schema.
 */
export class DescriptorIndex {
  private readonly files = new Map<string, DescFile>();
  private readonly bySymbol = new Map<string, DescFile>();

  constructor(readonly services: DescService[]) {
    for (const s of services) this.addFile(s.file);
  }

  private addFile(file: DescFile): void {
    if (this.files.has(file.name + ".proto")) return;
    this.files.set(file.name + ".proto", file);
    for (const dep of file.dependencies) this.addFile(dep);
    const pkg = file.proto.package;
    const prefix = pkg ? pkg + "." : "";
    for (const m of file.messages) this.addMessageSymbols(file, m.typeName, m.nestedMessages, m.nestedEnums);
    for (const e of file.enums) this.bySymbol.set(e.typeName, file);
    for (const s of file.services) {
      this.bySymbol.set(s.typeName, file);
      for (const method of s.methods) this.bySymbol.set(`${s.typeName}.${method.name}`, file);
    }
    void prefix;
  }

  private addMessageSymbols(
    file: DescFile,
    typeName: string,
    nested: { typeName: string; nestedMessages: never[] | unknown[]; nestedEnums: unknown[] }[] | unknown[],
    enums: unknown[],
  ): void {
    this.bySymbol.set(typeName, file);
    for (const n of nested as { typeName: string; nestedMessages: unknown[]; nestedEnums: unknown[] }[]) {
      this.addMessageSymbols(file, n.typeName, n.nestedMessages, n.nestedEnums);
    }
    for (const e of enums as { typeName: string }[]) this.bySymbol.set(e.typeName, file);
  }

  fileByName(name: string): DescFile | undefined {
    return this.files.get(name);
  }

  fileBySymbol(symbol: string): DescFile | undefined {
    return this.bySymbol.get(symbol.replace(/^\./, ""));
  }

  /** The file and everything it imports, dependencies first. */
  withDependencies(file: DescFile): Uint8Array[] {
    const seen = new Set<string>();
    const out: Uint8Array[] = [];
    const visit = (f: DescFile) => {
      if (seen.has(f.name)) return;
      seen.add(f.name);
      for (const d of f.dependencies) visit(d);
      out.push(toBinary(FileDescriptorProtoSchema, f.proto));
    };
    visit(file);
    return out;
  }
}

type ReflectionModule = typeof v1 | typeof v1alpha;

function reflectionHandler(mod: ReflectionModule, index: DescriptorIndex) {
  return async function* (requests: AsyncIterable<v1.ServerReflectionRequest>) {
    for await (const req of requests) {
      const r = req.messageRequest;
      const base = { validHost: req.host, originalRequest: req };
      const notFound = (what: string) =>
        create(mod.ServerReflectionResponseSchema as typeof v1.ServerReflectionResponseSchema, {
          ...base,
          messageResponse: { case: "errorResponse", value: { errorCode: 5, errorMessage: `${what} not found` } },
        });
      const files = (f: DescFile | undefined, what: string) =>
        f
          ? create(mod.ServerReflectionResponseSchema as typeof v1.ServerReflectionResponseSchema, {
              ...base,
              messageResponse: {
                case: "fileDescriptorResponse",
                value: { fileDescriptorProto: index.withDependencies(f) },
              },
            })
          : notFound(what);
      switch (r.case) {
        case "listServices":
          yield create(mod.ServerReflectionResponseSchema as typeof v1.ServerReflectionResponseSchema, {
            ...base,
            messageResponse: {
              case: "listServicesResponse",
              value: { service: index.services.map((s) => ({ name: s.typeName })) },
            },
          });
          break;
        case "fileByFilename":
          yield files(index.fileByName(r.value), `file ${r.value}`);
          break;
        case "fileContainingSymbol":
          yield files(index.fileBySymbol(r.value), `symbol ${r.value}`);
          break;
        default:
          yield create(mod.ServerReflectionResponseSchema as typeof v1.ServerReflectionResponseSchema, {
            ...base,
            messageResponse: {
              case: "errorResponse",
              value: { errorCode: 12, errorMessage: "not implemented" },
            },
          });
      }
    }
  };
}

export function registerReflection(router: ConnectRouter, index: DescriptorIndex): void {
  router.service(v1.ServerReflection, { serverReflectionInfo: reflectionHandler(v1, index) });
  router.service(v1alpha.ServerReflection, {
    serverReflectionInfo: reflectionHandler(v1alpha, index) as never,
  });
}
