// A generic REST service: its base URL, how it authenticates, and a list of operations, each of
// which becomes a tool ({path parameters and query} in, the JSON answer out).
import { t, type TSchema } from "elysia";
import { safeFetch } from "../../../platform/net/safe-fetch";
import { apiCall, baseUrl, type Connector, type ConnectorTool } from "./connector";

export interface HttpOperation {
  name: string;
  description: string;
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** e.g. "/tickets/{id}": {id} is a required string argument. */
  path: string;
}

const Operation = t.Object(
  {
    name: t.String({ pattern: "^[a-z][a-z0-9_]{1,63}$", description: "The tool's name" }),
    description: t.String({ minLength: 1, maxLength: 1000 }),
    method: t.UnionEnum(["GET", "POST", "PUT", "PATCH", "DELETE"]),
    path: t.String({ pattern: "^/", maxLength: 1000 }),
  },
  { additionalProperties: false },
);

const serviceName = (config: Record<string, unknown>) => String(config.name ?? "The service");

/** The request headers of the configured authentication: a bearer token, Basic, or a header of its own. */
function authHeaders(c: Record<string, unknown>): Record<string, string> {
  if (c.bearer_token) return { authorization: `Bearer ${c.bearer_token}` };
  if (c.username) return { authorization: `Basic ${Buffer.from(`${c.username}:${c.password ?? ""}`).toString("base64")}` };
  if (c.header_name) return { [String(c.header_name)]: String(c.header_value ?? "") };
  return {};
}

const paramsOf = (path: string) => [...path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1]!);

/** The tool of one operation: path parameters required, `query` and (for writes) `body` optional. */
function operationTool(op: HttpOperation): ConnectorTool {
  const props: Record<string, TSchema> = Object.fromEntries(paramsOf(op.path).map((p) => [p, t.String({ minLength: 1, maxLength: 1000 })]));
  props.query = t.Optional(t.Record(t.String(), t.String(), { description: "Query string parameters" }));
  if (op.method !== "GET" && op.method !== "DELETE") props.body = t.Optional(t.Record(t.String(), t.Unknown(), { description: "JSON body" }));
  return {
    name: op.name,
    description: op.description,
    input: t.Object(props, { additionalProperties: false }),
    async run(args, ctx) {
      const path = op.path.replace(/\{([A-Za-z0-9_]+)\}/g, (_, p: string) => encodeURIComponent(String(args[p])));
      const qs = args.query ? `?${new URLSearchParams(args.query as Record<string, string>)}` : "";
      const { data } = await apiCall(serviceName(ctx.config), `${baseUrl(ctx.config, "")}${path}${qs}`, { method: op.method, headers: authHeaders(ctx.credentials), body: args.body, signal: ctx.signal, allow: ctx.allow });
      return { text: typeof data === "string" ? data.slice(0, 8000) : JSON.stringify(data).slice(0, 8000), data: data && typeof data === "object" && !Array.isArray(data) ? data : { result: data } };
    },
  };
}

export const httpService: Connector = {
  type: "http",
  description: "Any REST service on your network: its base URL, authentication, and the operations it offers as tools",
  config: t.Object({ base_url: t.String({ minLength: 1 }), name: t.Optional(t.String({ maxLength: 100 })), operations: t.Array(Operation, { minItems: 1, maxItems: 50 }) }, { additionalProperties: false }),
  credentials: t.Object(
    {
      bearer_token: t.Optional(t.String({ maxLength: 4000 })),
      username: t.Optional(t.String({ maxLength: 200 })),
      password: t.Optional(t.String({ maxLength: 1000 })),
      header_name: t.Optional(t.String({ maxLength: 100 })),
      header_value: t.Optional(t.String({ maxLength: 4000 })),
    },
    { additionalProperties: false },
  ),
  tools: [],
  toolsFor: (config) => ((config.operations as HttpOperation[] | undefined) ?? []).map(operationTool),
  // No operation is called (one may change something): the base URL, with the credentials, shows
  // that the service is reachable and whether it refuses them.
  async check(ctx) {
    const url = baseUrl(ctx.config, "");
    const res = await safeFetch(url, { headers: { accept: "application/json", ...authHeaders(ctx.credentials) }, signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(30_000)]), allow: ctx.allow, maxBytes: 64 * 1024 });
    const name = serviceName(ctx.config);
    if (res.status === 401 || res.status === 403) throw new Error(`${name} refused these credentials (HTTP ${res.status} at ${url})`);
    if (res.status >= 500) throw new Error(`${name} answered HTTP ${res.status} at ${url}`);
    return `${name} at ${new URL(url).host} answered HTTP ${res.status} at its base URL with these credentials (no operation was called)`;
  },
};
