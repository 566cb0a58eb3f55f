import { randomUUID } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import { InFlight, outboxRow, type Caller, type EntityManager, check } from "@transferops/kit";
import type {
  CreateOperationRequest,
  DispatchService,
} from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import {
  admitOperation,
  checkOwnOperation,
  isAccountQuery,
  isOperator,
  isOpType,
  listAgentScope,
  parseOperationListQuery,
  refusal,
  requireKind,
  ROLES,
  type Actor,
  type OwningAgent,
  type Role,
  type SimCandidate,
  checkBalance,
  checkReplay,
  checkRequestIdNamespace,
  isDebiting,
  type ReplayedRequest,
  type Operator,
  type OpType,
  type DomainError,
  unwrap,
} from "../domain/index.ts";
import { changeEvents } from "../events/operations.ts";
import {
  findByRequestId,
  findOperation,
  freshRecord,
  insertQueuedOperation,
  listOperations,
  type NewOperation,
  lockSimReservation,
  reservedOn,
  simLoads,
  type OperationRecord,
} from "../store/operations.ts";
import { isUniqueViolation } from "../store/sql.ts";
import { actorOf, toOperation } from "../flows/mappers.ts";
import type { DispatchDeps, DispatchContext, FleetSim } from "../flows/ports.ts";
import { PendingDebits, type PendingDebit } from "../flows/pending-debits.ts";
import { isUuid, lockOrNotFound, move, notFound } from "../flows/transitions.ts";

type Impl = Pick<
  ServiceImpl<typeof DispatchService>,
  "createOperation" | "listOperations" | "getOperation" | "cancelOperation"
>;

const invalid = (field: string, message: string) => refusal("invalid_request", message, { field });

/**
 * Joins fleet's SIMs with dispatch's own knowledge of their load: what the table says,
 * plus the creates of this replica not yet committed (`pending`), counted as in flight.
 */
export async function candidatesOf(
  em: EntityManager,
  sims: FleetSim[],
  pending?: PendingDebits,
): Promise<SimCandidate[]> {
  const loads = await simLoads(
    em,
    sims.map((s) => s.sim_id),
  );
  return sims.map((s) => ({
    sim_id: s.sim_id,
    operator: s.operator,
    status: s.status,
    device_id: s.device_id,
    device_status: s.device_status,
    balance_mirror: s.balance_mirror,
    balance_updated_at: s.balance_updated_at,
    in_flight: (loads.get(s.sim_id)?.in_flight ?? 0) + (pending?.of(s.sim_id).count ?? 0),
    reserved: loads.get(s.sim_id)?.reserved ?? 0,
    last_finished_at: loads.get(s.sim_id)?.last_finished_at ?? null,
  }));
}

/**
 * Above this much FCFA left after a create (measured balance less everything committed
 * and everything this replica is still creating on the SIM), the SIM's lock is skipped.
 * Within one replica that is exact (each create counts every earlier one, committed or
 * pending); across replicas only more than this much created at the same instant on one
 * SIM by other replicas could overdraw it (20 creates at the default 500,000 ceiling).
 */
export const RESERVATION_LOCK_HEADROOM = 10_000_000;

/**
 * Inside the creating transaction: locks the selected SIM's debits and checks again that
 * its available balance covers the amount, now that concurrent creates have committed
 * theirs. A refusal here is the same insufficient_balance selection gives.
 */
