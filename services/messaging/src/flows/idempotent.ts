import { fromBinary, toBinary, toJson, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { DomainError, type EntityManager, type ErrorStatus } from "@transferops/kit";
import { KEY_PATTERN, requestHash } from "../domain/idempotency.ts";
import { refusal } from "../domain/reasons.ts";
import { claimKey, storeOutcome } from "../store/idempotency.ts";
import type { MessagingDeps } from "./ports.ts";

type Replayable = { replayed: boolean };

/**
 * Runs a create once per Idempotency-Key. The first outcome (the response, or the
 * refusal) is stored with the request's hash in the transaction that made it; a repeat
 * with the same hash gets it back (`replayed`), another request with the key is refused.
 * Without a key, the create just runs in a transaction.
 */
export async function idempotent<Req extends DescMessage, Res extends DescMessage>(
  deps: MessagingDeps,
  call: { operation: string; key: string; requestSchema: Req; request: MessageShape<Req>; responseSchema: Res },
  run: (em: EntityManager) => Promise<MessageShape<Res>>,
): Promise<MessageShape<Res>> {
  if (!call.key) return deps.db.tx(run);
  if (!KEY_PATTERN.test(call.key)) {
    throw refusal("invalid_request", "Idempotency-Key is 1 to 255 printable ASCII characters", {
      field: "Idempotency-Key",
    });
  }
  const json = toJson(call.requestSchema, call.request, { alwaysEmitImplicit: false }) as Record<string, unknown>;
  delete json.caller;
  delete json.idempotencyKey;
  const hash = requestHash(call.operation, json);
  const outcome = await deps.db.tx(async (em) => {
    const first = await claimKey(em, call.key, call.operation, hash, deps.config.idempotencyRetentionH);
    if (first) {
      if (first.request_hash !== hash || first.operation !== call.operation) {
        return {
          error: refusal("idempotency_key_reused", "This Idempotency-Key was used with another request", {
            idempotency_key: call.key,
          }),
        };
      }
      if (first.error) {
        const e = first.error;
        return { error: new DomainError(e.status as ErrorStatus, e.detail, { reason: e.reason, context: e.context }) };
      }
      const replay = fromBinary(call.responseSchema, first.response!) as MessageShape<Res> & Replayable;
      replay.replayed = true;
      return { response: replay };
    }
    try {
      const response = await em.transactional((inner) => run(inner as EntityManager));
      await storeOutcome(em, call.key, { response: toBinary(call.responseSchema, response) });
      return { response };
    } catch (err) {
      if (!(err instanceof DomainError)) throw err;
      const { reason, ...context } = err.context;
      await storeOutcome(em, call.key, {
        error: { status: err.status, detail: err.detail, reason: reason as string | undefined, context },
      });
      return { error: err };
    }
  });
  if ("error" in outcome) throw outcome.error;
  return outcome.response;
}
