import { z } from "zod";
import { baseConfigShape, parseConfig } from "@transferops/kit";

export const intakeConfigShape = {
  ...baseConfigShape,
  GRPC_PORT: z.coerce.number().int().min(0).max(65535).default(50054),
};

export interface IntakeConfig {
  env: z.infer<z.ZodObject<typeof intakeConfigShape>>;
}

export function loadIntakeConfig(env = process.env): IntakeConfig {
  return { env: parseConfig(intakeConfigShape, env) };
}
