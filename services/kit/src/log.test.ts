import { describe, expect, it } from "vitest";
import { createLogger, redact, REDACTED } from "./log.ts";

describe("log redaction", () => {
  it("removes PINs, tokens, passwords and USSD steps at any depth", () => {
    const lines: string[] = [];
    const log = createLogger("t", { destination: { write: (s: string) => void lines.push(s) } });
    log.info(
      {
        pin: "1234",
        request: { body: { password: "hunter2", ussd_steps: ["*126#", "9876"], nested: [{ token: "tos_abc" }] } },
        headers: { authorization: "Bearer tod_secret", "x-api-key": "key-1" },
        ussd_string: "*126*1*677000000*5000*9876#",
        sim_id: "kept",
      },
      "payload",
    );
    const text = lines.join("");
    for (const secret of ["1234", "hunter2", "9876", "tos_abc", "tod_secret", "key-1"])
      expect(text).not.toContain(secret);
    expect(text).toContain("kept");
    expect(JSON.parse(text).request.body.password).toBe(REDACTED);
  });

  it("keeps ordinary values untouched", () => {
    expect(redact({ amount: 5000, msisdn: "677000000", list: [1, 2] })).toEqual({
      amount: 5000,
      msisdn: "677000000",
      list: [1, 2],
    });
  });
});