export async function reserveBalance(
  tx: EntityManager,
  sim: SimCandidate,
  request: { operator: Operator; op_type: OpType; amount: number; now: Date; staleness_ms: number },
  read: {
    /** The new operation is already inserted: its own amount is not counted against it. */
    inserted: boolean;
    /**
     * What the SIM had committed, read by the insert's own statement (its snapshot, without
     * the new row): spares the read here.
     */
    reservedBefore?: number;
  },
  /**
   * This create among this replica's creates not yet committed (see PendingDebits), and
   * `others`, the SIM's pending debits taken before the read (by default, now).
   */
  pending?: { debits: PendingDebits; own: PendingDebit; others?: { amount: number; unlocked: number } },
): Promise<DomainError | null> {
  if (!isDebiting(request.op_type)) return null;
  const own = read.inserted ? request.amount : 0;
  // Taken before the read: a create of this replica is either still pending here or
  // committed before the read starts, so none is missed (one may count twice: safe side).
  const others = pending ? (pending.others ?? pending.debits.of(sim.sim_id)) : { amount: 0, unlocked: 0 };
  const othersPending = others.amount - (pending?.own.amount ?? 0);
  // Far from the limit, concurrent creates cannot exhaust the SIM: no lock, no queue.
  const seen = (read.reservedBefore ?? (await reservedOn(tx, sim.sim_id)) - own) + othersPending;
  if (sim.balance_mirror !== null && sim.balance_mirror - seen - request.amount >= RESERVATION_LOCK_HEADROOM) {
    pending?.own.skipLock();
    return null;
  }
  // Under the lock, the creates that took it before have committed; those that skipped
  // it are counted from here until they commit.
  const reserved = (await lockSimReservation(tx, sim.sim_id)) - own + others.unlocked;
  return checkBalance({ ...sim, reserved }, { ...request, sim_id: sim.sim_id });
}

export function roleOf(value: string): Role {
  return (ROLES as readonly string[]).includes(value) ? (value as Role) : "agent";
}

/** Full name used in `Cancelled by <full_name>.`; a caller without one is named by its kind. */
export function cancelledBy(actor: Actor): string {
  return `Cancelled by ${actor.full_name ?? actor.kind}.`;
}

/**
 * A replayed request_id answers with the first execution, but only to a caller who may
 * read that operation (request_ids are unique across the fleet, and another agent's
 * reuse learns only that the value is taken), and only when it is the same request
 * (domain/idempotency.ts; docs/decisions/dispatch.md).
 */
type Created = { record: OperationRecord; created: boolean };

function replayOf(actor: Actor, known: OperationRecord, request: ReplayedRequest): OperationRecord {
  if (checkOwnOperation(actor, known)) {
    throw refusal("request_id_taken", "request_id is already used by an operation outside your scope", {
      request_id: known.request_id,
    });
  }
  check(checkReplay(known, request));
  return known;
}

function replayedRequest(req: CreateOperationRequest, actor: Actor, agentId: string): ReplayedRequest {
  return {
    request_id: req.requestId,
    // The API key names the owner in its body. A session's owner is itself (its scope was
    // checked); intake's is whoever claimed the launch, and a launch's id is one
    // transaction's whichever agent completes it.
    agent_id: actor.kind === "api_key" ? agentId : null,
    operator: req.operator,
    op_type: req.typeOp || "deposit",
    montant: Number(req.montant),
    msisdn: req.clientMsisdn,
    sim_id: req.simId || null,
  };
}

