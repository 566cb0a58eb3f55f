import { randomUUID } from "node:crypto";
import { create, fromBinary } from "@bufbuild/protobuf";
import { createLogger, csv, KafkaBus, Topics, ts, type BusMessage, type Subscription } from "@transferops/kit";
import { OperationConfirmedSchema } from "@transferops/kit/gen/transferops/dispatch/v1/events_pb";
import {
  ContactChangedSchema,
  ContactsImportedSchema,
  ImportFinishedSchema,
} from "@transferops/kit/gen/transferops/messaging/v1/events_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dumpErrors, publishTestEvent } from "../../../../test/support/fleet-fixtures.ts";
import { eventually, startTestSystem, TEST_API_KEY, type TestSystem } from "../../../../test/support/system.ts";

let sys: TestSystem;
let bus: KafkaBus;
let sub: Subscription;
const received: BusMessage[] = [];

beforeAll(async () => {
  sys = await startTestSystem();
  bus = new KafkaBus({
    brokers: csv(sys.env.KAFKA_BROKERS),
    clientId: "messaging-events-test",
    prefix: sys.topicPrefix,
    log: createLogger("test", { level: "silent" }),
  });
  sub = await bus.subscribe("messaging-events-test", [Topics.contacts], async (m) => void received.push(m));
});
afterAll(async () => {
  dumpErrors(sys?.logs);
  await sub?.close();
  await bus?.close();
  await sys?.stop();
});

const createContact = async (phone: string) => {
  const res = await sys.api.post("/v1/contacts", { token: TEST_API_KEY, body: { first_name: "Evt", phone } });
  expect(res.status).toBe(201);
  return res.body;
};

function confirmed(contactId: string, operationId: string, at: Date) {
  return create(OperationConfirmedSchema, {
    operation: { operationId, contactId, status: "confirmed" },
    trigger: "proof",
    confirmedAt: ts(at),
  });
}

describe("events of the messaging service", () => {
  it("publishes ContactChanged on the contacts topic for a change through the API", async () => {
    const c = await createContact("+237699000101");
    await sys.api.post(`/v1/contacts/${c.customer_id}/block`, { token: TEST_API_KEY });
    const changes = await eventually(() => {
      const mine = received
        .filter((m) => m.key === c.customer_id && m.headers["event-type"] === ContactChangedSchema.typeName)
        .map((m) => fromBinary(ContactChangedSchema, m.value));
      return mine.length >= 2 ? mine : undefined;
    });
    expect(changes.map((e) => e.change)).toEqual(["created", "blocked"]);
    expect(changes[1].contact).toMatchObject({ customerId: c.customer_id, blocked: true, phone: "+237699000101" });
  });

  it("publishes ImportFinished and the imported contacts", async () => {
    const res = await sys.api.post("/v1/imports", {
      token: TEST_API_KEY,
      body: { file: { content: "Name,Phone\nImported One,699000102\n" }, mapping: { template: "spreadsheet" } },
    });
    expect(res.status).toBe(202);
    const finished = await eventually(() => {
      const m = received.find(
        (x) => x.key === res.body.import_id && x.headers["event-type"] === ImportFinishedSchema.typeName,
      );
      return m ? fromBinary(ImportFinishedSchema, m.value) : undefined;
    });
    expect(finished.import).toMatchObject({ state: "completed", progress: { created: 1 } });
    const batches = received
      .filter((m) => m.key === res.body.import_id && m.headers["event-type"] === ContactsImportedSchema.typeName)
      .map((m) => fromBinary(ContactsImportedSchema, m.value));
    expect(batches).toHaveLength(1);
    expect(batches[0].updated).toEqual([]);
    expect(batches[0].created).toHaveLength(1);
    expect(batches[0].created[0]).toMatchObject({ phone: "+237699000102", firstName: "Imported", lastName: "One" });
  });

  it("records a confirmed operation on its contact once, even when the event is delivered twice", async () => {
    const c = await createContact("+237699000103");
    const eventId = randomUUID();
    const opId = randomUUID();
    const at = new Date("2026-11-20T10:00:00Z");
    for (let i = 0; i < 2; i++) {
      await publishTestEvent(sys, {
        topic: Topics.operations,
        key: opId,
        schema: OperationConfirmedSchema,
        message: confirmed(c.customer_id, opId, at),
        eventId,
      });
    }
    const second = randomUUID();
    await publishTestEvent(sys, {
      topic: Topics.operations,
      key: second,
      schema: OperationConfirmedSchema,
      message: confirmed(c.customer_id, second, new Date("2026-11-21T10:00:00Z")),
    });
    const after = await eventually(async () => {
      const r = await sys.api.get(`/v1/contacts/${c.customer_id}`, { token: TEST_API_KEY });
      return r.body.transfer_count >= 2 ? r.body : undefined;
    });
    // The redelivered event is in the inbox once: it was applied once.
    const inbox = await sys.db.query(`select count(*)::int as n from messaging.inbox where event_id = $1`, [eventId]);
    expect(inbox[0].n).toBe(1);
    expect(after).toMatchObject({
      transfer_count: 2,
      last_transfer_at: "2026-11-21T10:00:00.000Z",
      last_operation_id: second,
    });
  });

  it("ignores a confirmed operation whose contact_id names no contact; one without a contact's id costs no inbox row", async () => {
    const key = randomUUID();
    const publish = (contactId: string, opId: string) =>
      publishTestEvent(sys, {
        topic: Topics.operations,
        key,
        schema: OperationConfirmedSchema,
        message: confirmed(contactId, opId, new Date()),
      });
    // On one key, so in order: the two the handler skips, then one it takes (a contact's id, of no contact).
    const skipped = [randomUUID(), randomUUID()];
    const skippedEvents = [await publish("", skipped[0]!), await publish("crm-ref-42", skipped[1]!)];
    const taken = randomUUID();
    const takenEvent = await publish(randomUUID(), taken);
    await eventually(async () => {
      const r = await sys.db.query(`select 1 from messaging.inbox where event_id = $1`, [takenEvent]);
      return r.length ? true : undefined;
    });
    const inbox = await sys.db.query(`select count(*)::int as n from messaging.inbox where event_id = any($1)`, [
      skippedEvents,
    ]);
    expect(inbox[0].n).toBe(0);
    const rows = await sys.db.query(
      `select count(*)::int as n from messaging.contacts where last_operation_id = any($1)`,
      [[...skipped, taken]],
    );
    expect(rows[0].n).toBe(0);
  });
});
