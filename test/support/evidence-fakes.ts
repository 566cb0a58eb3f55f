// Stand-ins for dispatch and fleet in the evidence service's own tests (store level, real
// PostgreSQL). They keep only what evidence relies on: dispatch picks one active operation
// of the SIM by exact amount, confirms it once, and answers a repeated message id with its
// first answer; fleet knows SIMs, grants, and keeps the newest balance reading. The
// end-to-end tests run the real services instead.

import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { ts } from "@transferops/kit";
import { OperationSchema, type Operation } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_pb";
import {
  AttachEvidenceResponseSchema,
  ProveOperationResponseSchema,
  type AttachEvidenceRequest,
  type ProveOperationRequest,
  type ProveOperationResponse,
} from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import type { RecordProvenBalanceRequest } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { SimSummarySchema } from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";

const ACTIVE = ["queued", "running", "awaiting_evidence", "awaiting_manual_dial"];

export interface FakeOperation {
  operationId: string;
  simId: string;
  agentId: string;
  opType: "deposit" | "balance";
  montant: number;
  msisdnDest: string;
  status: string;
  createdAt: Date;
  /** The operator reference of the text that confirmed it. */
  confirmedRef?: string;
}

/** A small mutual exclusion: dispatch decides under row locks, one proof at a time here. */
class Mutex {
  private tail = Promise.resolve();
  run<T>(fn: () => Promise<T>): Promise<T> {
    const result = this.tail.then(fn);
    this.tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}

export class FakeDispatch {
  readonly operations = new Map<string, FakeOperation>();
  /** Every confirmation, in order: one per operation is the invariant. */
  readonly confirmations: { operationId: string; messageId: string; by: "proof" | "attach" }[] = [];
  readonly proveCalls: ProveOperationRequest[] = [];
  readonly attachCalls: AttachEvidenceRequest[] = [];
  readonly scopeChecks: AttachEvidenceRequest[] = [];
  private readonly answers = new Map<string, ProveOperationResponse>();
  private readonly lock = new Mutex();
  /** The next N proof requests fail as if dispatch were unreachable. */
  unavailable = 0;
  /** Widens race windows: each proof takes this long inside dispatch. */
  delayMs = 0;

  add(op: Partial<FakeOperation> & { operationId: string; simId: string; montant: number }): FakeOperation {
    const full: FakeOperation = {
      agentId: "00000000-0000-4000-8000-00000000a6e1",
      opType: "deposit",
      msisdnDest: "690000001",
      status: "awaiting_evidence",
      createdAt: new Date(Date.now() - 60_000),
      ...op,
    };
    this.operations.set(full.operationId, full);
    return full;
  }

  detail(op: FakeOperation): Operation {
    return create(OperationSchema, {
      operationId: op.operationId,
      requestId: `req-${op.operationId}`,
      status: op.status,
      origin: "aggregated",
      opType: op.opType,
      simId: op.simId,
      agentId: op.agentId,
      operator: "operator_b",
      montant: BigInt(op.montant),
      msisdnDest: op.msisdnDest,
      createdAt: ts(op.createdAt),
    });
  }

  proveOperation = async (req: ProveOperationRequest): Promise<ProveOperationResponse> => {
    this.proveCalls.push(req);
    if (this.unavailable > 0) {
      this.unavailable -= 1;
      throw new ConnectError("dispatch unavailable", Code.Unavailable);
    }
    return this.lock.run(async () => {
      if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
      const known = this.answers.get(req.messageId);
      if (known) return known;
      const answer = this.decide(req);
      this.answers.set(req.messageId, answer);
      return answer;
    });
  };

