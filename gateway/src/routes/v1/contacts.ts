import { z } from "zod";
import { ts } from "@transferops/kit";
import { ContactCountsSchema, ContactSchema } from "@transferops/kit/gen/transferops/messaging/v1/messaging_pb";
import type { Contact } from "@transferops/kit/gen/transferops/messaging/v1/messaging_pb";
import { toContractJson } from "../../http/json.ts";
import { created, instant, ok, route, type ResponseDoc, type Route } from "../../http/route.ts";
import {
  cleanText,
  IDEMPOTENCY_HEADER,
  idempotencyKeyOf,
  pageOf,
  pageQuery,
  paginationSchema,
  queryBoolean,
  replayHeaders,
} from "./messaging-common.ts";
import { MESSAGING } from "../../http/service-reasons.ts";
import { reasonsOf } from "../../http/reasons.ts";

// Contacts of the messaging-side API, addressed by customer_id (UUID). Every route takes
// `Authorization: Bearer <messaging API key>`. Shapes follow respond.io's contact object
// (docs/decisions/messaging.md).

const TAG = "Contacts";
const AUTH: ["messaging_key"] = ["messaging_key"];

const tagSchema = z.object({ tag_id: z.string().uuid(), name: z.string() });
export const contactSchema = z.object({
  customer_id: z.string().uuid(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  phone: z.string().nullable().describe("E.164"),
  email: z.string().nullable(),
  language: z.string().nullable().describe("BCP 47 tag"),
  custom_fields: z.record(z.string(), z.string()),
  tags: z.array(tagSchema),
  lifecycle: z.string().nullable(),
  collaborators: z.array(z.string().uuid()).describe("Fleet agent ids"),
  blocked: z.boolean(),
  deleted_at: z.string().nullable().describe("Set while soft-deleted"),
  created_at: z.string(),
  updated_at: z.string(),
  last_transfer_at: z.string().nullable().describe("When the last operation confirmed for this contact was confirmed"),
  transfer_count: z.number().int().describe("Operations confirmed for this contact"),
  last_operation_id: z.string().nullable(),
});

export const CONTACT_EXAMPLE = {
  customer_id: "0b6f1c9e-3f1a-4f6e-9a43-2a3f0c1d5e77",
  first_name: "Aïcha",
  last_name: "Nkomo",
  phone: "+237677123456",
  email: "aicha.nkomo@example.cm",
  language: "fr",
  custom_fields: { city: "Douala" },
  tags: [{ tag_id: "5d0c7b8e-93a4-4f39-8d3e-0c9d7d1a2b11", name: "VIP" }],
  lifecycle: "customer",
  collaborators: ["7e1d2c3b-4a5f-4e6d-8c7b-9a0b1c2d3e4f"],
  blocked: false,
  deleted_at: null,
  created_at: "2026-11-22T09:15:00.000Z",
  updated_at: "2026-11-22T09:15:00.000Z",
  last_transfer_at: null,
  transfer_count: 0,
  last_operation_id: null,
};

const contactJson = (c: Contact | undefined) => toContractJson(ContactSchema, c!);

const AUTH_ERRORS: Record<number, ResponseDoc> = {
  401: { description: "Missing Bearer key, or not a messaging API key" },
  403: {
    description: "A credential of another kind (X-API-Key, session)",
    reasons: reasonsOf(MESSAGING, "caller_not_allowed"),
  },
};
const CONTACT_200: ResponseDoc = { description: "The contact", schema: contactSchema, example: CONTACT_EXAMPLE };
const NOT_FOUND: ResponseDoc = {
  description: "No contact has this customer_id",
  reasons: reasonsOf(MESSAGING, "contact_not_found"),
};
const DELETED: ResponseDoc = {
  description: "The contact is soft-deleted",
  reasons: reasonsOf(MESSAGING, "contact_deleted"),
};

const name = cleanText(100).nullable().optional();
const writable = {
  first_name: name,
  last_name: name,
  phone: cleanText(40)
    .nullable()
    .optional()
    .describe("E.164, 00237…, 237… or a 9-digit Cameroon national number; stored as E.164"),
  email: cleanText(254).nullable().optional(),
  language: cleanText(35).nullable().optional().describe("BCP 47 tag, e.g. fr, en-CM"),
  custom_fields: z
    .record(cleanText(64), cleanText(1000))
    .optional()
    .describe('Keys snake_case; on PATCH merged into the current ones, a value "" removes the key'),
};

const createBody = z
  .object({
    ...writable,
    tags: z.array(cleanText(64)).max(100).optional().describe("Tag names; unknown ones are added to the catalogue"),
    lifecycle: cleanText(64).nullable().optional(),
    collaborators: z.array(z.string().uuid()).max(50).optional().describe("Fleet agent ids (active agents)"),
    blocked: z.boolean().optional(),
  })
  .strict();
const updateBody = z.object(writable).strict();

type Writable = z.infer<typeof updateBody>;
/** JSON body → proto ContactFields: null clears (""), absent leaves unchanged. */
function fieldsOf(b: Writable) {
  const t = (v: string | null | undefined) => (v === null ? "" : v);
  return {
    firstName: t(b.first_name),
    lastName: t(b.last_name),
    phone: t(b.phone),
    email: t(b.email),
    language: t(b.language),
    customFields: b.custom_fields ?? {},
    customFieldsSet: b.custom_fields !== undefined,
  };
}

const listQuery = z
  .object({
    ...pageQuery,
    search: cleanText(200)
      .optional()
      .describe("Searched in names and e-mail; a phone-like text matches phone prefixes"),
    tag: cleanText(64).optional().describe("Tag name"),
    lifecycle: cleanText(64).optional(),
    blocked: queryBoolean().optional(),
    deleted: z.enum(["exclude", "include", "only"]).optional().describe("Soft-deleted contacts: exclude (default)"),
    updated_since: instant().optional(),
  })
  .strict();

const countsSchema = z.object({
  total: z.number().int(),
  by_lifecycle: z.array(z.object({ key: z.string(), count: z.number().int() })),
  by_tag: z.array(z.object({ key: z.string(), count: z.number().int() })),
  blocked: z.number().int(),
  deleted: z.number().int(),
});

/** A route changing one contact and answering it. */
function contactAction(o: {
  operationId: string;
  method: "post" | "delete" | "put" | "patch";
  path: string;
  summary: string;
  description: string;
  body?: z.ZodType;
  requestExample?: unknown;
  errors?: Record<number, ResponseDoc>;
  call: (ctx: { services: any; caller: any; id: string; body: any; params: Record<string, string> }) => Promise<{
    contact?: Contact;
  }>;
}): Route {
  return route<unknown, unknown>({
    operationId: o.operationId,
    method: o.method,
    path: o.path,
    tag: TAG,
    summary: o.summary,
    description: o.description,
    auth: AUTH,
    uuidParams: ["customer_id"],
    body: o.body,
    requestExample: o.requestExample,
    responses: {
      200: CONTACT_200,
      ...AUTH_ERRORS,
      404: NOT_FOUND,
      ...o.errors,
      422: {
        description: "Invalid path or body",
        reasons: [...reasonsOf(MESSAGING, "invalid_request"), ...(o.errors?.[422]?.reasons ?? [])],
      },
    },
    async handle({ caller, body, params, services }) {
      const res = await o.call({ services, caller, id: params.customer_id, body, params });
      return ok(contactJson(res.contact));
    },
  });
}

export const contactRoutes: Route[] = [
  route({
    operationId: "listContacts",
    method: "get",
    path: "/v1/contacts",
    tag: TAG,
    summary: "List contacts, a cursor page in creation order",
    description:
      "Cursor pages in creation order: a contact created or changed while paging is neither skipped nor repeated " +
      "(new ones appear on later pages). Deleted contacts are left out unless `deleted` says otherwise. Repeat the " +
      "same filters with each cursor.",
    auth: AUTH,
    query: listQuery,
    responses: {
      200: {
        description: "A page of contacts",
        schema: z.object({ data: z.array(contactSchema), pagination: paginationSchema }),
        example: { data: [CONTACT_EXAMPLE], pagination: { next_cursor: "Y29udGFjdHM6NTA", has_more: true, limit: 50 } },
      },
      ...AUTH_ERRORS,
      422: {
        description: "Invalid query or cursor",
        reasons: reasonsOf(MESSAGING, "invalid_request", "invalid_cursor"),
      },
    },
    async handle({ caller, query, services }) {
      const res = await services.messaging.listContacts({
        caller,
        page: { limit: query.limit ?? 0, cursor: query.cursor ?? "" },
        filter: {
          search: query.search ?? "",
          tag: query.tag ?? "",
          lifecycle: query.lifecycle ?? "",
          blocked: query.blocked,
          deleted: query.deleted ?? "",
          updatedSince: query.updated_since ? ts(new Date(query.updated_since)) : undefined,
        },
      });
      return ok(pageOf(res.contacts.map(contactJson), res.page?.nextCursor ?? "", query.limit));
    },
  }),
  route({
    operationId: "createContact",
    method: "post",
    path: "/v1/contacts",
    tag: TAG,
    summary: "Create a contact",
    description:
      "The phone is normalised to E.164 (Cameroon national forms understood). A phone or e-mail held by a live " +
      "contact is refused with 409 naming it in context.customer_id. Idempotent with an Idempotency-Key.",
    auth: AUTH,
    headers: [IDEMPOTENCY_HEADER],
    body: createBody,
    requestExample: {
      first_name: "Aïcha",
      last_name: "Nkomo",
      phone: "677 12 34 56",
      email: "Aicha.Nkomo@example.cm",
      language: "fr",
      custom_fields: { city: "Douala" },
      tags: ["VIP"],
      lifecycle: "customer",
    },
    responses: {
      201: {
        description: "The contact created (or the replay of the first response)",
        schema: contactSchema,
        example: CONTACT_EXAMPLE,
      },
      ...AUTH_ERRORS,
      409: {
        description: "Phone or e-mail of a live contact, or the Idempotency-Key reused with another body",
        reasons: reasonsOf(MESSAGING, "contact_exists", "idempotency_key_reused"),
      },
      422: {
        description: "Invalid body",
        reasons: reasonsOf(
          MESSAGING,
          "invalid_request",
          "invalid_phone",
          "invalid_email",
          "unknown_lifecycle",
          "unknown_collaborator",
        ),
      },
    },
    async handle(ctx) {
      const b = ctx.body;
      const res = await ctx.services.messaging.createContact({
        caller: ctx.caller,
        idempotencyKey: idempotencyKeyOf(ctx),
        fields: fieldsOf(b),
        tags: b.tags ?? [],
        lifecycle: b.lifecycle ?? "",
        collaborators: b.collaborators ?? [],
        blocked: b.blocked ?? false,
      });
      return { ...created(contactJson(res.contact)), headers: replayHeaders(res.replayed) };
    },
  }),
  route({
    operationId: "getContactCounts",
    method: "get",
    path: "/v1/contacts/counts",
    tag: TAG,
    summary: "Contact counts: total, by lifecycle stage, by tag, blocked, deleted",
    description: "total, by_lifecycle, by_tag and blocked count live contacts; deleted counts soft-deleted ones.",
    auth: AUTH,
    responses: {
      200: {
        description: "Counts",
        schema: countsSchema,
        example: {
          total: 3,
          by_lifecycle: [
            { key: "new_lead", count: 1 },
            { key: "customer", count: 1 },
            { key: "none", count: 1 },
          ],
          by_tag: [{ key: "VIP", count: 2 }],
          blocked: 1,
          deleted: 1,
        },
      },
      ...AUTH_ERRORS,
    },
    async handle({ caller, services }) {
      const res = await services.messaging.getContactCounts({ caller });
      return ok(toContractJson(ContactCountsSchema, res.counts!));
    },
  }),
  route({
    operationId: "getContact",
    method: "get",
    path: "/v1/contacts/:customer_id",
    tag: TAG,
    summary: "Get a contact (deleted ones too, with deleted_at)",
    auth: AUTH,
    uuidParams: ["customer_id"],
    responses: {
      200: CONTACT_200,
      ...AUTH_ERRORS,
      404: NOT_FOUND,
      422: { description: "customer_id is not a UUID", reasons: reasonsOf(MESSAGING, "invalid_request") },
    },
    async handle({ caller, params, services }) {
      const res = await services.messaging.getContact({ caller, customerId: params.customer_id });
      return ok(contactJson(res.contact));
    },
  }),
  contactAction({
    operationId: "updateContact",
    method: "patch",
    path: "/v1/contacts/:customer_id",
    summary: "Change a contact: only the fields sent",
    description:
      'Writes only the fields present; null clears a field. custom_fields merge ("" removes a key). Tags, ' +
      "lifecycle, collaborators and blocking have their own routes.",
    body: updateBody,
    requestExample: { last_name: "Nkomo-Essomba", email: null, custom_fields: { city: "Yaoundé" } },
    errors: {
      409: {
        description: "Phone or e-mail of another live contact; or the contact is deleted",
        reasons: reasonsOf(MESSAGING, "contact_exists", "contact_deleted"),
      },
      422: { description: "", reasons: reasonsOf(MESSAGING, "invalid_phone", "invalid_email") },
    },
    call: ({ services, caller, id, body }) =>
      services.messaging.updateContact({ caller, customerId: id, fields: fieldsOf(body) }),
  }),
  contactAction({
    operationId: "deleteContact",
    method: "delete",
    path: "/v1/contacts/:customer_id",
    summary: "Delete a contact (soft: out of lists and counts, restorable)",
    description:
      "Sets deleted_at; the contact leaves lists and counts and frees its phone and e-mail. Deleting again changes nothing.",
    call: ({ services, caller, id }) => services.messaging.deleteContact({ caller, customerId: id }),
  }),
  contactAction({
    operationId: "restoreContact",
    method: "post",
    path: "/v1/contacts/:customer_id/restore",
    summary: "Restore a deleted contact",
    description: "Refused when the contact is not deleted, or when a live contact took its phone or e-mail meanwhile.",
    errors: {
      409: {
        description: "Not deleted, or phone/e-mail now held by a live contact",
        reasons: reasonsOf(MESSAGING, "contact_not_deleted", "contact_exists"),
      },
    },
    call: ({ services, caller, id }) => services.messaging.restoreContact({ caller, customerId: id }),
  }),
  contactAction({
    operationId: "blockContact",
    method: "post",
    path: "/v1/contacts/:customer_id/block",
    summary: "Block a contact (idempotent)",
    description: "Blocking a blocked contact answers it unchanged.",
    errors: { 409: DELETED },
    call: ({ services, caller, id }) => services.messaging.blockContact({ caller, customerId: id }),
  }),
  contactAction({
    operationId: "unblockContact",
    method: "delete",
    path: "/v1/contacts/:customer_id/block",
    summary: "Unblock a contact (idempotent)",
    description: "Unblocking a contact that is not blocked answers it unchanged.",
    errors: { 409: DELETED },
    call: ({ services, caller, id }) => services.messaging.unblockContact({ caller, customerId: id }),
  }),
  contactAction({
    operationId: "addContactTag",
    method: "post",
    path: "/v1/contacts/:customer_id/tags",
    summary: "Add a tag to a contact (by name, created on first use, or by tag_id)",
    description: "Names match the catalogue regardless of case. Adding a tag the contact has changes nothing.",
    body: z
      .object({ name: cleanText(64).min(1).optional(), tag_id: z.string().uuid().optional() })
      .strict()
      .refine((b) => (b.name === undefined) !== (b.tag_id === undefined), "give exactly one of name and tag_id"),
    requestExample: { name: "VIP" },
    errors: {
      404: {
        description: "Unknown contact or tag_id",
        reasons: reasonsOf(MESSAGING, "contact_not_found", "tag_not_found"),
      },
      409: DELETED,
    },
    call: ({ services, caller, id, body }) =>
      services.messaging.addContactTag({ caller, customerId: id, name: body.name ?? "", tagId: body.tag_id ?? "" }),
  }),
  contactAction({
    operationId: "removeContactTag",
    method: "delete",
    path: "/v1/contacts/:customer_id/tags/:tag_id",
    summary: "Remove a tag from a contact",
    description: "404 tag_not_found when the contact does not carry the tag. The tag stays in the catalogue.",
    errors: {
      404: {
        description: "Unknown contact, or tag not on it",
        reasons: reasonsOf(MESSAGING, "contact_not_found", "tag_not_found"),
      },
      409: DELETED,
    },
    call: ({ services, caller, id, params }) =>
      services.messaging.removeContactTag({ caller, customerId: id, tagId: params.tag_id }),
  }),
  contactAction({
    operationId: "setContactLifecycle",
    method: "put",
    path: "/v1/contacts/:customer_id/lifecycle",
    summary: "Set a contact's lifecycle stage (null clears)",
    description: "Stages are configured (LIFECYCLE_STAGES; default new_lead, hot_lead, payment, customer, cold_lead).",
    body: z.object({ lifecycle: cleanText(64).nullable() }).strict(),
    requestExample: { lifecycle: "customer" },
    errors: { 409: DELETED, 422: { description: "", reasons: reasonsOf(MESSAGING, "unknown_lifecycle") } },
    call: ({ services, caller, id, body }) =>
      services.messaging.setContactLifecycle({ caller, customerId: id, lifecycle: body.lifecycle ?? "" }),
  }),
  contactAction({
    operationId: "setContactCollaborators",
    method: "put",
    path: "/v1/contacts/:customer_id/collaborators",
    summary: "Replace a contact's collaborators (fleet agents)",
    description: "The set given replaces the current one; every id must name an active fleet agent.",
    body: z.object({ collaborators: z.array(z.string().uuid()).max(50) }).strict(),
    requestExample: { collaborators: ["7e1d2c3b-4a5f-4e6d-8c7b-9a0b1c2d3e4f"] },
    errors: { 409: DELETED, 422: { description: "", reasons: reasonsOf(MESSAGING, "unknown_collaborator") } },
    call: ({ services, caller, id, body }) =>
      services.messaging.setContactCollaborators({ caller, customerId: id, collaborators: body.collaborators }),
  }),
];
