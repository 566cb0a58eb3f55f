import { BlockList, isIP } from "node:net";

// Where fleet's outbound calls (webhooks) may go. A webhook URL is https (http only where the
// operator allows it), and neither its host nor any address its name resolves to is loopback,
// private, shared (CGNAT), link-local, multicast, reserved or a cloud metadata address, unless
// the operator listed it (WEBHOOK_ALLOWED_ADDRESSES). Checked at registration and again at
// each delivery against the address actually connected to (flows/egress.ts).

export interface EgressPolicy {
  /** http:// URLs are accepted (https only otherwise). */
  allowHttp: boolean;
  /** Addresses and ranges reachable even though inside (the operator's explicit list). */
  allowed: BlockList;
}

const FORBIDDEN_V4: [string, number][] = [
  ["0.0.0.0", 8], // "this" network
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // shared address space (CGNAT; Alibaba's metadata 100.100.100.200)
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local (AWS, GCP, Azure metadata 169.254.169.254)
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved and broadcast
];

const FORBIDDEN_V6: [string, number][] = [
  ["::", 128], // unspecified
  ["::1", 128], // loopback
  ["64:ff9b::", 96], // NAT64 (reaches IPv4 inside)
  ["100::", 64], // discard
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4 (embeds any IPv4)
  ["fc00::", 7], // unique local (AWS metadata fd00:ec2::254)
  ["fe80::", 10], // link-local
  ["ff00::", 8], // multicast
];

const forbidden = new BlockList();
for (const [net, prefix] of FORBIDDEN_V4) forbidden.addSubnet(net, prefix, "ipv4");
for (const [net, prefix] of FORBIDDEN_V6) forbidden.addSubnet(net, prefix, "ipv6");

/** An IPv4-mapped IPv6 address (::ffff:a.b.c.d) as the IPv4 address it reaches. */
function normalized(address: string): { address: string; family: "ipv4" | "ipv6" } | undefined {
  const bare = address.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(bare);
  if (mapped) return { address: mapped[1], family: "ipv4" };
  const v = isIP(bare);
  if (v === 4) return { address: bare, family: "ipv4" };
  if (v === 6) {
    // ::ffff:7f00:1 (the hex form of a mapped address)
    const hex = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(bare);
    if (hex) {
      const hi = parseInt(hex[1], 16);
      const lo = parseInt(hex[2], 16);
      return { address: `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, family: "ipv4" };
    }
    return { address: bare, family: "ipv6" };
  }
  return undefined;
}

/** Whether an outbound call may connect to this IP address. */
export function addressAllowed(address: string, policy: EgressPolicy): boolean {
  const n = normalized(address);
  if (!n) return false;
  if (policy.allowed.check(n.address, n.family)) return true;
  return !forbidden.check(n.address, n.family);
}

/** Parses the operator's allow-list (comma-separated addresses and CIDRs); throws on a bad entry. */
export function allowList(csv: string): BlockList {
  const list = new BlockList();
  for (const entry of csv
    .split(",")
    .map((e) => e.trim())
    .filter(Boolean)) {
    const [net, prefix] = entry.split("/");
    const n = normalized(net);
    if (!n) throw new Error(`${entry} is not an IP address or CIDR`);
    if (prefix === undefined) list.addAddress(n.address, n.family);
    else {
      const bits = Number(prefix);
      const max = n.family === "ipv4" ? 32 : 128;
      if (!Number.isInteger(bits) || bits < 0 || bits > max) throw new Error(`${entry} has a bad prefix length`);
      list.addSubnet(n.address, bits, n.family);
    }
  }
  return list;
}

/** The URL's host without IPv6 brackets. */
export const hostOf = (u: URL) => u.hostname.replace(/^\[|\]$/g, "");

/**
 * What is wrong with a webhook URL before any name is resolved: not absolute, not https (nor
 * allowed http), credentials in it, or an IP literal that may not be reached. Undefined when fine.
 */
export function urlProblem(url: string, policy: EgressPolicy): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return "must be an absolute https URL without credentials";
  }
  if (u.protocol !== "https:" && !(u.protocol === "http:" && policy.allowHttp)) {
    return policy.allowHttp ? "must be an http(s) URL" : "must be an https URL";
  }
  if (u.username || u.password) return "must be an absolute https URL without credentials";
  const host = hostOf(u);
  if (isIP(host) && !addressAllowed(host, policy)) return FORBIDDEN_ADDRESS;
  return undefined;
}

export const FORBIDDEN_ADDRESS =
  "must not reach a loopback, private, link-local, multicast, reserved or metadata address";
