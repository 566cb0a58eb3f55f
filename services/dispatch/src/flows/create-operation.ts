import { randomUUID } from "node:crypto";
import { check, DEFAULT_OP_TYPE, InFlight, outboxRow, type Caller, type EntityManager } from "@transferops/kit";
import type { CreateOperationRequest } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import {
  admitOperation,
  checkOwnOperation,
  checkReplay,
  isAccountQuery,
  isDebiting,
  refusal,
  unwrap,
  type Actor,
  type Admission,
  type Operator,
  type OpType,
  type OwningAgent,
  type ReplayedRequest,
} from "../domain/index.ts";
import { changeEvents } from "../events/operations.ts";
import {
  findByRequestId,
  freshRecord,
  insertQueuedOperation,
  lockOperation,
  type NewOperation,
  type OperationRecord,
} from "../store/operations.ts";
import { isUniqueViolation } from "../store/sql.ts";
import { roleOf } from "./mappers.ts";
import { PendingDebits, type PendingDebit } from "./pending-debits.ts";
import type { DispatchContext, DispatchDeps, FleetSim } from "./ports.ts";
import { candidatesOf, reserveBalance } from "./reservation.ts";

export type Created = { record: OperationRecord; created: boolean };

/** A create's SIM, chosen by admission, with this create counted among the SIM's pending debits. */
interface Selected {
  admission: Admission;
  sim: FleetSim;
  debit: PendingDebit;
  now: Date;
}

/**
 * Creating an operation: idempotency, fleet's view, then one transaction for the SIMs'
 * loads, the gates, the SIM's selection and reservation, the row and its events. The
 * request's own fields are checked before (rpc/operations.ts); `agentId` is the
 * operation's owner.
 */
export class OperationCreation {
  // Fleet's view (breaker, agent, grant, SIMs) asked once for all the creates that need
  // the same one at the same time: a burst costs one call, not one per create.
  private readonly contexts = new InFlight<string, DispatchContext>();

  // Creates in flight in this replica, by request_id: a repeat arriving meanwhile waits
  // for the first, then answers from the row it wrote or found, without the gates, the
  // SIM's lock or a read (a burst of replays costs one execution).
  private readonly creating = new InFlight<string, Created>();

  private readonly pending = new PendingDebits();

  constructor(private readonly deps: DispatchDeps) {}

  create(req: CreateOperationRequest, actor: Actor, agentId: string): Promise<Created> {
    const first = this.creating.get(req.requestId);
    return first
      ? this.answer(req, actor, agentId, first)
      : this.creating.run(req.requestId, () => this.answer(req, actor, agentId));
  }

  /**
   * Idempotency answers before any gate: a replay gets the first result, even once the
   * breaker is on or the balance has moved. A repeat of a create in flight here answers
   * from it; a first execution that failed stored nothing, so this one runs on its own.
   * Otherwise the request_id is looked for only where it decides the answer: when a gate
   * refuses (or anything fails), and when the insert finds it taken. The answer is the
   * same as a lookup first, and a create saves the round trip.
   */
  private async answer(
    req: CreateOperationRequest,
    actor: Actor,
    agentId: string,
    first?: Promise<Created>,
  ): Promise<Created> {
    const { db } = this.deps;
    const known = await first?.then(
      (r) => r.record,
      () => undefined,
    );
    const replay = replayedRequest(req, actor, agentId);
    if (known) return { record: replayOf(actor, known, replay), created: false };
    try {
      const record = await this.execute(req, actor, agentId);
      if (record) return { record, created: true };
    } catch (err) {
      const taken = await findByRequestId(db.em(), req.requestId).catch(() => undefined);
      if (taken) return { record: replayOf(actor, taken, replay), created: false };
      throw err;
    }
    // The request_id is taken (a replay, or a concurrent repeat in another replica won the insert): answer with its row.
    return { record: replayOf(actor, (await findByRequestId(db.em(), req.requestId))!, replay), created: false };
  }

  /** A create's gates, then its writes: the new row, or undefined when the insert found its request_id taken. */
  private async execute(
    req: CreateOperationRequest,
    actor: Actor,
    agentId: string,
  ): Promise<OperationRecord | undefined> {
    // Fleet's view first, outside the transaction: no transaction waits on another service.
    const context = await this.context(req, agentId);
    // The SIM's pending debit ends after the commit (or the rollback), when the table shows it.
    let debit: PendingDebit | undefined;
    const result = await this.deps.db
      .tx(async (tx) => {
        const selected = await this.select(tx, req, actor, agentId, context);
        debit = selected.debit;
        return this.insert(tx, newOperation(req, agentId, selected), actor, selected);
      })
      .finally(() => debit?.end())
      .catch((err: unknown) => {
        if (isUniqueViolation(err, "operations_one_retry")) {
          throw refusal("retry_not_allowed", `Operation ${req.parentOperationId} already has a retry`, {
            parent_operation_id: req.parentOperationId,
            has_retry: true,
          });
        }
        throw err;
      });
    if (!result) return undefined;
    this.deps.idle.forget(result.device_id);
    this.deps.published();
    return result;
  }

