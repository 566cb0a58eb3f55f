import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  afterFailure,
  backoffMs,
  delivered,
  isDeliverableUrl,
  signature,
  webhookBody,
  type RetryPolicy,
} from "./webhooks.ts";

const policy: RetryPolicy = { baseDelayMs: 10_000, maxDelayMs: 3_600_000, giveUpAfterMs: 24 * 3_600_000 };

describe("signature", () => {
  it("is sha256= and the hex HMAC-SHA256 of timestamp.body under the secret", () => {
    const body = webhookBody("alert.raised", "e1", new Date("2026-01-01T00:00:00Z"), { kind: "x" });
    const expected = createHmac("sha256", "s3cret").update(`1767225600.${body}`).digest("hex");
    expect(signature("s3cret", 1767225600, body)).toBe(`sha256=${expected}`);
    expect(signature("other", 1767225600, body)).not.toBe(`sha256=${expected}`);
    expect(signature("s3cret", 1767225601, body)).not.toBe(`sha256=${expected}`);
  });
});

describe("backoff", () => {
  it.each([
    [1, 10_000],
    [2, 20_000],
    [3, 40_000],
    [9, 2_560_000],
    [10, 3_600_000],
    [40, 3_600_000],
  ])("after %i failed attempts waits %i ms", (n, ms) => expect(backoffMs(n, policy)).toBe(ms));

  it("gives up once the next attempt would fall past the retry period", () => {
    const created = new Date("2026-01-01T00:00:00Z");
    const at = (ms: number) => new Date(created.getTime() + ms);
    expect(afterFailure(created, 1, at(0), policy)).toEqual({ giveUp: false, nextAt: at(10_000) });
    expect(afterFailure(created, 12, at(23 * 3_600_000), policy)).toEqual({
      giveUp: false,
      nextAt: at(24 * 3_600_000),
    });
    expect(afterFailure(created, 12, at(23 * 3_600_000 + 1), policy)).toEqual({ giveUp: true });
  });
});

describe("delivered and URLs", () => {
  it.each([
    [200, true],
    [204, true],
    [299, true],
    [301, false],
    [404, false],
    [500, false],
    [undefined, false],
  ])("HTTP %j is delivered: %s", (status, expected) => expect(delivered(status)).toBe(expected));

  it.each([
    ["https://hooks.example.com/x", true],
    ["http://127.0.0.1:8080/x", true],
    ["ftp://example.com", false],
    ["/relative", false],
    ["https://user:pw@example.com", false],
    ["not a url", false],
  ])("%s is deliverable: %s", (url, expected) => expect(isDeliverableUrl(url)).toBe(expected));
});
