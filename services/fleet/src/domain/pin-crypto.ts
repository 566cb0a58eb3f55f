import { createCipheriv, createDecipheriv, createSecretKey, randomBytes, type KeyObject } from "node:crypto";

// Secrets at rest (SIM PINs, webhook signing secrets): AES-256-GCM under a named key.
//
// A sealed value is `{ keyId, ciphertext }` where ciphertext = iv (12 bytes) || tag (16
// bytes) || encrypted bytes. The associated data binds it to its owner (the SIM id for a
// PIN), so a ciphertext copied onto another row does not decrypt. The key id makes
// rotation possible: the first configured key seals, every configured key opens.

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

export interface Keyring {
  /** Id of the key that seals new values. */
  currentKeyId: string;
  /** Imported once: a raw key given to each cipher is imported anew on every call. */
  keys: ReadonlyMap<string, KeyObject>;
}

export interface Sealed {
  keyId: string;
  ciphertext: Buffer;
}

export class KeyringError extends Error {}

/** Parses `keyId:base64key,keyId:base64key`; the first key seals, all open. */
export function parseKeyring(spec: string): Keyring {
  const keys = new Map<string, KeyObject>();
  let currentKeyId = "";
  for (const part of spec
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)) {
    const sep = part.indexOf(":");
    if (sep <= 0) throw new KeyringError("each PIN key must be keyId:base64key");
    const id = part.slice(0, sep);
    const key = Buffer.from(part.slice(sep + 1), "base64");
    if (key.length !== KEY_BYTES) throw new KeyringError(`PIN key ${id} must be ${KEY_BYTES} bytes (base64)`);
    if (keys.has(id)) throw new KeyringError(`PIN key id ${id} appears twice`);
    keys.set(id, createSecretKey(key));
    currentKeyId ||= id;
  }
  if (!currentKeyId) throw new KeyringError("at least one PIN key is required");
  return { currentKeyId, keys };
}

export function seal(keyring: Keyring, plaintext: string, associatedData: string): Sealed {
  const key = keyring.keys.get(keyring.currentKeyId)!;
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  cipher.setAAD(Buffer.from(associatedData, "utf8"));
  const encrypted = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return { keyId: keyring.currentKeyId, ciphertext: Buffer.concat([iv, cipher.getAuthTag(), encrypted]) };
}

/** Opens a sealed value; throws (without the value) when the key is unknown or the data was tampered with. */
export function open(keyring: Keyring, sealed: Sealed, associatedData: string): string {
  const key = keyring.keys.get(sealed.keyId);
  if (!key) throw new KeyringError(`no configured key has id ${sealed.keyId}`);
  if (sealed.ciphertext.length < IV_BYTES + TAG_BYTES) throw new KeyringError("sealed value is truncated");
  const iv = sealed.ciphertext.subarray(0, IV_BYTES);
  const tag = sealed.ciphertext.subarray(IV_BYTES, IV_BYTES + TAG_BYTES);
  const body = sealed.ciphertext.subarray(IV_BYTES + TAG_BYTES);
  const decipher = createDecipheriv("aes-256-gcm", key, iv);
  decipher.setAAD(Buffer.from(associatedData, "utf8"));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
  } catch {
    throw new KeyringError("sealed value does not authenticate under its key and associated data");
  }
}

/** Associated data of a SIM's PIN: the SIM id. */
export const pinAad = (simId: string) => simId;
/** Associated data of a webhook's signing secret. */
export const webhookSecretAad = (webhookId: string) => `webhook:${webhookId}`;

export const PIN_PATTERN = /^\d{4,8}$/;
