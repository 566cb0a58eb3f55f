// Copies and backlogs of one SIM's messages must not take every database connection while
// they wait for that SIM's lock (held across dispatch's proof call): other SIMs' submissions
// then wait for a connection until their deadline runs out.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "@transferops/kit";
import {
  deposit,
  OTHER_SIM,
  SIM,
  submit,
  openHarness,
  type Harness,
} from "../../../../test/support/evidence-harness.ts";
import { migrations } from "../store/migrations/index.ts";
import type { DispatchPort } from "./ports.ts";
import { eventually } from "../../../../test/support/eventually.ts";

const PROOF_MS = 800;
let h: Harness;
let small: Database;

beforeAll(async () => {
  h = await openHarness();
  small = await openDatabase({ url: h.tdb.url, schema: "evidence", migrations, poolMax: 3 });
});
afterAll(async () => {
  await small?.close();
  await h?.close();
});

describe("one SIM's backlog and another SIM's message, on a pool of 3 connections", () => {
  it("the other SIM's message is stored and correlated without waiting for the backlog", async () => {
    const fake = h.dispatch as unknown as DispatchPort;
    // Dispatch takes PROOF_MS to prove each of SIM's messages (a busy dispatch), at once for OTHER_SIM's.
    let backlogProofs = 0;
    let backlogAsked = 0;
    const dispatch: DispatchPort = {
      proveOperation: async (req, options) => {
        if (req.simId === SIM) {
          backlogAsked += 1;
          await new Promise((r) => setTimeout(r, PROOF_MS));
          backlogProofs += 1;
        }
        return fake.proveOperation(req, options);
      },
      attachEvidence: (req, options) => fake.attachEvidence(req, options),
      getSimActivity: (req, options) => fake.getSimActivity(req, options),
    };
    const deps = { ...h.deps, db: small, dispatch };
    const local = { ...h, deps };
    // Eight messages on SIM, each sent three times at once (the app's retries).
    const backlog = Array.from({ length: 8 }, (_, i) => deposit(10_000 + i));
    const all = backlog.flatMap((raw, i) =>
      [0, 1, 2].map(() => submit(local, raw, { clientMessageId: `backlog-${i}` })),
    );
    // The backlog holds its connections before the other SIM's message comes.
    await eventually(() => (backlogAsked > 0 ? true : undefined), 20_000, "the backlog in dispatch");
    const [other] = await submit(local, deposit(20_000), { simId: OTHER_SIM, clientMessageId: "other" });
    const provenBeforeOther = backlogProofs;
    const results = await Promise.all(all);

    expect(other.outcome).not.toBe("pending");
    expect(results.flat().filter((r) => r.outcome === "pending")).toEqual([]);
    // The backlog's 8 proofs run one after another; the other SIM's message waits for none of
    // them (measured in proofs, not milliseconds, so a busy machine does not decide it: when
    // every connection waited for the SIM's lock it finished after 7 of the 8).
    expect(provenBeforeOther).toBeLessThanOrEqual(2);
    expect(backlogProofs).toBe(8);
  });
});