  private decide(req: ProveOperationRequest): ProveOperationResponse {
    // The operator's repeat of a text that confirmed an operation: as dispatch, a restatement.
    const restated = [...this.operations.values()].find(
      (op) =>
        op.simId === req.simId &&
        op.status === "confirmed" &&
        req.operatorRef &&
        op.confirmedRef === req.operatorRef &&
        BigInt(op.montant) === req.amount,
    );
    if (restated)
      return create(ProveOperationResponseSchema, { outcome: "restated", operation: this.detail(restated) });
    const receivedBy = req.deviceReceivedAt ? timestampDate(req.deviceReceivedAt) : null;
    const fits = [...this.operations.values()].filter(
      (op) =>
        op.simId === req.simId &&
        ACTIVE.includes(op.status) &&
        (req.kind === "BAL" ? op.opType === "balance" : op.opType !== "balance" && BigInt(op.montant) === req.amount) &&
        (!receivedBy || op.createdAt.getTime() <= receivedBy.getTime()),
    );
    if (fits.length === 0) return create(ProveOperationResponseSchema, { outcome: "no_candidate" });
    if (fits.length > 1) {
      return create(ProveOperationResponseSchema, {
        outcome: "ambiguous",
        candidateOperationIds: fits.map((o) => o.operationId),
      });
    }
    const op = fits[0];
    const number = req.counterpartyMsisdn.replace(/^237/, "");
    if (req.kind !== "BAL" && number && number !== op.msisdnDest) {
      return create(ProveOperationResponseSchema, { outcome: "divergent", operation: this.detail(op) });
    }
    op.status = "confirmed";
    op.confirmedRef = req.operatorRef || undefined;
    this.confirmations.push({ operationId: op.operationId, messageId: req.messageId, by: "proof" });
    return create(ProveOperationResponseSchema, { outcome: "confirmed", operation: this.detail(op) });
  }

  attachEvidence = async (req: AttachEvidenceRequest) => {
    if (req.scopeOnly) {
      // Scope alone (this stand-in lets every caller act): 404 for an unknown operation.
      this.scopeChecks.push(req);
      if (!this.operations.has(req.operationId)) {
        throw new ConnectError(`Operation ${req.operationId} not found`, Code.NotFound);
      }
      return create(AttachEvidenceResponseSchema, {});
    }
    this.attachCalls.push(req);
    return this.lock.run(async () => {
      const op = this.operations.get(req.operationId);
      if (!op) throw new ConnectError(`Operation ${req.operationId} not found`, Code.NotFound);
      if (op.simId !== req.simId)
        throw new ConnectError("Evidence arrived on a different SIM", Code.FailedPrecondition);
      if (!ACTIVE.includes(op.status) && op.status !== "no_evidence") {
        throw new ConnectError(`Operation ${op.operationId} is ${op.status}`, Code.AlreadyExists);
      }
      op.status = "confirmed";
      this.confirmations.push({ operationId: op.operationId, messageId: req.messageId, by: "attach" });
      return create(AttachEvidenceResponseSchema, { operation: this.detail(op) });
    });
  };
}

export interface FakeSim {
  operator: "operator_a" | "operator_b";
  deviceId?: string;
  balance?: number;
  balanceAt?: Date;
}

export class FakeFleet {
  readonly sims = new Map<string, FakeSim>();
  readonly grants = new Map<string, { simIds: string[]; role: string; isActive: boolean }>();
  readonly balanceCalls: RecordProvenBalanceRequest[] = [];
  /** The next N balance writes fail as if fleet were unreachable. */
  unavailable = 0;

  lookupSim = async (req: { simId: string }) => {
    const sim = this.sims.get(req.simId);
    if (!sim) throw new ConnectError(`SIM ${req.simId} not found`, Code.NotFound);
    return {
      sim: create(SimSummarySchema, {
        simId: req.simId,
        operator: sim.operator,
        msisdn: "690000000",
        status: "active",
        deviceId: sim.deviceId,
        subscriptionSlot: sim.deviceId ? 0 : undefined,
        balanceMirror: sim.balance === undefined ? undefined : BigInt(sim.balance),
      }),
    };
  };

  getAgentScope = async (req: { agentId: string }) => {
    const g = this.grants.get(req.agentId);
    return {
      allowedSimIds: g?.simIds ?? [],
      role: g?.role ?? "",
      isActive: g?.isActive ?? false,
      fullName: "",
      exists: !!g,
    };
  };

  recordProvenBalance = async (req: RecordProvenBalanceRequest) => {
    this.balanceCalls.push(req);
    if (this.unavailable > 0) {
      this.unavailable -= 1;
      throw new ConnectError("fleet unavailable", Code.Unavailable);
    }
    const sim = this.sims.get(req.simId);
    if (!sim) throw new ConnectError(`SIM ${req.simId} not found`, Code.NotFound);
    const observed = timestampDate(req.observedAt!);
    const previous = sim.balance;
    const applied = !sim.balanceAt || sim.balanceAt.getTime() <= observed.getTime();
    if (applied) {
      sim.balance = Number(req.balance);
      sim.balanceAt = observed;
    }
    return {
      applied,
      previousBalance: previous === undefined ? undefined : BigInt(previous),
      balance: sim.balance === undefined ? undefined : BigInt(sim.balance),
    };
  };
}
