import { z } from "zod";
import { baseConfigShape, parseConfig } from "@transferops/kit";

export const messagingConfigShape = {
  ...baseConfigShape,
  GRPC_PORT: z.coerce.number().int().min(0).max(65535).default(50056),
};

export interface MessagingConfig {
  env: z.infer<z.ZodObject<typeof messagingConfigShape>>;
}

export function loadMessagingConfig(env = process.env): MessagingConfig {
  return { env: parseConfig(messagingConfigShape, env) };
}
