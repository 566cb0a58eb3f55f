import http from "node:http";
import https from "node:https";
import { lookup as dnsLookup, promises as dns, type LookupAddress } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { addressAllowed, FORBIDDEN_ADDRESS, hostOf, urlProblem, type EgressPolicy } from "../domain/egress.ts";

// Fleet's outbound HTTP (webhooks) under the egress policy (domain/egress.ts). A name is
// resolved once per connection by the lookup below, which refuses the connection when any
// address it resolves to may not be reached, and hands the socket the very addresses it
// checked: no second resolution happens between the check and the connection (no DNS
// rebinding). Redirects are never followed.

/** What an outbound call came to: the target's HTTP status, or only that it was refused or timed out. */
export type EgressOutcome = { status: number } | { failure: "refused" | "timeout" };

/**
 * At registration: the URL's problem, if any, including a name that resolves to an address
 * that may not be reached. A name that does not resolve now is accepted (each delivery checks
 * again, and a name that never resolves is never delivered to).
 */
export async function registrationProblem(url: string, policy: EgressPolicy): Promise<string | undefined> {
  const problem = urlProblem(url, policy);
  if (problem) return problem;
  const host = hostOf(new URL(url));
  if (isIP(host)) return undefined;
  let addresses: LookupAddress[];
  try {
    addresses = await dns.lookup(host, { all: true });
  } catch {
    return undefined;
  }
  return addresses.every((a) => addressAllowed(a.address, policy)) ? undefined : FORBIDDEN_ADDRESS;
}

class Refused extends Error {}

/** A dns.lookup that answers only addresses the policy allows, and refuses the name otherwise. */
function checkedLookup(policy: EgressPolicy): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { family: options.family, hints: options.hints, all: true }, (err, addresses) => {
      if (err) return callback(err, "", 4);
      const list = addresses as LookupAddress[];
      if (list.length === 0 || !list.every((a) => addressAllowed(a.address, policy))) {
        return callback(new Refused(FORBIDDEN_ADDRESS), "", 4);
      }
      if (options.all) return (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, list);
      callback(null, list[0].address, list[0].family);
    });
  };
}

/** POSTs `body` to `url` under the policy: the status, or "refused" / "timeout" and nothing more. */
export function postUnderPolicy(
  url: string,
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  policy: EgressPolicy,
): Promise<EgressOutcome> {
  if (urlProblem(url, policy)) return Promise.resolve({ failure: "refused" });
  const u = new URL(url);
  const client = u.protocol === "https:" ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const settle = (o: EgressOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const req = client.request(
      u,
      {
        method: "POST",
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
        // A connection of its own: never one opened to another (unchecked) address.
        agent: false,
        lookup: checkedLookup(policy),
      },
      (res) => {
        // The answer's body is not read beyond draining it; only its status is kept.
        res.resume();
        res.on("error", () => undefined);
        settle({ status: res.statusCode ?? 0 });
        res.on("end", () => req.destroy());
      },
    );
    const timer = setTimeout(() => {
      settle({ failure: "timeout" });
      req.destroy();
    }, timeoutMs);
    req.on("error", () => settle({ failure: "refused" }));
    req.end(body);
  });
}
