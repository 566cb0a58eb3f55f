import type { ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { type EntityManager, isUuid } from "@transferops/kit";
import {
  CreateContactRequestSchema,
  CreateContactResponseSchema,
  type MessagingService,
} from "@transferops/kit/gen/transferops/messaging/v1/messaging_service_pb";
import type { ContactFields } from "@transferops/kit/gen/transferops/messaging/v1/messaging_pb";
import {
  checkFields,
  checkLifecycle,
  checkTagName,
  LIMITS,
  mergeCustomFields,
  type CleanFields,
  type FieldsInput,
} from "../domain/contact-rules.ts";
import { refusal } from "../domain/reasons.ts";
import { contactChanged, type ContactChange } from "../events/contacts.ts";
import { contactOf } from "../flows/mappers.ts";
import { findContact, findLiveHolder, insertContact, updateContact, type ContactRow } from "../store/contacts.ts";
import { ensureTags, findTag } from "../store/tags.ts";
import type { MessagingDeps } from "../flows/ports.ts";
import { requireMessagingKey } from "./guard.ts";
import { idempotent } from "../flows/idempotent.ts";

type Impl = Pick<
  ServiceImpl<typeof MessagingService>,
  | "createContact"
  | "getContact"
  | "updateContact"
  | "deleteContact"
  | "restoreContact"
  | "blockContact"
  | "unblockContact"
  | "addContactTag"
  | "removeContactTag"
  | "setContactLifecycle"
  | "setContactCollaborators"
>;

const notFound = (id: string) => refusal("contact_not_found", `Contact ${id} not found`, { customer_id: id });

function fieldsInput(f: ContactFields | undefined): FieldsInput {
  return {
    first_name: f?.firstName,
    last_name: f?.lastName,
    phone: f?.phone,
    email: f?.email,
    language: f?.language,
    custom_fields: f?.customFieldsSet ? f.customFields : undefined,
  };
}

function clean(f: ContactFields | undefined): CleanFields {
  const r = checkFields(fieldsInput(f));
  if (!r.ok) throw r.error;
  return r.value;
}

/** Refuses when another live contact holds the phone or e-mail, naming it. */
async function refuseHolder(em: EntityManager, phone?: string | null, email?: string | null, except?: string) {
  const holder = await findLiveHolder(em, phone, email, except);
  if (holder) {
    throw refusal("contact_exists", `A contact with this ${holder.field} exists: ${holder.customer_id}`, {
      customer_id: holder.customer_id,
      field: holder.field,
    });
  }
}

export function contactHandlers(deps: MessagingDeps): Impl {
  const { db } = deps;

  async function checkCollaborators(ids: string[]): Promise<string[]> {
    const unique = [...new Set(ids.map((i) => i.toLowerCase()))];
    if (unique.length > LIMITS.collaborators) {
      throw refusal("invalid_request", `collaborators: at most ${LIMITS.collaborators}`, { field: "collaborators" });
    }
    const malformed = unique.filter((i) => !isUuid(i));
    const unknown = malformed.length ? malformed : await deps.agents.unknownAgents(unique);
    if (unknown.length) {
      throw refusal("unknown_collaborator", `No active agent has the id ${unknown[0]}`, { agent_ids: unknown });
    }
    return unique.sort();
  }

  function tagNames(names: string[]): string[] {
    if (names.length > LIMITS.tagsPerContact) {
      throw refusal("invalid_request", `tags: at most ${LIMITS.tagsPerContact}`, { field: "tags" });
    }
    return names.map((n) => {
      const r = checkTagName(n);
      if (!r.ok) throw r.error;
      return r.value;
    });
  }

  /** Locks a live contact, runs the change, publishes it, and answers the contact. */
  async function change(
    customerId: string,
    kind: ContactChange,
    apply: (em: EntityManager, c: ContactRow) => Promise<boolean>,
    options: { allowDeleted?: boolean } = {},
  ) {
    if (!isUuid(customerId)) throw notFound(customerId);
    const row = await db.tx(async (em) => {
      const c = await findContact(em, customerId, true);
      if (!c) throw notFound(customerId);
      if (c.deleted_at && !options.allowDeleted) {
        throw refusal("contact_deleted", `Contact ${customerId} is deleted; restore it first`, {
          customer_id: customerId,
        });
      }
      const changed = await apply(em, c);
      return changed ? contactChanged(em, customerId, kind) : c;
    });
    deps.published();
    return { contact: contactOf(row) };
  }

  return {
    async createContact(req) {
      requireMessagingKey(req.caller);
      const fields = clean(req.fields);
      const lifecycle = checkLifecycle(req.lifecycle, deps.config.lifecycleStages);
      if (!lifecycle.ok) throw lifecycle.error;
      const names = tagNames(req.tags);
      const collaborators = await checkCollaborators(req.collaborators);
      const res = await idempotent(
        deps,
        {
          operation: "createContact",
          key: req.idempotencyKey,
          requestSchema: CreateContactRequestSchema,
          request: req,
          responseSchema: CreateContactResponseSchema,
        },
        async (em) => {
          await refuseHolder(em, fields.phone, fields.email);
          const tags = await ensureTags(em, names);
          const id = await insertContact(em, {
            ...fields,
            tag_ids: tags.map((t) => t.tag_id),
            lifecycle: lifecycle.value,
            collaborators,
            blocked: req.blocked,
          });
          // A concurrent create took the phone or e-mail after our check: name it.
          if (!id) await refuseHolder(em, fields.phone, fields.email);
          const row = await contactChanged(em, id!, "created");
          return create(CreateContactResponseSchema, { contact: contactOf(row) });
        },
      );
      deps.published();
      return res;
    },

    async getContact(req) {
      requireMessagingKey(req.caller);
      const c = isUuid(req.customerId) ? await findContact(db.em(), req.customerId) : undefined;
      if (!c) throw notFound(req.customerId);
      return { contact: contactOf(c) };
    },

    async updateContact(req) {
      requireMessagingKey(req.caller);
      const fields = clean(req.fields);
      return change(req.customerId, "updated", async (em, c) => {
        await refuseHolder(em, fields.phone, fields.email, c.customer_id);
        const set: Record<string, unknown> = {};
        for (const k of ["first_name", "last_name", "phone", "email", "language"] as const) {
          if (fields[k] !== undefined && fields[k] !== c[k]) set[k] = fields[k];
        }
        if (fields.custom_fields) {
          const merged = mergeCustomFields(c.custom_fields, fields.custom_fields);
          if (JSON.stringify(merged) !== JSON.stringify(c.custom_fields)) set.custom_fields = merged;
        }
        if (!Object.keys(set).length) return false;
        await updateContact(em, c.customer_id, set);
        return true;
      });
    },

    async deleteContact(req) {
      requireMessagingKey(req.caller);
      return change(
        req.customerId,
        "deleted",
        async (em, c) => {
          if (c.deleted_at) return false;
          await updateContact(em, c.customer_id, { deleted_at: new Date() });
          return true;
        },
        { allowDeleted: true },
      );
    },

    async restoreContact(req) {
      requireMessagingKey(req.caller);
      return change(
        req.customerId,
        "restored",
        async (em, c) => {
          if (!c.deleted_at) {
            throw refusal("contact_not_deleted", `Contact ${c.customer_id} is not deleted`, {
              customer_id: c.customer_id,
            });
          }
          await refuseHolder(em, c.phone, c.email, c.customer_id);
          await updateContact(em, c.customer_id, { deleted_at: null });
          return true;
        },
        { allowDeleted: true },
      );
    },

    async blockContact(req) {
      requireMessagingKey(req.caller);
      return change(req.customerId, "blocked", async (em, c) => {
        if (c.blocked) return false;
        await updateContact(em, c.customer_id, { blocked: true });
        return true;
      });
    },

    async unblockContact(req) {
      requireMessagingKey(req.caller);
      return change(req.customerId, "unblocked", async (em, c) => {
        if (!c.blocked) return false;
        await updateContact(em, c.customer_id, { blocked: false });
        return true;
      });
    },

    async addContactTag(req) {
      requireMessagingKey(req.caller);
      const name = req.tagId ? undefined : tagNames([req.name])[0];
      if (req.tagId && !isUuid(req.tagId)) {
        throw refusal("tag_not_found", `Tag ${req.tagId} not found`, { tag_id: req.tagId });
      }
      return change(req.customerId, "tagged", async (em, c) => {
        const tag = name ? (await ensureTags(em, [name]))[0] : await findTag(em, req.tagId);
        if (!tag) throw refusal("tag_not_found", `Tag ${req.tagId} not found`, { tag_id: req.tagId });
        if (c.tags.some((t) => t.tag_id === tag.tag_id)) return false;
        if (c.tags.length >= LIMITS.tagsPerContact) {
          throw refusal("invalid_request", `tags: at most ${LIMITS.tagsPerContact}`, { field: "tags" });
        }
        await updateContact(em, c.customer_id, { tag_ids: [...c.tags.map((t) => t.tag_id), tag.tag_id] });
        return true;
      });
    },

    async removeContactTag(req) {
      requireMessagingKey(req.caller);
      return change(req.customerId, "untagged", async (em, c) => {
        if (!c.tags.some((t) => t.tag_id === req.tagId)) {
          throw refusal("tag_not_found", `Contact ${c.customer_id} has no tag ${req.tagId}`, {
            customer_id: c.customer_id,
            tag_id: req.tagId,
          });
        }
        await updateContact(em, c.customer_id, {
          tag_ids: c.tags.filter((t) => t.tag_id !== req.tagId).map((t) => t.tag_id),
        });
        return true;
      });
    },

    async setContactLifecycle(req) {
      requireMessagingKey(req.caller);
      const stage = checkLifecycle(req.lifecycle, deps.config.lifecycleStages);
      if (!stage.ok) throw stage.error;
      return change(req.customerId, "lifecycle", async (em, c) => {
        if (c.lifecycle === stage.value) return false;
        await updateContact(em, c.customer_id, { lifecycle: stage.value });
        return true;
      });
    },

    async setContactCollaborators(req) {
      requireMessagingKey(req.caller);
      if (!isUuid(req.customerId)) throw notFound(req.customerId);
      const ids = await checkCollaborators(req.collaborators);
      return change(req.customerId, "collaborators", async (em, c) => {
        if (JSON.stringify([...c.collaborators].sort()) === JSON.stringify(ids)) return false;
        await updateContact(em, c.customer_id, { collaborators: ids });
        return true;
      });
    },
  };
}
