// The alert on an operator's changed wording, through submission and real PostgreSQL: the
// share of a SIM's texts no rule recognises, over the last hour against its usual level.
import { fromBinary } from "@bufbuild/protobuf";
import { AlertRaisedSchema } from "@transferops/kit/gen/transferops/common/v1/alerts_pb";
import { describe, expect, it } from "vitest";
import { deposit, useHarness, submit, SIM, type Harness } from "../../../../test/support/evidence-harness.ts";

let h: Harness;
useHarness((opened) => (h = opened));

const DAY = 86_400_000;
/** A text no wording recognises (the shape of a reworded receipt with nothing labelled). */
const unknown = (i: number) => `Operation ${4800 + i} enregistree pour le compte principal.`;

async function wordingAlerts() {
  const rows = (await h.db
    .em()
    .execute(`select type, payload from evidence.outbox where topic = 'alerts' order by seq`)) as {
    type: string;
    payload: Buffer;
  }[];
  return rows
    .filter((r) => r.type.endsWith("AlertRaised"))
    .map((r) => fromBinary(AlertRaisedSchema, r.payload))
    .filter((a) => a.kind === "evidence_wording_changed");
}

describe("an operator's wording changes", () => {
  it("alerts with a sample when a SIM's texts stop being recognised", async () => {
    // The usual level: the SIM's texts were recognised.
    await submit(
      h,
      Array.from({ length: 20 }, (_, i) => deposit(1000 + i)),
      { correlate: false, receivedAt: new Date(Date.now() - 2 * DAY) },
    );
    await submit(h, [0, 1, 2, 3].map(unknown), { correlate: false });
    expect(await wordingAlerts()).toEqual([]); // four texts in the hour say nothing yet
    await submit(h, [4, 5].map(unknown), { correlate: false });
    const alerts = await wordingAlerts();
    expect(alerts.length).toBeGreaterThan(0);
    expect(alerts[0]).toMatchObject({ simId: SIM, severity: "warning" });
    expect(alerts[0].context).toMatchObject({
      operator: "operator_b",
      share_pct: 100,
      usual_share_pct: 0,
      sample: unknown(4),
    });
    expect(alerts[0].dedupeKey).toMatch(new RegExp(`^evidence_wording_changed:${SIM}:`));
  });

  it("stays quiet at a SIM's usual share of unrecognised texts", async () => {
    await submit(
      h,
      Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? deposit(2000 + i) : unknown(100 + i))),
      { correlate: false, receivedAt: new Date(Date.now() - 2 * DAY) },
    );
    await submit(h, [...[0, 1, 2].map(unknown), deposit(3001), deposit(3002), deposit(3003)], { correlate: false });
    expect(await wordingAlerts()).toEqual([]);
  });
});
