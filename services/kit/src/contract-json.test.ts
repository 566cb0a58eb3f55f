// The contract's JSON of a proto message (contract-json.ts): what every REST response and
// webhook body is written with.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { toContractJson } from "./contract-json.ts";
import { ErrorDetailSchema } from "./gen/transferops/common/v1/errors_pb.ts";
import {
  HealthCheckResponseSchema,
  HealthCheckResponse_ServingStatus as Status,
} from "./gen/grpc/health/v1/health_pb.ts";
import { ContactCountsSchema, ContactSchema } from "./gen/transferops/messaging/v1/messaging_pb.ts";
import { CreateImportRequestSchema } from "./gen/transferops/messaging/v1/messaging_service_pb.ts";

const AT = new Date("2026-11-30T21:08:09.123Z");

describe("a proto message as the contract's JSON", () => {
  it("names each field as the proto does, null where an optional field or a message is unset", () => {
    const contact = create(ContactSchema, {
      customerId: "c-1",
      firstName: "Amina",
      email: "",
      customFields: { quartier: "Bastos" },
      tags: [{ tagId: "t-1", name: "VIP" }],
      collaborators: ["a-1", "a-2"],
      createdAt: timestampFromDate(AT),
      transferCount: 3,
    });
    expect(JSON.stringify(toContractJson(ContactSchema, contact))).toBe(
      JSON.stringify({
        customer_id: "c-1",
        first_name: "Amina",
        last_name: null,
        phone: null,
        // Set to empty is set: an explicit field's presence, not its value.
        email: "",
        language: null,
        custom_fields: { quartier: "Bastos" },
        tags: [{ tag_id: "t-1", name: "VIP" }],
        lifecycle: null,
        collaborators: ["a-1", "a-2"],
        blocked: false,
        deleted_at: null,
        created_at: "2026-11-30T21:08:09.123Z",
        updated_at: null,
        last_transfer_at: null,
        transfer_count: 3,
        last_operation_id: null,
      }),
    );
  });

  it("writes 64-bit integers as numbers, bytes as base64, an enum by its name", () => {
    expect(
      toContractJson(
        ContactCountsSchema,
        create(ContactCountsSchema, { total: 12n, byLifecycle: [{ key: "lead", count: 7n }], deleted: 1n }),
      ),
    ).toEqual({ total: 12, by_lifecycle: [{ key: "lead", count: 7 }], by_tag: [], blocked: 0, deleted: 1 });
    expect(
      toContractJson(CreateImportRequestSchema, create(CreateImportRequestSchema, { content: Buffer.from("a;b\n") })),
    ).toMatchObject({ caller: null, content: "YTtiCg==" });
    expect(
      toContractJson(HealthCheckResponseSchema, create(HealthCheckResponseSchema, { status: Status.NOT_SERVING })),
    ).toEqual({ status: "NOT_SERVING" });
  });

  it("writes a Struct as plain JSON, nested lists and structs, nulls and numbers included", () => {
    const detail = create(ErrorDetailSchema, {
      code: "invalid_request",
      context: { sim_id: "s-1", limit: 500, gone: null, ok: false, ids: ["a", {}] },
      violations: [{ field: "limit", message: "at most 500" }],
    });
    expect(toContractJson(ErrorDetailSchema, detail)).toEqual({
      code: "invalid_request",
      detail: "",
      context: { sim_id: "s-1", limit: 500, gone: null, ok: false, ids: ["a", {}] },
      violations: [{ field: "limit", message: "at most 500" }],
    });
    expect(toContractJson(ErrorDetailSchema, create(ErrorDetailSchema, {})).context).toBeNull();
  });

  it("gives every row of a page the same keys, in the proto's order", () => {
    const rows = [
      create(ContactSchema, { customerId: "c-1" }),
      create(ContactSchema, { customerId: "c-2", phone: "+237677000001" }),
    ];
    const keys = rows.map((r) => Object.keys(toContractJson(ContactSchema, r)).join(","));
    expect(keys[0]).toBe(keys[1]);
    expect(keys[0]).toBe(ContactSchema.fields.map((f) => f.name).join(","));
  });
});
