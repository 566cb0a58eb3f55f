// Launch: the three double-launch protections of the contract.
//
//   (1) claim: a conditional update `state = 'pending'` -> `launched`, committed before
//       dispatch is called, so a second caller finds nothing to claim;
//   (2) the operation's request_id is `tx-<transaction_id>`, unique at dispatch, so a
//       second creation returns the first operation (created = false);
//   (3) a unique partial index on `operation_id`: one operation backs one transaction.
//
// A refusal by dispatch that proves no operation exists (422, 423, 403) releases the
// claim; anything else (a 409, a timeout, a crash) keeps it, and a retried launch or the
// sweep completes it once the claim is stale, with the same request_id, so the
// operation created before the crash (if any) is the one recorded.

import { randomUUID } from "node:crypto";
import { check, domainErrorFromConnect, type DomainError } from "@transferops/kit";
import {
  checkBoardActor,
  launchPartnerVerified,
  launchRefusal,
  operationRequestId,
  refusal,
  type Actor,
} from "../domain/index.ts";
import { publishTransactionChange } from "../events/transactions.ts";
import { findTransaction, updateWhere, type TransactionRecord } from "../store/transactions.ts";
import type { IntakeDeps } from "./ports.ts";
import { visibleTransaction } from "./transactions.ts";

/** Refusals of dispatch after which no operation exists: the claim is released. */
const RELEASING: readonly DomainError["status"][] = ["invalid", "refused", "locked", "forbidden"];

const alreadyLaunched = (t: TransactionRecord) =>
  refusal("already_launched", `Transaction ${t.id} is already launched`, {
    transaction_id: t.id,
    state: "launched",
    operation_id: t.operation_id,
  });

function notLaunchable(t: TransactionRecord): DomainError {
  if (t.state === "launched") return alreadyLaunched(t);
  return refusal("transaction_not_pending", `Transaction ${t.id} is ${t.state}, not pending`, {
    transaction_id: t.id,
    state: t.state,
  });
}

export class Launcher {
  /** Test switches: how many fresh launches still "crash" after the claim, after the creation. */
  private crashesAfterClaim: number;
  private crashesAfterCreate: number;

  constructor(private readonly deps: IntakeDeps) {
    this.crashesAfterClaim = deps.config.crashAfterClaim;
    this.crashesAfterCreate = deps.config.crashAfterCreate;
  }

  private get disabled() {
    return this.deps.config.disabledProtection;
  }

  private isStale(t: TransactionRecord): boolean {
    return (
      t.state === "launched" &&
      t.operation_id === null &&
      t.launched_at !== null &&
      Date.now() - new Date(t.launched_at).getTime() > this.deps.config.claimStaleMs
    );
  }

  /** The board's launch: claim, create the operation, record it. */
  async launch(actor: Actor, id: string): Promise<TransactionRecord> {
    check(checkBoardActor(actor));
    const claim = await this.deps.db.tx(async (em) => {
      const t = await visibleTransaction(em, actor, id);
      if (this.isStale(t)) return { stale: true as const, t };
      const claimable = t.state === "pending" || (this.disabled === "claim" && t.state === "launched");
      if (!claimable) throw notLaunchable(t);
      if (!t.payment_confirmed_at) {
        throw refusal("payment_not_confirmed", `Confirm the payment of transaction ${t.id} before launching it`, {
          transaction_id: t.id,
        });
      }
      const where =
        this.disabled === "claim"
          ? "state in ('pending', 'launched')"
          : "state = 'pending' and payment_confirmed_at is not null";
      const values = {
        state: "launched",
        launched_by: actor.agent_id,
        launched_by_name: actor.full_name,
        launched_at: new Date(),
      };
      const after = await updateWhere(em, "board", id, values, where);
      if (!after) throw notLaunchable((await findTransaction(em, id))!);
      await publishTransactionChange(em, after, {
        trigger: "launch",
        previousState: t.state,
        actorAgentId: actor.agent_id,
      });
      return { stale: false as const, t: after };
    });
    this.deps.published();
    if (claim.stale) {
      const completed = await this.complete(id);
      if (!completed) throw alreadyLaunched(claim.t);
      return completed;
    }
    if (this.crashesAfterClaim > 0) {
      // Test switch: the process "dies" here, with the claim committed and no operation.
      this.crashesAfterClaim -= 1;
      throw new Error("test switch: crash after the claim");
    }
    return this.createAndRecord(claim.t, true);
  }

