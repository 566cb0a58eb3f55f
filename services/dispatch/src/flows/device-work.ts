import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { type EntityManager } from "@transferops/kit";
import { DeviceDispatchSchema, type DeviceDispatch } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_pb";
import {
  belongsToDevice,
  buildUssdSteps,
  classifyOutcomeReport,
  decidePoll,
  dialledAfterCancel,
  DomainError,
  evidenceExpiresAt,
  expectedSenderFor,
  failureReasonFor,
  refusal,
  transition,
  type Actor,
  type DeviceOutcome,
  unwrap,
} from "../domain/index.ts";
import { raiseAlert } from "../events/alerts.ts";
import { changeEvents } from "../events/operations.ts";
import { holdQueued, rerouteQueued } from "../store/fleet-changes.ts";
import { announceDeviceWork } from "../store/idle-devices.ts";
import { lockSim, updateOperation, type OperationRecord } from "../store/operations.ts";
import {
  deviceQueueState,
  listClaimedByDevice,
  lockReported,
  markRunning,
  pollDevice,
  type DeviceQueueState,
} from "../store/queue.ts";
import type { DispatchDeps } from "./ports.ts";
import { move, notFound } from "./transitions.ts";

// A handset's work: the poll that claims its next operation (the PIN revealed by fleet for
// the payload only), the outcome it reports, the operations it ran.

type Claim = { kind: "moved" } | { kind: "dispatch"; dispatch: DeviceDispatch } | { kind: "fault"; error: DomainError };

/**
 * Builds the payload of a claimed operation. The PIN exists only in the returned
 * message: it is never stored (the row keeps the masked ussd_string), logged, or put
 * in an event or error (buildUssdSteps leaves values out of its refusals).
 */
async function buildDispatch(
  deps: DispatchDeps,
  op: OperationRecord,
  device: { id: string; tokenVersion: string },
): Promise<
  | { steps: ReturnType<typeof buildUssdSteps> }
  | { moved: { device_id: string | null; slot: number | null } }
  | DomainError
