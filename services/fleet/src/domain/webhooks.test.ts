import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { allowList, FORBIDDEN_ADDRESS, urlProblem, type EgressPolicy } from "./egress.ts";
import { afterFailure, backoffMs, delivered, signature, webhookBody, type RetryPolicy } from "./webhooks.ts";

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

  const strict: EgressPolicy = { allowHttp: false, allowed: allowList("") };
  const local: EgressPolicy = { allowHttp: true, allowed: allowList("127.0.0.1,10.1.0.0/16") };
  it.each([
    ["https://hooks.example.com/x", strict, undefined],
    ["http://hooks.example.com/x", strict, "must be an https URL"],
    ["http://hooks.example.com/x", local, undefined],
    ["ftp://example.com", local, "must be an http(s) URL"],
    ["/relative", strict, "must be an absolute https URL without credentials"],
    ["https://user:pw@example.com", strict, "must be an absolute https URL without credentials"],
    ["https://127.0.0.1/x", strict, FORBIDDEN_ADDRESS],
    ["https://127.0.0.1/x", local, undefined],
    ["https://127.0.0.2/x", local, FORBIDDEN_ADDRESS],
    ["https://[::1]/x", strict, FORBIDDEN_ADDRESS],
    ["https://[::ffff:127.0.0.1]/x", strict, FORBIDDEN_ADDRESS],
    ["https://169.254.169.254/latest/meta-data", strict, FORBIDDEN_ADDRESS],
    ["https://[fd00:ec2::254]/", strict, FORBIDDEN_ADDRESS],
    ["https://100.100.100.200/", strict, FORBIDDEN_ADDRESS],
    ["https://10.0.0.5/", strict, FORBIDDEN_ADDRESS],
    ["https://10.1.2.3/", local, undefined],
    ["https://172.20.0.1/", strict, FORBIDDEN_ADDRESS],
    ["https://192.168.1.1/", strict, FORBIDDEN_ADDRESS],
    ["https://224.0.0.1/", strict, FORBIDDEN_ADDRESS],
    ["https://[fe80::1]/", strict, FORBIDDEN_ADDRESS],
    ["https://[ff02::1]/", strict, FORBIDDEN_ADDRESS],
    ["https://0.0.0.0/", strict, FORBIDDEN_ADDRESS],
    ["https://2130706433/", strict, FORBIDDEN_ADDRESS], // 127.0.0.1 as one number: URL normalizes it
    ["https://8.8.8.8/", strict, undefined],
    ["https://[2606:4700::1111]/", strict, undefined],
  ])("%s: %s", (url, policy, problem) => expect(urlProblem(url, policy)).toBe(problem));
});
