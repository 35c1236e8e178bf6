// The workspace as one MCP server (Streamable HTTP): a session per client, bound to the API token
// that opened it; tools from the MCP platform set and the shared tool registry, as the token's role
// and the workspace's settings allow; every initialize and tools/call budgeted, every call audited;
// list_changed sent when tools change; sessions closed when their token stops working, when idle
// too long, and (least recently used first) when one token opens too many.
import type { Server } from "@modelcontextprotocol/sdk/server/index.js";
import type { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Clock } from "../../platform/clock";
import type { TokenPrincipal } from "../../platform/auth/principal";
import type { Authenticator } from "../../platform/auth/authenticator";
import type { Logger } from "../../platform/log";
import type { RateLimiter } from "../../platform/rate-limit";
import { jsonSchema, type ToolContext, type ToolDef, type ToolRegistry } from "../../platform/tools/registry";
import type { McpTool } from "./platform-tools";
import type { McpSettingsService } from "./settings";

/** JSON-RPC error code of an over-limit call (implementation-defined range). */
export const RATE_LIMITED = -32029;
/** JSON-RPC's "Invalid Request" (the SDK's ErrorCode.InvalidRequest), answered before the SDK is loaded. */
const INVALID_REQUEST = -32600;
const SWEEP_MS = 30_000;
/**
 * A session with no request in flight and no open stream for this long is closed: a client that
 * went away without DELETE would otherwise hold its server objects (~22 KB) for ever. A client that
 * comes back gets 404 for the session and initializes a new one (Streamable HTTP).
 */
export const SESSION_IDLE_MS = 30 * 60_000;
/** Sessions one token may hold; a new one closes the token's least recently used idle session. */
export const MAX_SESSIONS_PER_TOKEN = 32;
const MAX_BODY_BYTES = 1024 * 1024;
/** Characters of a called tool's name kept in the audit log's endpoint. */
const MAX_AUDITED_NAME = 128;

interface Session {
  id: string;
  transport: WebStandardStreamableHTTPServerTransport;
  server: Server;
  principal: TokenPrincipal;
  injected: boolean;
  client: { ip: string | null; userAgent: string | null };
  /** Requests in flight and streams open (a GET stream, a POST answered as a stream). */
  busy: number;
  /** When the last request came or the last stream ended (the clock's time). */
  lastUsed: number;
}

export interface GatewayDeps {
  version: string;
  clock: Clock;
  tools: ToolRegistry;
  platform: McpTool[];
  settings: McpSettingsService;
  limiter: RateLimiter;
  authenticator: Pick<Authenticator, "recordTokenUse">;
  tokenUsable(tokenId: string): boolean;
  /** The README and profile injected into a session's first tools/call. */
  firstCallContext(p: TokenPrincipal, tools: ToolDef<any>[]): { readme: string; profile: unknown };
  log: Logger;
}

const INSTRUCTIONS =
  "Hearth: this team's self-hosted workspace. Call get_workspace_info to learn what is here (knowledge bases, agents, integrations). " +
  "search_knowledge finds cited passages in the team's documents; invoke_agent hands a task to one of the workspace's agents.";

type Sdk = typeof import("./sdk");

