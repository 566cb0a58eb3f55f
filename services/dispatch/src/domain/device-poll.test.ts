import { describe, expect, it } from "vitest";
import { decidePoll } from "./device-poll.ts";

const NOW = new Date("2026-11-22T12:00:00Z");
const secondsAgo = (s: number) => new Date(NOW.getTime() - s * 1000);

describe("decidePoll", () => {
  it.each<[string, boolean, Date | null, string | [string, string]]>([
    ["claims for a device that never finished an operation", false, null, "claim"],
    ["claims once the cooldown has passed", false, secondsAgo(30), "claim"],
    ["answers cooldown inside the cooldown", false, secondsAgo(29), "cooldown"],
    [
      "refuses a device that already runs an operation",
      true,
      null,
      ["device_busy", "Device d1 already has a running operation"],
    ],
  ])("%s", (_rule, running, lastFinished, expected) => {
    const result = decidePoll(
      { device_id: "d1", has_running_operation: running, last_finished_at: lastFinished },
      NOW,
      30,
    );
    expect(result.ok ? result.value : [result.error.reason, result.error.message]).toEqual(expected);
  });
});
