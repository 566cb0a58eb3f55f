// What a device poll gets before any operation is looked at. The contract: 409
// while the device has a running operation (one running operation per device),
// 204 inside the cooldown after a finished one, otherwise the oldest queued
// operation assigned to it is claimed (transition `claim`).

import { fail, ok, type Result } from "./errors.ts";
import { refusal } from "./reasons.ts";
import { isInCooldown } from "./windows.ts";

export interface PollingDevice {
  readonly device_id: string;
  readonly has_running_operation: boolean;
  /** When its latest operation finished (outcome reported or cancelled); null when none has. */
  readonly last_finished_at: Date | null;
}

/** `claim`: look for a queued operation. `cooldown`: answer 204 without looking. */
export type PollDecision = "claim" | "cooldown";

export function decidePoll(device: PollingDevice, now: Date, cooldownS: number): Result<PollDecision> {
  if (device.has_running_operation) {
    return fail(
      refusal("device_busy", `Device ${device.device_id} already has a running operation`, {
        device_id: device.device_id,
      }),
    );
  }
  return ok(isInCooldown(device.last_finished_at, now, cooldownS) ? "cooldown" : "claim");
}
