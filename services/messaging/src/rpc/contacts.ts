import type { ServiceImpl } from "@connectrpc/connect";
import type { MessagingService } from "@transferops/kit/gen/transferops/messaging/v1/messaging_service_pb";
import * as contacts from "../flows/contacts.ts";
import type { MessagingDeps } from "../flows/ports.ts";
import { requireMessagingKey } from "./guard.ts";

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

export function contactHandlers(deps: MessagingDeps): Impl {
  return {
    async createContact(req) {
      requireMessagingKey(req.caller);
      return contacts.createContact(deps, req);
    },

    async getContact(req) {
      requireMessagingKey(req.caller);
      return contacts.getContact(deps, req);
    },

    async updateContact(req) {
      requireMessagingKey(req.caller);
      return contacts.updateContact(deps, req);
    },

    async deleteContact(req) {
      requireMessagingKey(req.caller);
      return contacts.deleteContact(deps, req);
    },

    async restoreContact(req) {
      requireMessagingKey(req.caller);
      return contacts.restoreContact(deps, req);
    },

    async blockContact(req) {
      requireMessagingKey(req.caller);
      return contacts.blockContact(deps, req);
    },

    async unblockContact(req) {
      requireMessagingKey(req.caller);
      return contacts.unblockContact(deps, req);
    },

    async addContactTag(req) {
      requireMessagingKey(req.caller);
      return contacts.addContactTag(deps, req);
    },

    async removeContactTag(req) {
      requireMessagingKey(req.caller);
      return contacts.removeContactTag(deps, req);
    },

    async setContactLifecycle(req) {
      requireMessagingKey(req.caller);
      return contacts.setContactLifecycle(deps, req);
    },

    async setContactCollaborators(req) {
      requireMessagingKey(req.caller);
      return contacts.setContactCollaborators(deps, req);
    },
  };
}
