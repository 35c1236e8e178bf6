// GitLab (self-managed or gitlab.com): issues of one project through REST v4, pages by X-Next-Page.
import { t } from "elysia";
import { apiCall, baseUrl, MAX_PAGES, type Connector } from "./connector";

const issueView = (i: any) => ({ number: i.iid, title: i.title, state: i.state, url: i.web_url, author: i.author?.username, labels: i.labels ?? [], created_at: i.created_at });

export const gitlab: Connector = {
  type: "gitlab",
  description: "GitLab on your network (or gitlab.com): issues of one project",
  config: t.Object({ base_url: t.Optional(t.String({ description: "Server root, e.g. https://gitlab.internal (default https://gitlab.com)" })), project: t.String({ minLength: 1, maxLength: 300, description: "Project id or path (group/name)" }) }, { additionalProperties: false }),
  credentials: t.Object({ token: t.String({ minLength: 1, maxLength: 1000, description: "Personal, project or group access token" }) }, { additionalProperties: false }),
  async check(ctx) {
    const { data } = await apiCall("GitLab", `${baseUrl(ctx.config, "https://gitlab.com")}/api/v4/projects/${encodeURIComponent(String(ctx.config.project))}`, { headers: { "private-token": String(ctx.credentials.token) }, signal: ctx.signal, allow: ctx.allow });
    return `GitLab project ${(data as { path_with_namespace?: string }).path_with_namespace ?? ctx.config.project} is reachable with these credentials`;
  },
  tools: [
    {
      name: "list_issues",
      description: "List issues of the GitLab project (opened by default), newest first.",
      input: t.Object({ state: t.Optional(t.UnionEnum(["opened", "closed", "all"], { default: "opened" })), limit: t.Optional(t.Integer({ minimum: 1, maximum: 200, default: 30 })) }, { additionalProperties: false }),
      async run(args, ctx) {
        const limit = args.limit ?? 30;
        const api = `${baseUrl(ctx.config, "https://gitlab.com")}/api/v4/projects/${encodeURIComponent(String(ctx.config.project))}/issues`;
        const issues: any[] = [];
        let page: string | null = "1";
        for (let pages = 0; page && issues.length < limit && pages < MAX_PAGES; pages++) {
          const state = args.state && args.state !== "all" ? `&state=${args.state}` : args.state === "all" ? "" : "&state=opened";
          const { data, headers } = await apiCall("GitLab", `${api}?per_page=${Math.min(limit, 100)}&page=${page}${state}`, { headers: { "private-token": String(ctx.credentials.token) }, signal: ctx.signal, allow: ctx.allow });
          issues.push(...(data as any[]));
          // An empty page ends the list whatever X-Next-Page says.
          page = (data as any[]).length > 0 ? headers.get("x-next-page") || null : null;
        }
        const list = issues.slice(0, limit).map(issueView);
        return { text: list.length ? list.map((i) => `#${i.number} [${i.state}] ${i.title} (${i.url})`).join("\n") : "No issues.", data: { issues: list } };
      },
    },
    {
      name: "create_issue",
      description: "Open an issue in the GitLab project.",
      input: t.Object({ title: t.String({ minLength: 1, maxLength: 255 }), body: t.Optional(t.String({ maxLength: 100_000 })) }, { additionalProperties: false }),
      async run(args, ctx) {
        const api = `${baseUrl(ctx.config, "https://gitlab.com")}/api/v4/projects/${encodeURIComponent(String(ctx.config.project))}/issues`;
        const { data } = await apiCall("GitLab", api, { method: "POST", headers: { "private-token": String(ctx.credentials.token) }, body: { title: args.title, description: args.body ?? "" }, signal: ctx.signal, allow: ctx.allow });
        const issue = issueView(data);
        return { text: `Opened #${issue.number}: ${issue.title} (${issue.url})`, data: issue };
      },
    },
  ],
};
