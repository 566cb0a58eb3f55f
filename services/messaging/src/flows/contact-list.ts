import { countContacts, listContacts as listContactRows, type ContactListQuery } from "../store/contact-list.ts";
import type { MessagingDeps } from "./ports.ts";

/** The contacts the query selects, one more than its limit (whether a next page exists). */
export async function listContacts(deps: MessagingDeps, q: ContactListQuery) {
  return listContactRows(deps.db.em(), q);
}

/** The contacts' totals, by lifecycle stage and by tag. */
export async function contactCounts(deps: MessagingDeps) {
  return countContacts(deps.db.em());
}
