import { z } from "zod";
import { baseConfigShape, parseConfig } from "@transferops/kit";

export const evidenceConfigShape = {
  ...baseConfigShape,
  GRPC_PORT: z.coerce.number().int().min(0).max(65535).default(50053),
};

export interface EvidenceConfig {
  env: z.infer<z.ZodObject<typeof evidenceConfigShape>>;
}

export function loadEvidenceConfig(env = process.env): EvidenceConfig {
  return { env: parseConfig(evidenceConfigShape, env) };
}
