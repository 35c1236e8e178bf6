// Jira Data Center / Server (REST v2, personal access token) or Jira Cloud (email + API token):
// search with JQL (paged by startAt), create tickets, comment.
import { t } from "elysia";
import { apiCall, baseUrl, MAX_PAGES, type CallContext, type Connector } from "./connector";

const auth = (c: Record<string, unknown>): Record<string, string> =>
  c.email ? { authorization: `Basic ${Buffer.from(`${c.email}:${c.api_token}`).toString("base64")}` } : { authorization: `Bearer ${c.token}` };
const call = (ctx: CallContext, path: string, init: { method?: string; body?: unknown } = {}) =>
  apiCall("Jira", `${baseUrl(ctx.config, "https://jira.local")}/rest/api/2${path}`, { ...init, headers: auth(ctx.credentials), signal: ctx.signal, allow: ctx.allow });
const ticketView = (base: string, i: any) => ({ key: i.key, summary: i.fields?.summary, status: i.fields?.status?.name, assignee: i.fields?.assignee?.displayName ?? null, url: `${base}/browse/${i.key}` });

export const jira: Connector = {
  type: "jira",
  description: "Jira Data Center / Server on your network (or Jira Cloud): search, create and comment on tickets",
  config: t.Object({ base_url: t.String({ minLength: 1, description: "e.g. https://jira.internal" }), project_key: t.Optional(t.String({ minLength: 1, maxLength: 32, description: "Default project for new tickets" })) }, { additionalProperties: false }),
  credentials: t.Union([
    t.Object({ token: t.String({ minLength: 1, maxLength: 1000, description: "Personal access token (Data Center)" }) }, { additionalProperties: false }),
    t.Object({ email: t.String({ minLength: 3 }), api_token: t.String({ minLength: 1, maxLength: 1000 }) }, { additionalProperties: false }),
  ]),
  async check(ctx) {
    const { data } = await call(ctx, "/myself");
    return `Jira answers as ${(data as { displayName?: string; name?: string }).displayName ?? (data as { name?: string }).name ?? "this user"}`;
  },
  tools: [
    {
      name: "search_tickets",
      description: 'Search Jira tickets with JQL, e.g. "project = OPS AND status = Open ORDER BY created DESC".',
      input: t.Object({ jql: t.String({ minLength: 1, maxLength: 2000 }), limit: t.Optional(t.Integer({ minimum: 1, maximum: 200, default: 20 })) }, { additionalProperties: false }),
      async run(args, ctx) {
        const limit = args.limit ?? 20;
        const tickets: any[] = [];
        for (let startAt = 0, pages = 0; tickets.length < limit && pages < MAX_PAGES; pages++) {
          const { data } = await call(ctx, `/search?jql=${encodeURIComponent(args.jql)}&startAt=${startAt}&maxResults=${Math.min(50, limit - tickets.length)}&fields=summary,status,assignee`);
          const page = data as { issues: any[]; total: number };
          tickets.push(...page.issues);
          startAt += page.issues.length;
          if (page.issues.length === 0 || startAt >= page.total) break;
        }
        const base = baseUrl(ctx.config, "https://jira.local");
        const list = tickets.slice(0, limit).map((i) => ticketView(base, i));
        return { text: list.map((i) => `${i.key} [${i.status}] ${i.summary}`).join("\n") || "No tickets match.", data: { tickets: list } };
      },
    },
    {
      name: "create_ticket",
      description: "Create a Jira ticket (in the integration's default project unless project_key is given).",
      input: t.Object({ summary: t.String({ minLength: 1, maxLength: 255 }), description: t.Optional(t.String({ maxLength: 30_000 })), project_key: t.Optional(t.String({ minLength: 1, maxLength: 32 })), issue_type: t.Optional(t.String({ default: "Task" })) }, { additionalProperties: false }),
      async run(args, ctx) {
        const project = args.project_key ?? ctx.config.project_key;
        if (!project) throw new Error("no project_key given and the integration has no default project_key");
        const { data } = await call(ctx, "/issue", { method: "POST", body: { fields: { project: { key: project }, summary: args.summary, description: args.description ?? "", issuetype: { name: args.issue_type ?? "Task" } } } });
        const key = (data as { key: string }).key;
        const url = `${baseUrl(ctx.config, "https://jira.local")}/browse/${key}`;
        return { text: `Created ${key} (${url})`, data: { key, url } };
      },
    },
    {
      name: "comment_ticket",
      description: "Add a comment to a Jira ticket.",
      input: t.Object({ key: t.String({ minLength: 1, maxLength: 64 }), body: t.String({ minLength: 1, maxLength: 30_000 }) }, { additionalProperties: false }),
      async run(args, ctx) {
        const { data } = await call(ctx, `/issue/${encodeURIComponent(args.key)}/comment`, { method: "POST", body: { body: args.body } });
        return { text: `Commented on ${args.key}`, data: { id: (data as { id: string }).id } };
      },
    },
  ],
};
