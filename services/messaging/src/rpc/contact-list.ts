import type { ServiceImpl } from "@connectrpc/connect";
import { fromTs } from "@transferops/kit";
import type { MessagingService } from "@transferops/kit/gen/transferops/messaging/v1/messaging_service_pb";
import { decodeCursor, encodeCursor, pageLimit } from "../domain/cursor.ts";
import { phoneSearchPrefix } from "../domain/phone.ts";
import { refusal } from "../domain/reasons.ts";
import { contactOf } from "../flows/mappers.ts";
import { contactCounts, listContacts } from "../flows/contact-list.ts";
import type { MessagingDeps } from "../flows/ports.ts";
import { requireMessagingKey } from "./guard.ts";

type Impl = Pick<ServiceImpl<typeof MessagingService>, "listContacts" | "getContactCounts">;

const DELETED = new Set(["", "exclude", "include", "only"]);

export function contactListHandlers(deps: MessagingDeps): Impl {
  return {
    async listContacts(req) {
      requireMessagingKey(req.caller);
      const f = req.filter;
      const cursor = decodeCursor("contacts", req.page?.cursor ?? "");
      if (!cursor.ok) throw cursor.error;
      const deleted = f?.deleted ?? "";
      if (!DELETED.has(deleted)) throw refusal("invalid_request", "deleted is exclude, include or only");
      const limit = pageLimit(req.page?.limit ?? 0);
      const search = (f?.search ?? "").trim();
      const phonePrefix = search ? phoneSearchPrefix(search) : null;
      const found = await listContacts(deps, {
        afterSeq: cursor.seq,
        limit,
        phonePrefix: phonePrefix ?? undefined,
        text: search && !phonePrefix ? search.toLowerCase() : undefined,
        tag: f?.tag || undefined,
        lifecycle: f?.lifecycle || undefined,
        blocked: f?.blocked,
        deleted: (deleted || "exclude") as "exclude" | "include" | "only",
        updatedSince: fromTs(f?.updatedSince),
      });
      const page = found.slice(0, limit);
      const more = found.length > limit;
      return {
        contacts: page.map(contactOf),
        page: { nextCursor: more ? encodeCursor("contacts", page[page.length - 1].seq) : "" },
      };
    },

    async getContactCounts(req) {
      requireMessagingKey(req.caller);
      const { totals, byLifecycle, byTag } = await contactCounts(deps);
      const perStage = new Map(byLifecycle.map((r) => [r.key ?? "none", BigInt(r.count)]));
      return {
        counts: {
          total: BigInt(totals.total),
          blocked: BigInt(totals.blocked),
          deleted: BigInt(totals.deleted),
          byLifecycle: [...deps.config.lifecycleStages, "none"].map((key) => ({ key, count: perStage.get(key) ?? 0n })),
          byTag: byTag.map((r) => ({ key: r.key, count: BigInt(r.count) })),
        },
      };
    },
  };
}
