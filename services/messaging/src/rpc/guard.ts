import type { Caller } from "@transferops/kit";
import { refusal } from "../domain/reasons.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const isUuid = (v: string) => UUID.test(v);

/** Every messaging route is for messaging API keys only. */
export function requireMessagingKey(caller: Caller | undefined): void {
  if (caller?.kind !== "messaging_key") {
    throw refusal("caller_not_allowed", "The messaging routes take a messaging API key");
  }
}