> {
  if (op.sim_id === null) {
    return refusal("ussd_steps_unavailable", `Operation ${op.operation_id} has no SIM any more`, {
      operation_id: op.operation_id,
    });
  }
  const revealed = await deps.fleet.revealPin(op.sim_id, op.operation_id, device).catch((err: unknown) => {
    if (err instanceof ConnectError && err.code === Code.NotFound) return null;
    throw err;
  });
  if (revealed !== null && "moved" in revealed) return revealed;
  const pin = revealed?.pin ?? null;
  if (pin === null) {
    return refusal("ussd_steps_unavailable", `SIM ${op.sim_id} of operation ${op.operation_id} has no PIN`, {
      operation_id: op.operation_id,
      sim_id: op.sim_id,
    });
  }
  try {
    const steps = buildUssdSteps(
      op.operator,
      op.op_type,
      { amount: op.montant, msisdn: op.msisdn_dest, pin, merchant_code: op.merchant_code },
      { menus: deps.menus, require_verified: deps.config.ussdRequireVerified },
    );
    return { steps };
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
}

async function claim(
  deps: DispatchDeps,
  em: EntityManager,
  actor: Actor,
  tokenVersion: string,
  op: OperationRecord,
  now: Date,
): Promise<Claim> {
  const built = await buildDispatch(deps, op, { id: actor.device_id!, tokenVersion });
  if ("moved" in built) {
    // The SIM left this handset after the operation was queued on it (a create that read
    // fleet before an unassignment or a move committed): the work follows the SIM, and the
    // poll goes on to the device's next operation.
    const to = built.moved.device_id;
    if (to === null) await holdQueued(em, op.sim_id!);
    else if ((await rerouteQueued(em, op.sim_id!, to, built.moved.slot)) > 0) {
      await announceDeviceWork(em, to);
      deps.idle.forget(to);
    }
    return { kind: "moved" };
  }
  if (built instanceof DomainError) {
    // Never reached the operator: it fails, so the next poll moves on to other work.
    await move(
      em,
      op,
      { type: "dispatch_fault" },
      { failure_reason: "ussd_steps_unavailable", finished_at: now },
      { trigger: "dispatch_fault", failure_reason: "ussd_steps_unavailable", at: now },
    );
    return { kind: "fault", error: built };
  }
  unwrap(transition(op, { type: "claim" }));
  const marked = await markRunning(em, op, built.steps.redacted_ussd_string, now, (claimed) =>
    changeEvents(claimed, { trigger: "claim", previous_status: "queued", at: now }),
  );
  if ("busy" in marked) throw busy(actor);
  return {
    kind: "dispatch",
    dispatch: create(DeviceDispatchSchema, {
      operationId: op.operation_id,
      simId: op.sim_id!,
      subscriptionSlot: op.subscription_slot ?? 0,
      ussdString: built.steps.ussd_string,
      ussdSteps: built.steps.steps,
      expectedSender: expectedSenderFor(op.operator, deps.menus),
      timeoutSeconds: deps.config.ussdTimeoutS,
      montant: BigInt(op.montant),
      opType: op.op_type,
      partnerVerified: op.partner_verified,
      destName: op.dest_name ?? undefined,
      msisdnDest: op.msisdn_dest,
      operator: op.operator,
    }),
  };
}

/** Whether a device in this state may claim its next queued operation now (409 when it runs one). */
function mayClaim(deps: DispatchDeps, deviceId: string, state: DeviceQueueState, now: Date): boolean {
  const decision = unwrap(
    decidePoll(
      { device_id: deviceId, has_running_operation: state.has_running, last_finished_at: state.last_finished_at },
      now,
      deps.config.deviceCooldownS,
    ),
  );
  return decision !== "cooldown" && state.has_queued && !state.frozen;
}

/** What a poll gets: idle (nothing to do), nothing now (cooldown, frozen, running), or its next operation. */
export type PollAnswer = { idle: true } | { dispatch?: DeviceDispatch };

/**
 * A handset's poll. Most polls: a handset known to have nothing to do, answered without the
 * database; otherwise one plain read, and the claim in one transaction.
 */
export async function nextOperation(deps: DispatchDeps, actor: Actor, tokenVersion: string): Promise<PollAnswer> {
  const deviceId = actor.device_id!;
  // Most polls: a handset known to have nothing to do, answered without the database.
  const wallMs = Date.now();
  if (deps.idle.isIdle(deviceId, wallMs)) return { idle: true };
  const now = deps.now();
  // Otherwise, unless work was announced for it, one plain read first: an idle device
  // stops there (no transaction, no lock, nothing written), and so does a poll in its
  // cooldown or of a frozen handset.
  const mark = deps.idle.mark();
  if (!deps.idle.expectsWork(deviceId)) {
    const state = await deviceQueueState(deps.db.em(), deviceId);
    if (!state.has_queued) deps.idle.queueEmpty(deviceId);
    if (!state.has_queued && !state.has_running) {
      deps.idle.remember(deviceId, mark, wallMs);
      return { idle: true };
    }
    if (!mayClaim(deps, deviceId, state, now)) return {};
  }
  // The claim: one transaction whose first statement reads the state again and locks
  // the oldest queued operation (a poll that expected work and finds none writes nothing).
  const claimed = await deps.db.tx(async (em): Promise<Exclude<Claim, { kind: "moved" }> | "idle" | "none"> => {
    // Each pass that finds the next operation's SIM gone moves that row off this device's
    // queue, so the loop ends.
    for (;;) {
      const { state, next } = await pollDevice(em, deviceId);
      if (!state.has_queued) deps.idle.queueEmpty(deviceId);
      if (!state.has_queued && !state.has_running) return "idle";
      if (!mayClaim(deps, deviceId, state, now) || !next) return "none";
      const c = await claim(deps, em, actor, tokenVersion, next, now);
      if (c.kind !== "moved") return c;
    }
  });
  if (claimed === "idle") {
    deps.idle.remember(deviceId, mark, wallMs);
    return { idle: true };
  }
  if (claimed === "none") return {};
  deps.published();
  if (claimed.kind === "fault") throw claimed.error;
  return { dispatch: claimed.dispatch };
}

export interface OutcomeReport {
  operationId: string;
  outcome: DeviceOutcome;
  ussdResponse?: string;
  failureDetail?: string;
  executedAt: Date | null;
}

/**
 * The outcome reached an operation that left running without the device (an SMS proved it,
 * an agent cancelled it, the running timeout gave up on the handset): keep the status, keep
 * what the handset saw for the people who look at it. Cancelled while its handset dialled,
 * then reported dialled: it may have gone through. Treated as dialled: its debit is held
 * (under the SIM's lock, as any change of what the SIM holds), a proof of it contradicts the
 * cancel (flows/proof.ts), an alert says so.
 */
async function recordLateOutcome(em: EntityManager, before: OperationRecord, r: OutcomeReport, now: Date) {
  const { outcome } = r;
  const dialled = before.status === "rejected" && dialledAfterCancel(outcome);
  if (dialled && before.sim_id) await lockSim(em, before.sim_id);
  const op = await updateOperation(em, before, {
    device_outcome: outcome,
    ussd_response: before.ussd_response ?? r.ussdResponse ?? null,
    executed_at: r.executedAt ?? now,
  });
  if (dialled) {
    await raiseAlert(em, {
      kind: "dialled_after_cancel",
      severity: "critical",
      message: `Operation ${op.operation_id} was cancelled (${op.reject_reason ?? "rejected"}) while device ${op.device_id} dialled it, and the device reported ${outcome}: the transfer may have gone through; its debit is held and its proof watched for`,
      sim_id: op.sim_id,
      device_id: op.device_id,
      operation_id: op.operation_id,
      context: {
        operation_id: op.operation_id,
        device_outcome: outcome,
        reject_reason: op.reject_reason,
        amount: op.montant,
        msisdn_dest: op.msisdn_dest,
      },
      dedupe_key: `dialled_after_cancel:${op.operation_id}`,
      raised_at: now,
    });
  }
  return { op, changed: dialled };
}

/** The running operation's outcome: its transition, and an alert for a SIM the handset found absent. */
async function finishWithOutcome(
  deps: DispatchDeps,
  em: EntityManager,
  before: OperationRecord,
  r: OutcomeReport,
  now: Date,
): Promise<OperationRecord> {
  const { outcome } = r;
  const failureReason = failureReasonFor(outcome, r.failureDetail, r.ussdResponse);
  const op = await move(
    em,
    before,
    { type: "outcome", outcome },
    {
      device_outcome: outcome,
      ussd_response: r.ussdResponse ?? null,
      executed_at: r.executedAt ?? now,
      finished_at: now,
      failure_reason: failureReason,
      evidence_expires_at:
        outcome === "ussd_ok" || outcome === "ussd_unconfirmed"
          ? evidenceExpiresAt(now, deps.config.evidenceWindowS)
          : null,
    },
    { trigger: "outcome", device_outcome: outcome, failure_reason: failureReason, at: now },
  );
  if (outcome === "sim_absent") {
    await raiseAlert(em, {
      kind: "sim_absent",
      severity: "critical",
      message: `SIM ${op.sim_id ?? "(deleted)"} reported absent by device ${op.device_id} during operation ${op.operation_id}`,
      sim_id: op.sim_id,
      device_id: op.device_id,
      operation_id: op.operation_id,
      context: { operation_id: op.operation_id, subscription_slot: op.subscription_slot },
      dedupe_key: `sim_absent:${op.sim_id}:${op.operation_id}`,
      raised_at: now,
    });
  }
  return op;
}

/**
 * A handset's report of an operation's outcome, under the operation's lock; a replay changes
 * nothing. Returns the operation and whether the device is left with nothing to do (it is
 * then remembered idle, and its next poll costs no transaction).
 */
export async function reportOutcome(
  deps: DispatchDeps,
  actor: Actor,
  r: OutcomeReport,
): Promise<{ op: OperationRecord; idle: boolean }> {
  const now = deps.now();
  const wallMs = Date.now();
  const mark = deps.idle.mark();
  const result = await deps.db.tx(async (em) => {
    const { before, other } = await lockReported(em, r.operationId, actor.device_id!);
    // Another device's operation is as unknown to this one as a missing id.
    if (!before || !belongsToDevice(actor, before)) throw notFound(r.operationId);
    const decision = unwrap(classifyOutcomeReport({ ...before, outcome: before.device_outcome }, r.outcome));
    if (decision === "replay") return { op: before, changed: false };
    if (decision === "record") return recordLateOutcome(em, before, r, now);
    const op = await finishWithOutcome(deps, em, before, r, now);
    // The handset polls next: its queue, read with the lock (`lockReported`), lets a
    // device left with nothing to do be remembered idle as a poll's read would (the same
    // mark: work announced since is not missed), so that poll costs no transaction.
    if (!other.has_queued) deps.idle.queueEmpty(actor.device_id!);
    return { op, changed: true, idle: !other.has_queued && !other.has_running };
  });
  const idle = "idle" in result && result.idle;
  if (idle) deps.idle.remember(actor.device_id!, mark, wallMs);
  if (result.changed) deps.published();
  return { op: result.op, idle };
}

/** The operations the device claimed since a time. */
export async function deviceOperations(
  deps: DispatchDeps,
  q: { device_id: string; since: Date | null; limit: number },
) {
  return listClaimedByDevice(deps.db.em(), q);
}

function busy(actor: Actor): DomainError {
  return refusal("device_busy", `Device ${actor.device_id} already has a running operation`, {
    device_id: actor.device_id,
  });
}
