// The MCP SDK's server side, loaded at the first MCP session: the SDK and the Zod and Ajv schemas
// it builds at import cost ~20 MB that an idle Hearth (or one never used from an IDE) should not hold.
export { Server } from "@modelcontextprotocol/sdk/server/index.js";
export { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
export { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from "@modelcontextprotocol/sdk/types.js";
