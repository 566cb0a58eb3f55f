import type { Caller } from "@transferops/kit";
import { refusal } from "../domain/reasons.ts";

/** Every messaging route is for messaging API keys only. */
export function requireMessagingKey(caller: Caller | undefined): void {
  if (caller?.kind !== "messaging_key") {
    throw refusal("caller_not_allowed", "The messaging routes take a messaging API key");
  }
}
