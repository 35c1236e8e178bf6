// A generic REST service: its base URL, how it authenticates, and a list of operations, each of
// which becomes a tool ({path parameters and query} in, the JSON answer out).
import { t, type TSchema } from "elysia";
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
      const c = ctx.credentials;
      const headers: Record<string, string> = c.bearer_token ? { authorization: `Bearer ${c.bearer_token}` } : c.username ? { authorization: `Basic ${Buffer.from(`${c.username}:${c.password ?? ""}`).toString("base64")}` } : c.header_name ? { [String(c.header_name)]: String(c.header_value ?? "") } : {};
      const { data } = await apiCall(String(ctx.config.name ?? "The service"), `${baseUrl(ctx.config, "")}${path}${qs}`, { method: op.method, headers, body: args.body, signal: ctx.signal, allow: ctx.allow });
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
};