  /**
   * Completes a stale claim (a launch that crashed): takes the claim over by a
   * conditional update of launched_at, so two completers never run at once, then
   * creates with the same request_id. Undefined when there is nothing to complete.
   */
  async complete(id: string): Promise<TransactionRecord | undefined> {
    const taken = await this.deps.db.tx((em) =>
      updateWhere(
        em,
        "board",
        id,
        { launched_at: new Date() },
        "state = 'launched' and operation_id is null and launched_at < ?",
        [new Date(Date.now() - this.deps.config.claimStaleMs)],
      ),
    );
    if (!taken) return undefined;
    this.deps.log.info({ transaction_id: id }, "completing a launch claimed without an operation");
    return this.createAndRecord(taken, false);
  }

  private async createAndRecord(t: TransactionRecord, fresh: boolean): Promise<TransactionRecord> {
    const requestId =
      this.disabled === "request_id" ? `${operationRequestId(t.id)}-${randomUUID()}` : operationRequestId(t.id);
    let res: { operationId: string; created: boolean };
    try {
      res = await this.deps.ports.createOperation({
        requestId,
        agentId: t.launched_by!,
        operator: t.operator,
        clientMsisdn: t.receiver_phone,
        clientNom: t.receiver_name,
        montant: BigInt(t.received_amount_xaf),
        contactId: t.contact_id,
        // The partner's word holds for its receiver only (domain/receiver.ts).
        partnerVerified: launchPartnerVerified(t),
      });
    } catch (err) {
      const passed = domainErrorFromConnect(err);
      const refused = passed && launchRefusal(passed);
      if (refused && RELEASING.includes(refused.status)) await this.release(t);
      throw refused ?? err;
    }
    if (fresh && this.crashesAfterCreate > 0) {
      // Test switch: the process "dies" here, the operation created but not recorded.
      this.crashesAfterCreate -= 1;
      throw new Error("test switch: crash after the operation's creation");
    }
    const recorded = await this.record(t, res.operationId);
    // Another launch created this operation (protection 2 answered): this one is refused.
    if (fresh && !res.created) throw alreadyLaunched(recorded);
    return recorded;
  }

  /** Records the operation on the claimed transaction (protection 3 holds it unique). */
  private async record(t: TransactionRecord, operationId: string): Promise<TransactionRecord> {
    const after = await this.deps.db.tx(async (em) => {
      const linked = await updateWhere(
        em,
        "board",
        t.id,
        { operation_id: operationId },
        "state = 'launched' and operation_id is null",
      );
      if (!linked) return (await findTransaction(em, t.id))!;
      await publishTransactionChange(em, linked, { trigger: "operation_linked", previousState: "launched" });
      return linked;
    });
    this.deps.published();
    return after;
  }

  /** Gives the claim back (the transfer never reached the operator): pending again. */
  private async release(t: TransactionRecord): Promise<void> {
    await this.deps.db.tx(async (em) => {
      const after = await updateWhere(
        em,
        "board",
        t.id,
        { state: "pending", launched_by: null, launched_by_name: null, launched_at: null },
        "state = 'launched' and operation_id is null and launched_at = ?",
        [t.launched_at],
      );
      if (after) await publishTransactionChange(em, after, { trigger: "launch_released", previousState: "launched" });
    });
    this.deps.published();
  }
}