  /** Fleet's view (breaker, agent, grant, candidate SIMs) for this create, shared by concurrent ones. */
  private context(req: CreateOperationRequest, agentId: string): Promise<DispatchContext> {
    const opType = (req.typeOp || DEFAULT_OP_TYPE) as OpType;
    const simId = req.simId || null;
    const query = {
      caller: req.caller as Caller | undefined,
      agentId,
      // A named SIM comes back whatever its operator, so a mismatch is named as such.
      operator: simId ? "" : req.operator,
      opType,
      simId,
    };
    return this.contexts.run(`${agentId} ${query.operator} ${opType} ${simId ?? ""}`, () =>
      this.deps.fleet.dispatchContext(query),
    );
  }

  /**
   * Inside the create's transaction: the parent, the SIMs' loads, every gate in admission,
   * and the SIM it selects, counted as pending at once.
   */
  private async select(
    em: EntityManager,
    req: CreateOperationRequest,
    actor: Actor,
    agentId: string,
    context: DispatchContext,
  ): Promise<Selected> {
    const { config } = this.deps;
    const opType = (req.typeOp || DEFAULT_OP_TYPE) as OpType;
    const simId = req.simId || null;
    // Locked: a proof contradicting it (flows/proof.ts) either comes first and this create sees
    // it, or comes after this create's commit and finds this retry to withdraw.
    const parent = req.parentOperationId ? ((await lockOperation(em, req.parentOperationId)) ?? null) : null;
    const agent: OwningAgent = {
      agent_id: agentId,
      role: actor.kind === "session" && actor.role ? actor.role : roleOf(context.agent.role),
      grant: context.grant,
      exists: context.agent.exists,
      is_active: context.agent.is_active,
    };
    const now = this.deps.now();
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
          parent: parent && {
            operation_id: parent.operation_id,
            status: parent.status,
            has_retry: parent.has_retry,
            agent_id: parent.agent_id,
            facts: parent,
          },
        },
        {
          circuit_breaker_active: context.breaker_active,
          candidates: await candidatesOf(em, context.sims, config, this.pending),
          now,
          staleness_ms: config.balanceStalenessMs,
        },
      ),
    );
    const sim = context.sims.find((s) => s.sim_id === admission.sim.sim_id)!;
    // Right after selection, with no wait in between: the next create already sees it.
    const debit = this.pending.add(sim.sim_id, isDebiting(opType) ? Number(req.montant) : 0);
    return { admission, sim, debit, now };
  }

  /**
   * The row and its events, in the create's transaction, the SIM's balance checked again
   * inside it; undefined when the insert found the request_id taken.
   */
  private async insert(
    tx: EntityManager,
    op: NewOperation,
    actor: Actor,
    { admission, now }: Selected,
  ): Promise<OperationRecord | undefined> {
    const { config } = this.deps;
    const events = changeEvents(freshRecord(op), {
      trigger: "create",
      previous_status: "",
      actor_agent_id: actor.kind === "session" ? actor.agent_id : null,
      at: now,
    }).map(outboxRow);
    const created = await insertQueuedOperation(tx, op, events);
    if (!created) return undefined;
    // The SIM's lock is taken last, after the insert, so it is held only until commit; a
    // create the balance no longer covers rolls back with insufficient_balance.
    const short = await reserveBalance(
      tx,
      admission.sim,
      {
        operator: op.operator,
        op_type: op.op_type,
        amount: op.montant,
        now,
      },
      config,
      { inserted: true },
    );
    if (short) throw short;
    return created.record;
  }
}

/** The new queued row: the request's fields, what admission decided, the selected SIM and its handset. */
function newOperation(req: CreateOperationRequest, agentId: string, { admission, sim, now }: Selected): NewOperation {
  const opType = (req.typeOp || DEFAULT_OP_TYPE) as OpType;
  return {
    operation_id: randomUUID(),
    request_id: req.requestId,
    parent_operation_id: req.parentOperationId ?? null,
    status: admission.status,
    origin: admission.origin,
    op_type: opType,
    agent_id: agentId,
    operator: req.operator as Operator,
    montant: Number(req.montant),
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
}

/**
 * A replayed request_id answers with the first execution, but only to a caller who may
 * read that operation (request_ids are unique across the fleet, and another agent's
 * reuse learns only that the value is taken), and only when it is the same request
 * (domain/idempotency.ts; docs/decisions/dispatch.md).
 */
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
    op_type: req.typeOp || DEFAULT_OP_TYPE,
    montant: Number(req.montant),
    msisdn: req.clientMsisdn,
    sim_id: req.simId || null,
    // Normalised as the row stores them (operationRow), so that a replay of the same body compares equal.
    partner_verified: isAccountQuery((req.typeOp || DEFAULT_OP_TYPE) as OpType) ? false : (req.partnerVerified ?? true),
    dest_name: req.clientNom || null,
    contact_id: req.contactId ?? null,
    parent_operation_id: req.parentOperationId ?? null,
  };
}
