import { Migration0001Contacts } from "./Migration0001Contacts.ts";

export const migrations = [Migration0001Contacts];
