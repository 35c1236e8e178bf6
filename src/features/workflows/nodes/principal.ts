// Nodes act as their workflow's workspace: a principal confined to that one workspace, with the
// rights of a USER token (it can read the workspace's data, never manage tokens or accounts).
import type { TokenPrincipal } from "../../../platform/auth/principal";
import type { NodeContext } from "./node-type";

export const workspacePrincipal = (ctx: Pick<NodeContext, "productId" | "organizationId" | "startedBy" | "executionId">): TokenPrincipal => ({
  kind: "token",
  userId: ctx.startedBy ?? "",
  organizationId: ctx.organizationId,
  productId: ctx.productId,
  tokenId: `workflow:${ctx.executionId}`,
  tokenRole: "USER",
});
