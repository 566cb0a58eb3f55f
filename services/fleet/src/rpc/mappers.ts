import { create } from "@bufbuild/protobuf";
import { ts } from "@transferops/kit";
import { AgentSchema, type Agent } from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";
import type { AgentRecord } from "../domain/agents.ts";

export function toAgent(a: AgentRecord): Agent {
  return create(AgentSchema, {
    agentId: a.id,
    login: a.login,
    fullName: a.full_name,
    role: a.role,
    isActive: a.is_active,
    createdAt: ts(a.created_at),
    mustChangePassword: a.must_change_password,
  });
}
