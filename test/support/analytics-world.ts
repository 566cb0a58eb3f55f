import { randomUUID } from "node:crypto";
import { create, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { createLogger, KafkaBus, Topics, type BusMessage } from "@transferops/kit";
import { OperationSchema } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_pb";
import { OperationChangedSchema } from "@transferops/kit/gen/transferops/dispatch/v1/events_pb";
import {
  MessageCorrelatedSchema,
  MessageDismissedSchema,
  MessageLinkedSchema,
  MessageStoredSchema,
} from "@transferops/kit/gen/transferops/evidence/v1/events_pb";
import { EvidenceSchema } from "@transferops/kit/gen/transferops/evidence/v1/evidence_pb";
import { DeviceChangedSchema, SimChangedSchema } from "@transferops/kit/gen/transferops/fleet/v1/events_pb";
import { SimSchema } from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";
import { TransactionChangedSchema } from "@transferops/kit/gen/transferops/intake/v1/events_pb";

/**
 * Builds the events other services publish (dispatch, evidence, fleet, intake), so the
 * analytics projection can be tested on a fixed world. Every event keeps its id: publishing
 * the list again is a redelivery.
 */
export class EventWorld {
  readonly events: BusMessage[] = [];

  private add<S extends DescMessage>(topic: string, key: string, schema: S, message: MessageShape<S>, at: Date) {
    const id = randomUUID();
    this.events.push({
      topic,
      key,
      value: toBinary(schema, message),
      headers: {
        "event-id": id,
        "event-type": schema.typeName,
        "occurred-at": at.toISOString(),
        "correlation-id": id,
      },
    });
  }

  /** One transition of an operation, as dispatch's OperationChanged. */
  operation(
    o: {
      id: string;
      agentId: string;
      opType: string;
      montant: number;
      simId: string;
      deviceId: string;
      deviceLabel: string;
      createdAt: string;
    },
    t: {
      status: string;
      previous?: string;
      trigger: string;
      at: string;
      finishedAt?: string;
      outcome?: string;
      decision?: string;
      evidence?: { receivedAt: string; fee?: number };
    },
  ): this {
    const at = new Date(t.at);
    const operation = create(OperationSchema, {
      operationId: o.id,
      requestId: `req-${o.id}`,
      status: t.status,
      origin: "assisted",
      opType: o.opType,
      simId: o.simId,
      deviceId: o.deviceId,
      deviceLabel: o.deviceLabel,
      agentId: o.agentId,
      operator: "operator_a",
      montant: BigInt(o.montant),
      msisdnDest: "670000000",
      createdAt: timestampFromDate(new Date(o.createdAt)),
      finishedAt: t.finishedAt ? timestampFromDate(new Date(t.finishedAt)) : undefined,
      evidence: t.evidence
        ? {
            amount: BigInt(o.montant),
            fee: t.evidence.fee === undefined ? undefined : BigInt(t.evidence.fee),
            rawText: "…",
            receivedAt: timestampFromDate(new Date(t.evidence.receivedAt)),
          }
        : undefined,
    });
    this.add(
      Topics.operations,
      o.id,
      OperationChangedSchema,
      create(OperationChangedSchema, {
        operation,
        previousStatus: t.previous ?? "",
        trigger: t.trigger,
        deviceOutcome: t.outcome ?? "",
        decision: t.decision ?? "",
        changedAt: timestampFromDate(at),
      }),
      at,
    );
    return this;
  }

  /** A message as evidence stores and correlates it. */
  message(m: {
    id: string;
    simId: string;
    receivedAt: string;
    kind: string;
    outcome: string;
    ambiguous?: boolean;
    operationId?: string;
  }): this {
    const at = new Date(m.receivedAt);
    this.add(
      Topics.messages,
      m.id,
      MessageStoredSchema,
      create(MessageStoredSchema, {
        evidence: create(EvidenceSchema, {
          id: m.id,
          simId: m.simId,
          receivedAt: timestampFromDate(at),
          kind: m.kind,
          outcome: "pending",
          rawText: "…",
        }),
      }),
      at,
    );
    this.add(
      Topics.messages,
      m.id,
      MessageCorrelatedSchema,
      create(MessageCorrelatedSchema, {
        messageId: m.id,
        simId: m.simId,
        outcome: m.outcome,
        isAmbiguous: m.ambiguous ?? false,
        operationId: m.operationId ?? "",
        kind: m.kind,
        receivedAt: timestampFromDate(at),
        correlatedAt: timestampFromDate(at),
      }),
      at,
    );
    return this;
  }

  attach(m: { id: string; simId: string; receivedAt: string; operationId: string; at: string }): this {
    this.add(
      Topics.messages,
      m.id,
      MessageLinkedSchema,
      create(MessageLinkedSchema, {
        messageId: m.id,
        simId: m.simId,
        operationId: m.operationId,
        link: "attached",
        receivedAt: timestampFromDate(new Date(m.receivedAt)),
        linkedAt: timestampFromDate(new Date(m.at)),
      }),
      new Date(m.at),
    );
    return this;
  }

  dismiss(m: { id: string; simId: string; at: string }): this {
    this.add(
      Topics.messages,
      m.id,
      MessageDismissedSchema,
      create(MessageDismissedSchema, {
        messageId: m.id,
        simId: m.simId,
        reason: "other",
        dismissedAt: timestampFromDate(new Date(m.at)),
      }),
      new Date(m.at),
    );
    return this;
  }

  sim(s: { id: string; status: string; deviceId?: string; balance?: number; balanceAt?: string }): this {
    this.add(
      Topics.fleet,
      s.id,
      SimChangedSchema,
      create(SimChangedSchema, {
        sim: create(SimSchema, {
          simId: s.id,
          operator: "operator_a",
          msisdn: "650000000",
          status: s.status,
          deviceId: s.deviceId,
          balanceMirror: s.balance === undefined ? undefined : BigInt(s.balance),
          balanceUpdatedAt: s.balanceAt ? timestampFromDate(new Date(s.balanceAt)) : undefined,
        }),
        change: "updated",
      }),
      new Date(),
    );
    return this;
  }

  device(id: string, label: string): this {
    this.add(
      Topics.fleet,
      id,
      DeviceChangedSchema,
      create(DeviceChangedSchema, { deviceId: id, label, status: "active", change: "created" }),
      new Date(),
    );
    return this;
  }

  transaction(t: { id: string; state: string; xaf: number; eur?: number; launchedBy?: string; date: string }): this {
    const at = new Date(t.date);
    this.add(
      Topics.transactions,
      t.id,
      TransactionChangedSchema,
      create(TransactionChangedSchema, {
        transactionId: t.id,
        requestId: `req-${t.id}`,
        state: t.state,
        trigger: "create",
        operator: "operator_a",
        receivedAmountXaf: BigInt(t.xaf),
        sendAmountEur: t.eur,
        rate: t.eur ? t.xaf / t.eur : undefined,
        launchedBy: t.launchedBy ?? "",
        transactionDate: timestampFromDate(at),
        changedAt: timestampFromDate(at),
      }),
      at,
    );
    return this;
  }

  /** Publishes every event of the world (again: a redelivery) on the system's topics. */
  async publish(sys: { env: Record<string, string>; topicPrefix: string }): Promise<void> {
    const bus = new KafkaBus({
      brokers: sys.env.KAFKA_BROKERS.split(","),
      clientId: "analytics-world",
      prefix: sys.topicPrefix,
      log: createLogger("analytics-world", { level: "silent" }),
    });
    try {
      await bus.publish(this.events);
    } finally {
      await bus.close();
    }
  }
}
