import { create } from "@bufbuild/protobuf";
import { type EntityManager, isUuid } from "@transferops/kit";
import {
  CreateContactRequestSchema,
  CreateContactResponseSchema,
  type CreateContactRequest,
  type GetContactRequest,
  type UpdateContactRequest,
  type DeleteContactRequest,
  type RestoreContactRequest,
  type BlockContactRequest,
  type UnblockContactRequest,
  type AddContactTagRequest,
  type RemoveContactTagRequest,
  type SetContactLifecycleRequest,
  type SetContactCollaboratorsRequest,
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
import {
  findContact,
  findLiveHolder,
  insertContact,
  updateContact as updateContactRow,
  type ContactRow,
} from "../store/contacts.ts";
import { ensureTags, findTag } from "../store/tags.ts";
import { idempotent } from "./idempotent.ts";
import { contactOf } from "./mappers.ts";
import type { MessagingDeps } from "./ports.ts";

// The contact use cases (messaging's API): each one a request already past the key check.

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

async function checkCollaborators(deps: MessagingDeps, ids: string[]): Promise<string[]> {
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
  deps: MessagingDeps,
  customerId: string,
  kind: ContactChange,
  apply: (em: EntityManager, c: ContactRow) => Promise<boolean>,
  options: { allowDeleted?: boolean } = {},
) {
  if (!isUuid(customerId)) throw notFound(customerId);
  const row = await deps.db.tx(async (em) => {
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

export async function createContact(deps: MessagingDeps, req: CreateContactRequest) {
  const fields = clean(req.fields);
  const lifecycle = checkLifecycle(req.lifecycle, deps.config.lifecycleStages);
  if (!lifecycle.ok) throw lifecycle.error;
  const names = tagNames(req.tags);
  const collaborators = await checkCollaborators(deps, req.collaborators);
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
}

export async function getContact(deps: MessagingDeps, req: GetContactRequest) {
  const c = isUuid(req.customerId) ? await findContact(deps.db.em(), req.customerId) : undefined;
  if (!c) throw notFound(req.customerId);
  return { contact: contactOf(c) };
}

export async function updateContact(deps: MessagingDeps, req: UpdateContactRequest) {
  const fields = clean(req.fields);
  return change(deps, req.customerId, "updated", async (em, c) => {
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
    await updateContactRow(em, c.customer_id, set);
    return true;
  });
}

export async function deleteContact(deps: MessagingDeps, req: DeleteContactRequest) {
  return change(
    deps,
    req.customerId,
    "deleted",
    async (em, c) => {
      if (c.deleted_at) return false;
      await updateContactRow(em, c.customer_id, { deleted_at: new Date() });
      return true;
    },
    { allowDeleted: true },
  );
}

export async function restoreContact(deps: MessagingDeps, req: RestoreContactRequest) {
  return change(
    deps,
    req.customerId,
    "restored",
    async (em, c) => {
      if (!c.deleted_at) {
        throw refusal("contact_not_deleted", `Contact ${c.customer_id} is not deleted`, {
          customer_id: c.customer_id,
        });
      }
      await refuseHolder(em, c.phone, c.email, c.customer_id);
      await updateContactRow(em, c.customer_id, { deleted_at: null });
      return true;
    },
    { allowDeleted: true },
  );
}

export async function blockContact(deps: MessagingDeps, req: BlockContactRequest) {
  return change(deps, req.customerId, "blocked", async (em, c) => {
    if (c.blocked) return false;
    await updateContactRow(em, c.customer_id, { blocked: true });
    return true;
  });
}

export async function unblockContact(deps: MessagingDeps, req: UnblockContactRequest) {
  return change(deps, req.customerId, "unblocked", async (em, c) => {
    if (!c.blocked) return false;
    await updateContactRow(em, c.customer_id, { blocked: false });
    return true;
  });
}

export async function addContactTag(deps: MessagingDeps, req: AddContactTagRequest) {
  const name = req.tagId ? undefined : tagNames([req.name])[0];
  if (req.tagId && !isUuid(req.tagId)) {
    throw refusal("tag_not_found", `Tag ${req.tagId} not found`, { tag_id: req.tagId });
  }
  return change(deps, req.customerId, "tagged", async (em, c) => {
    const tag = name ? (await ensureTags(em, [name]))[0] : await findTag(em, req.tagId);
    if (!tag) throw refusal("tag_not_found", `Tag ${req.tagId} not found`, { tag_id: req.tagId });
    if (c.tags.some((t) => t.tag_id === tag.tag_id)) return false;
    if (c.tags.length >= LIMITS.tagsPerContact) {
      throw refusal("invalid_request", `tags: at most ${LIMITS.tagsPerContact}`, { field: "tags" });
    }
    await updateContactRow(em, c.customer_id, { tag_ids: [...c.tags.map((t) => t.tag_id), tag.tag_id] });
    return true;
  });
}

export async function removeContactTag(deps: MessagingDeps, req: RemoveContactTagRequest) {
  return change(deps, req.customerId, "untagged", async (em, c) => {
    if (!c.tags.some((t) => t.tag_id === req.tagId)) {
      throw refusal("tag_not_found", `Contact ${c.customer_id} has no tag ${req.tagId}`, {
        customer_id: c.customer_id,
        tag_id: req.tagId,
      });
    }
    await updateContactRow(em, c.customer_id, {
      tag_ids: c.tags.filter((t) => t.tag_id !== req.tagId).map((t) => t.tag_id),
    });
    return true;
  });
}

export async function setContactLifecycle(deps: MessagingDeps, req: SetContactLifecycleRequest) {
  const stage = checkLifecycle(req.lifecycle, deps.config.lifecycleStages);
  if (!stage.ok) throw stage.error;
  return change(deps, req.customerId, "lifecycle", async (em, c) => {
    if (c.lifecycle === stage.value) return false;
    await updateContactRow(em, c.customer_id, { lifecycle: stage.value });
    return true;
  });
}

export async function setContactCollaborators(deps: MessagingDeps, req: SetContactCollaboratorsRequest) {
  if (!isUuid(req.customerId)) throw notFound(req.customerId);
  const ids = await checkCollaborators(deps, req.collaborators);
  return change(deps, req.customerId, "collaborators", async (em, c) => {
    if (JSON.stringify([...c.collaborators].sort()) === JSON.stringify(ids)) return false;
    await updateContactRow(em, c.customer_id, { collaborators: ids });
    return true;
  });
}
