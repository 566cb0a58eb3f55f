import { z } from "zod";
import { baseConfigShape, parseConfig } from "@transferops/kit";

export const dispatchConfigShape = {
  ...baseConfigShape,
  GRPC_PORT: z.coerce.number().int().min(0).max(65535).default(50052),
};

export interface DispatchConfig {
  env: z.infer<z.ZodObject<typeof dispatchConfigShape>>;
}

export function loadDispatchConfig(env = process.env): DispatchConfig {
  return { env: parseConfig(dispatchConfigShape, env) };
}