export function createMcpGateway(d: GatewayDeps) {
  const sessions = new Map<string, Session>();
  // Loaded by the first session (sdk.ts); every session and call below runs after that.
  let loading: Promise<Sdk> | undefined;
  let sdk!: Sdk;
  const loadSdk = async () => (sdk = await (loading ??= import("./sdk")));

  const toolsFor = (p: TokenPrincipal): McpTool[] => {
    const disabled = new Set(d.settings.get(p.productId).disabled_tools);
    const platform = d.platform.filter((t) => !t.systemOnly || p.tokenRole === "SYSTEM");
    const names = new Set(platform.map((t) => t.name));
    const shared = d.tools.forWorkspace({ productId: p.productId, organizationId: p.organizationId }).filter((t) => !names.has(t.name));
    // The settings tools stay reachable, so a SYSTEM token cannot lock itself out.
    return [...platform, ...shared].filter((t) => !disabled.has(t.name) || (t as McpTool).systemOnly);
  };

  const call = async (s: Session, name: string, args: Record<string, unknown>, extra: { signal: AbortSignal; sendNotification: (n: any) => Promise<void>; progressToken?: string | number }): Promise<CallToolResult> => {
    const p = s.principal;
    // Every call is in the audit log, refused ones too (the name cut: a client may send any string).
    const audit = (status: number) => d.authenticator.recordTokenUse({ tokenId: p.tokenId, action: "used", ipAddress: s.client.ip, userAgent: s.client.userAgent, endpoint: `/mcp/tools/${name.slice(0, MAX_AUDITED_NAME)}`, statusCode: status });
    const tool = toolsFor(p).find((t) => t.name === name);
    // Paid before anything else, so refused calls cannot be repeated for free.
    const decision = d.limiter.hit(`token:${p.tokenId}`, (tool as McpTool | undefined)?.strict ? "strict" : "default");
    if (!decision.allowed) {
      await audit(429);
      throw new sdk.McpError(RATE_LIMITED, `Rate limit of ${decision.limit} calls per minute exceeded; retry in ${decision.reset} s`, { retry_after_seconds: decision.reset });
    }
    if (!tool) {
      const refused = d.platform.find((t) => t.name === name && t.systemOnly);
      await audit(refused ? 403 : 404);
      throw new sdk.McpError(sdk.ErrorCode.InvalidParams, refused ? `${name} needs an API token with the SYSTEM role` : `Unknown tool "${name}"; call tools/list for the tools of this workspace`);
    }
    if (name === "search_knowledge" && args.top_k === undefined) args = { ...args, top_k: d.settings.get(p.productId).default_top_k };
    let result: CallToolResult;
    let status = 200;
    const problem = d.tools.argumentsError(tool, args);
    if (problem) {
      status = 422;
      result = { isError: true, content: [{ type: "text", text: `Bad arguments for ${name}: ${problem}` }] };
    } else {
      const ctx: ToolContext = {
        principal: p,
        productId: p.productId,
        organizationId: p.organizationId,
        signal: extra.signal,
        log: d.log,
        progress: extra.progressToken === undefined ? undefined : (progress, message) => void extra.sendNotification({ method: "notifications/progress", params: { progressToken: extra.progressToken, progress, message } }).catch(() => {}),
      };
      try {
        const out = await tool.run(args, ctx);
        const structured = out.data && typeof out.data === "object" && !Array.isArray(out.data) ? (out.data as Record<string, unknown>) : undefined;
        result = { content: [{ type: "text", text: out.text }], ...(structured ? { structuredContent: structured } : {}) };
      } catch (e) {
        status = 500;
        result = { isError: true, content: [{ type: "text", text: `${name} failed: ${(e as Error).message ?? String(e)}` }] };
      }
    }
    await audit(status);
    if (!s.injected) {
      s.injected = true;
      const { readme, profile } = d.firstCallContext(p, toolsFor(p));
      result.content.push({ type: "text", text: `About this workspace (sent once per session):\n\n${readme}` }, { type: "text", text: `Your profile:\n${JSON.stringify(profile, null, 2)}` });
    }
    return result;
  };

  const open = async (p: TokenPrincipal, client: Session["client"]): Promise<WebStandardStreamableHTTPServerTransport> => {
    const { Server, WebStandardStreamableHTTPServerTransport, ListToolsRequestSchema, CallToolRequestSchemaReadable, McpError, ErrorCode } = await loadSdk();
    const server = new Server({ name: "hearth", version: d.version }, { capabilities: { tools: { listChanged: true } }, instructions: INSTRUCTIONS });
    let session: Session | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      maxRequestBodySize: MAX_BODY_BYTES,
      onsessioninitialized: (id) => {
        session = { id, transport, server, principal: p, injected: false, client, busy: 0, lastUsed: d.clock.now() };
        sessions.set(id, session);
      },
      onsessionclosed: (id) => void sessions.delete(id),
    });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: toolsFor(p).map((t) => ({ name: t.name, description: t.description, inputSchema: jsonSchema(t.input) as { type: "object" } })),
    }));
    server.setRequestHandler(CallToolRequestSchemaReadable, async (req, extra) => {
      if (!session) throw new McpError(ErrorCode.InvalidRequest, "The session is not initialized");
      return call(session, req.params.name, (req.params.arguments ?? {}) as Record<string, unknown>, { signal: extra.signal, sendNotification: extra.sendNotification, progressToken: req.params._meta?.progressToken });
    });
    await server.connect(transport);
    return transport;
  };

  const close = (s: Session) => {
    sessions.delete(s.id);
    void s.transport.close().catch(() => {});
  };

  const idle = (s: Session) => s.busy === 0 && d.clock.now() - s.lastUsed >= SESSION_IDLE_MS;
  const sweep = () => {
    for (const s of sessions.values()) if (idle(s) || !d.tokenUsable(s.principal.tokenId)) close(s);
  };
  const sweeper = setInterval(sweep, SWEEP_MS);
  sweeper.unref?.();

  /** Marks a session busy until the returned release is called (once). */
  const use = (s: Session) => {
    s.busy++;
    s.lastUsed = d.clock.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      s.busy--;
      s.lastUsed = d.clock.now();
    };
  };

  /** The response, with `release` called when its body ends: at once for JSON, when the client stops reading a stream. */
  const held = (res: Response, release: () => void): Response => {
    if (!res.body || !res.headers.get("content-type")?.includes("text/event-stream")) {
      release();
      return res;
    }
    const reader = res.body.getReader();
    const body = new ReadableStream<Uint8Array>({
      async pull(c) {
        try {
          const r = await reader.read();
          if (r.done) {
            release();
            c.close();
          } else c.enqueue(r.value);
        } catch (e) {
          release();
          c.error(e);
        }
      },
      cancel(reason) {
        release();
        return reader.cancel(reason);
      },
    });
    return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
  };

  /** Initializes in progress per token (not yet in `sessions`), so concurrent ones count against the cap. */
  const opening = new Map<string, number>();

  /** Makes room for one more session of the token by closing its least recently used idle ones; false when all are busy. */
  const makeRoom = (tokenId: string): boolean => {
    const mine = [...sessions.values()].filter((s) => s.principal.tokenId === tokenId);
    const excess = mine.length + (opening.get(tokenId) ?? 0) + 1 - MAX_SESSIONS_PER_TOKEN;
    if (excess <= 0) return true;
    const quiet = mine.filter((s) => s.busy === 0).sort((a, b) => a.lastUsed - b.lastUsed);
    if (quiet.length < excess) return false;
    for (const s of quiet.slice(0, excess)) close(s);
    return true;
  };

  const jsonRpcError = (status: number, message: string, code = INVALID_REQUEST, data?: unknown, headers?: Record<string, string>) =>
    Response.json({ jsonrpc: "2.0", error: { code, message, ...(data === undefined ? {} : { data }) }, id: null }, { status, headers });

  return {
    /** One HTTP request of the transport (POST, GET or DELETE), from an authenticated token. */
    async handle(request: Request, p: TokenPrincipal, client: Session["client"]): Promise<Response> {
      const sid = request.headers.get("mcp-session-id");
      if (sid) {
        const s = sessions.get(sid);
        // Another token's session is "not found": a session id is no credential.
        if (!s || s.principal.tokenId !== p.tokenId) return jsonRpcError(404, "Session not found; initialize a new one");
        s.client = client;
        const release = use(s);
        try {
          return held(await s.transport.handleRequest(request), release);
        } catch (e) {
          release();
          throw e;
        }
      }
      if (request.method !== "POST") return jsonRpcError(400, "No Mcp-Session-Id: initialize a session with a POST first");
      // A new session costs memory until it ends: paid from the budget like a call.
      const decision = d.limiter.hit(`token:${p.tokenId}`, "default");
      if (!decision.allowed) {
        return jsonRpcError(429, `Rate limit of ${decision.limit} requests per minute exceeded; retry in ${decision.reset} s`, RATE_LIMITED, { retry_after_seconds: decision.reset }, { "retry-after": String(decision.reset) });
      }
      if (!makeRoom(p.tokenId)) {
        return jsonRpcError(429, `This API token has ${MAX_SESSIONS_PER_TOKEN} MCP sessions open, each with a request or stream in progress; end one (DELETE /mcp with its Mcp-Session-Id) before opening another`);
      }
      opening.set(p.tokenId, (opening.get(p.tokenId) ?? 0) + 1);
      let res: Response;
      try {
        res = await (await open(p, client)).handleRequest(request);
      } finally {
        const n = opening.get(p.tokenId)! - 1;
        if (n) opening.set(p.tokenId, n);
        else opening.delete(p.tokenId);
      }
      const s = sessions.get(res.headers.get("mcp-session-id") ?? "");
      return s ? held(res, use(s)) : res;
    },

    /** Tools of a workspace changed (settings, integrations): its open sessions are told. */
    toolsChanged(filter: { productId?: string; organizationId?: string }) {
      for (const s of sessions.values()) {
        if ((filter.productId && s.principal.productId === filter.productId) || (filter.organizationId && s.principal.organizationId === filter.organizationId)) {
          void s.server.sendToolListChanged().catch(() => {});
        }
      }
    },

    /** Ends sessions whose token no longer works or that were idle for SESSION_IDLE_MS (also done every 30 s). */
    sweep,

    sessionCount: () => sessions.size,

    stop() {
      clearInterval(sweeper);
      for (const s of sessions.values()) close(s);
    },
  };
}

export type McpGateway = ReturnType<typeof createMcpGateway>;