export function operationHandlers(deps: DispatchDeps): Impl {
  const { db, fleet, config } = deps;

  // Fleet's view (breaker, agent, grant, SIMs) asked once for all the creates that need
  // the same one at the same time: a burst costs one call, not one per create.
  const contexts = new InFlight<string, DispatchContext>();

  // Creates in flight in this replica, by request_id: a repeat arriving meanwhile waits
  // for the first, then answers from the row it wrote or found, without the gates, the
  // SIM's lock or a read (a burst of replays costs one execution).
  const creating = new InFlight<string, Created>();

  const pending = new PendingDebits();

  async function create(req: CreateOperationRequest, first?: Promise<Created>): Promise<Created> {
    const actor = actorOf(req.caller);
    check(requireKind(actor, ["api_key", "intake", "session"], "create an operation"));
    const opType = req.typeOp || "deposit";
    if (!req.requestId.trim()) throw invalid("request_id", "request_id is required");
    check(checkRequestIdNamespace(actor.kind, req.requestId));
    if (!req.clientNom.trim()) throw invalid("client.nom", "client.nom is required");
    if (!isOpType(opType))
      throw invalid("type_op", `type_op must be one of deposit, withdrawal, balance, float_deposit, mini_statement`);
    if (!isOperator(req.operator)) throw invalid("operator", "operator must be operator_a or operator_b");
    const agentId = actor.kind === "session" ? actor.agent_id! : req.agentId;
    if (!agentId) throw invalid("agent_id", "agent_id is required with the API key");
    if (!isUuid(agentId)) throw invalid("agent_id", "agent_id must be a UUID");
    if (req.parentOperationId !== undefined && !isUuid(req.parentOperationId)) {
      throw invalid("parent_operation_id", "parent_operation_id must be a UUID");
    }

    // Idempotency answers before any gate: a replay gets the first result, even once
    // the breaker is on or the balance has moved. A repeat of a create in flight here
    // answers from it; a first execution that failed stored nothing, so this one runs on
    // its own. Otherwise the request_id is looked for only where it decides the answer:
    // when a gate refuses (or anything fails), and when the insert finds it taken. The
    // answer is the same as a lookup first, and a create saves the round trip.
    const known = await first?.then(
      (r) => r.record,
      () => undefined,
    );
    const replay = replayedRequest(req, actor, agentId);
    if (known) return { record: replayOf(actor, known, replay), created: false };
    try {
      const record = await execute(req, actor, agentId);
      if (record) return { record, created: true };
    } catch (err) {
      const taken = await findByRequestId(db.em(), req.requestId).catch(() => undefined);
      if (taken) return { record: replayOf(actor, taken, replay), created: false };
      throw err;
    }
    // The request_id is taken (a replay, or a concurrent repeat in another replica won the insert): answer with its row.
    return { record: replayOf(actor, (await findByRequestId(db.em(), req.requestId))!, replay), created: false };
  }

  /**
   * A create's gates, then its writes in one transaction (see `create`): the new row, or
   * undefined when the insert found its request_id taken.
   */
  async function execute(
    req: CreateOperationRequest,
    actor: Actor,
    agentId: string,
  ): Promise<OperationRecord | undefined> {
    const opType = (req.typeOp || "deposit") as OpType;
    const simId = req.simId || null;
    const query = {
      caller: req.caller as Caller | undefined,
      agentId,
      // A named SIM comes back whatever its operator, so a mismatch is named as such.
      operator: simId ? "" : req.operator,
      opType,
      simId,
    };
    const context = await contexts.run(`${agentId} ${query.operator} ${opType} ${simId ?? ""}`, () =>
      fleet.dispatchContext(query),
    );
    const em = db.em();
    const parent = req.parentOperationId ? ((await findOperation(em, req.parentOperationId)) ?? null) : null;
    const agent: OwningAgent = {
      agent_id: agentId,
      role: actor.kind === "session" && actor.role ? actor.role : roleOf(context.agent.role),
      grant: context.grant,
      exists: context.agent.exists,
      is_active: context.agent.is_active,
    };
    const now = deps.now();
    const admission = unwrap(
      admitOperation(
        {
          caller: actor.kind === "session" ? "session" : "api_key",
          agent,
          operator: req.operator as Operator,
          op_type: opType,
          amount: Number(req.montant),
          msisdn: req.clientMsisdn,
          merchant_code: req.merchantCode ?? null,
          origin: req.origin ?? null,
          sim_id: simId,
          parent_operation_id: req.parentOperationId ?? null,
          parent: parent && { operation_id: parent.operation_id, status: parent.status, has_retry: parent.has_retry },
        },
        {
          circuit_breaker_active: context.breaker_active,
          candidates: await candidatesOf(em, context.sims, pending),
          now,
          staleness_ms: config.balanceStalenessMs,
        },
      ),
    );
    const sim = context.sims.find((s) => s.sim_id === admission.sim.sim_id)!;
    const operationId = randomUUID();
    const amount = Number(req.montant);
    // Right after selection, with no wait in between: the next create already sees it.
    const debit = pending.add(sim.sim_id, isDebiting(opType) ? amount : 0);
    const op: NewOperation = {
      operation_id: operationId,
      request_id: req.requestId,
      parent_operation_id: req.parentOperationId ?? null,
      status: admission.status,
      origin: admission.origin,
      op_type: opType,
      agent_id: agentId,
      operator: req.operator as Operator,
      montant: amount,
      msisdn_dest: admission.msisdn_dest,
      dest_name: req.clientNom || null,
      contact_id: req.contactId ?? null,
      merchant_code: req.merchantCode ?? null,
      // Account queries have no recipient to verify (contract, Name verification).
      partner_verified: isAccountQuery(opType) ? false : (req.partnerVerified ?? true),
      sim_id: sim.sim_id,
      device_id: sim.device_id,
      device_label: sim.device_label,
      subscription_slot: sim.subscription_slot,
      created_at: now,
    };
    const events = changeEvents(freshRecord(op), {
      trigger: "create",
      previous_status: "",
      actor_agent_id: actor.kind === "session" ? actor.agent_id : null,
      at: now,
    }).map(outboxRow);
    const result = await db
      .tx(async (tx) => {
        // Taken before the statement's snapshot: see reserveBalance.
        const others = pending.of(sim.sim_id);
        const created = await insertQueuedOperation(tx, op, events);
        if (!created) return undefined;
        // The SIM's lock, when needed, is taken last, after the insert, so it is held only
        // until commit; a create the balance no longer covers rolls back with insufficient_balance.
        const short = await reserveBalance(
          tx,
          admission.sim,
          {
            operator: req.operator as Operator,
            op_type: opType,
            amount,
            now,
            staleness_ms: config.balanceStalenessMs,
          },
          { inserted: true, reservedBefore: created.reserved_before },
          { debits: pending, own: debit, others },
        );
        if (short) throw short;
        return created.record;
      })
      .catch((err: unknown) => {
        if (isUniqueViolation(err, "operations_one_retry")) {
          throw refusal("retry_not_allowed", `Operation ${req.parentOperationId} already has a retry`, {
            parent_operation_id: req.parentOperationId,
            has_retry: true,
          });
        }
        throw err;
      })
      .finally(debit.end);
    if (!result) return undefined;
    deps.idle.forget(result.device_id);
    deps.published();
    return result;
  }

  return {
    async createOperation(req) {
      const first = creating.get(req.requestId);
      const { record, created } = first
        ? await create(req, first)
        : await creating.run(req.requestId, () => create(req));
      return { operation: toOperation(record), created };
    },

    async listOperations(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["session", "api_key"], "list operations"));
      const filters = unwrap(
        parseOperationListQuery({
          status: req.status,
          sim_id: req.simId,
          date: req.date,
          date_from: req.dateFrom,
          date_to: req.dateTo,
          search: req.search,
          limit: req.limit,
        }),
      );
      const scope = listAgentScope(actor, req.agentId || null);
      if (scope instanceof Error) throw scope;
      const found = await listOperations(db.em(), { ...filters, agent_id: scope.agent_id });
      return { operations: found.map(toOperation) };
    },

    async getOperation(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["session", "api_key"], "read an operation"));
      const found = isUuid(req.operationId) ? await findOperation(db.em(), req.operationId) : undefined;
      if (!found) throw notFound(req.operationId);
      check(checkOwnOperation(actor, found));
      return { operation: toOperation(found) };
    },

    async cancelOperation(req) {
      const actor = actorOf(req.caller);
      check(requireKind(actor, ["session"], "cancel an operation"));
      if (!isUuid(req.operationId)) throw notFound(req.operationId);
      const now = deps.now();
      const after = await db.tx(async (em) => {
        const before = await lockOrNotFound(em, req.operationId);
        check(checkOwnOperation(actor, before));
        return move(
          em,
          before,
          { type: "cancel" },
          { reject_reason: cancelledBy(actor), finished_at: now },
          { trigger: "cancel", actor_agent_id: actor.agent_id, failure_reason: "cancelled_by_agent", at: now },
        );
      });
      deps.published();
      return { operation: toOperation(after) };
    },
  };
}
