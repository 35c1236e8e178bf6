// /mcp: the MCP Streamable HTTP endpoint (POST requests, GET the server stream, DELETE a session),
// for API tokens in either header form; pages of other sites are refused (DNS rebinding).
import { Elysia } from "elysia";
import type { AuthPlugin } from "../../platform/auth/plugin";
import type { TokenPrincipal } from "../../platform/auth/principal";
import { forbidden } from "../../platform/errors";
import { requestMeta } from "../../platform/http/request-meta";
import { eventStream, otherResponses } from "../../platform/http/schemas";
import type { McpGateway } from "./gateway";

export function mcpRoutes({ auth, gateway, allowedHosts }: { auth: AuthPlugin; gateway: McpGateway; allowedHosts: string[] }) {
  const allowed = new Set(allowedHosts.map((h) => h.toLowerCase()));
  const handle = ({ request, principal }: { request: Request; principal: unknown }) => {
    const origin = request.headers.get("origin");
    if (origin) {
      let host = "";
      try {
        host = new URL(origin).hostname.replace(/^\[|\]$/g, "").toLowerCase();
      } catch {
        // not a URL: refused below
      }
      if (!allowed.has(host)) throw forbidden(`Requests from pages of ${origin} are refused; MCP clients send no Origin, or Hearth's own`);
    }
    const meta = requestMeta(request);
    return gateway.handle(request, principal as TokenPrincipal, { ip: meta.ip, userAgent: meta.userAgent });
  };
  const detail = {
    tags: ["MCP"],
    description:
      "The MCP server of the caller's workspace (Streamable HTTP, protocol 2025-06-18). Authenticate with an API token (X-API-Token or Authorization: Bearer svc_...). " +
      "Tools: get_my_profile, get_workspace_info, update_my_ai_preferences, search_knowledge, list_agents, invoke_agent, invoke_workflow, http_get, the workspace's integration tools, and for SYSTEM tokens get_mcp_settings, update_mcp_settings and the integration management tools.",
  };
  return new Elysia()
    .use(auth)
    .post("/mcp", handle, {
      auth: "token:raw",
      detail: {
        ...detail,
        summary: "MCP: a JSON-RPC request or notification",
        responses: otherResponses(
          {
            200: { description: "The JSON-RPC response, as JSON or as an event stream (the client's Accept decides)", content: { "application/json": { schema: { type: "object" } }, "text/event-stream": { schema: { type: "string" } } } },
            202: { description: "A notification or response accepted (no body)", content: {} },
          },
          400, 401, 403, 404, 429,
        ),
      },
    })
    .get("/mcp", handle, { auth: "token:raw", detail: { ...detail, summary: "MCP: the server's event stream of a session", responses: otherResponses(eventStream("Messages the server sends the session"), 400, 401, 403, 404, 429) } })
    .delete("/mcp", handle, { auth: "token:raw", detail: { ...detail, summary: "MCP: end a session", responses: otherResponses({ 200: { description: "The session ended", content: {} } }, 400, 401, 403, 404, 429) } });
}
