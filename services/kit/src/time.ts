import { timestampDate, timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";

export const ts = (d: Date | string | null | undefined): Timestamp | undefined =>
  d ? timestampFromDate(typeof d === "string" ? new Date(d) : d) : undefined;

export const fromTs = (t: Timestamp | undefined): Date | undefined => (t ? timestampDate(t) : undefined);
