import { callerGuards, type Caller } from "@transferops/kit";
import { refusal } from "../domain/reasons.ts";

const guards = callerGuards(refusal, {
  kind: { messaging_key: ["caller_not_allowed", "The messaging routes take a messaging API key"] },
});

/** Every messaging route is for messaging API keys only. */
export function requireMessagingKey(caller: Caller | undefined): void {
  guards.requireKind(caller, "messaging_key");
}
