// The kit's pure entry (`@transferops/kit/pure`): what a service's domain/ may import. No
// database, bus, server or ORM behind it (MikroORM, pg and kafkajs stay behind the main
// entry): errors and reasons, the caller guards, the closed vocabularies, value helpers, phone numbers, times
// and local days. `npm run lint:imports` holds that domain/ imports only this entry.
export * from "./errors.ts";
export * from "./guards.ts";
export * from "./vocabulary.ts";
export * from "./values.ts";
export * from "./msisdn.ts";
export * from "./time.ts";
export * from "./local-day.ts";
export type { Caller } from "./gen/transferops/common/v1/identity_pb.ts";
