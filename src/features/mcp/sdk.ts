// The MCP SDK's server side, loaded at the first MCP session: the SDK and the Zod and Ajv schemas
// it builds at import cost ~20 MB that an idle Hearth (or one never used from an IDE) should not hold.
import { CallToolRequestSchema, ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";

export { Server } from "@modelcontextprotocol/sdk/server/index.js";
export { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
export { ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";

const KIND: Record<string, string> = { string: "a string", record: "an object", object: "an object", array: "an array", number: "a number", boolean: "a boolean" };

/**
 * tools/call whose malformed params (no name, arguments that are not an object) answer -32602
 * Invalid params with one readable line: the SDK's own schema fails them as -32603 with Zod's
 * dump of issues. Zod lets an exception out of `catch`, and the SDK answers an McpError's code.
 */
export const CallToolRequestSchemaReadable = CallToolRequestSchema.extend({
  params: CallToolRequestSchema.shape.params.catch(({ error, input }) => {
    const reasons = error.issues.map((i) => {
      const field = ["params", ...i.path.map(String)].join(".");
      const given = i.path.reduce<unknown>((v, k) => (v && typeof v === "object" ? (v as Record<PropertyKey, unknown>)[k as PropertyKey] : undefined), input);
      const hint = field === "params.name" ? " (a tool's name, from tools/list)" : field === "params.arguments" ? " (the tool's arguments by name)" : "";
      if (i.code === "invalid_type" && given === undefined) return `${field} is required${hint}`;
      if (i.code === "invalid_type") return `${field} must be ${KIND[i.expected] ?? i.expected}${hint}`;
      return `${field}: ${i.message}`;
    });
    throw new McpError(ErrorCode.InvalidParams, `Invalid params of tools/call: ${reasons.join("; ")}`);
  }),
});
