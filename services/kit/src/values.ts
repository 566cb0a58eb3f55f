// Small value helpers every service needs between its rows and its proto messages, once.

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The most rows one page of a list gives: every list RPC and route takes a limit from 1 to it. */
export const MAX_PAGE_LIMIT = 250;

/** Whether `v` is a UUID (any case). An id that is not one names nothing: a lookup is skipped. */
export const isUuid = (v: string): boolean => UUID.test(v);

/** A nullable column as an optional proto field. */
export const opt = <T>(v: T | null | undefined): T | undefined => (v === null ? undefined : v);

/** A nullable integer column as an optional proto int64. */
export const big = (v: number | null | undefined): bigint | undefined =>
  v === null || v === undefined ? undefined : BigInt(v);
