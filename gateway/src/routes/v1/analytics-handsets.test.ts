import { create } from "@bufbuild/protobuf";
import {
  HandsetUnprovenSchema,
  UnprovenByHandsetReportSchema,
} from "@transferops/kit/gen/transferops/analytics/v1/analytics_pb";
import { describe, expect, it } from "vitest";
import { handsetReportJson } from "./analytics.ts";

describe("the unproven-by-handset report as the contract shows it", () => {
  it("names a deleted device null, as an operation does, and keeps a live one", () => {
    const report = create(UnprovenByHandsetReportSchema, {
      fleet: true,
      handsets: [
        create(HandsetUnprovenSchema, { deviceId: "", label: "Gone", dialled: 2n, unproven: 1n }),
        create(HandsetUnprovenSchema, { deviceId: "a1b2c3d4e5f60718", label: "Live", dialled: 1n, unproven: 1n }),
      ],
    });
    const json = handsetReportJson(report) as { handsets: { device_id: string | null; label: string }[] };
    expect(json.handsets.map((h) => [h.device_id, h.label])).toEqual([
      [null, "Gone"],
      ["a1b2c3d4e5f60718", "Live"],
    ]);
  });
});
