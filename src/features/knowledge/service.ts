// Knowledge bases and their files as one service (bases.ts, files.ts): what routes, tools, search
// and the other features call; every call checked against the caller's workspace.
import type { Clock } from "../../platform/clock";
import type { Db } from "../../platform/db/database";
import type { JobQueue } from "../../platform/jobs/queue";
import type { WorkspacesService } from "../workspaces/service";
import { createKnowledgeBases } from "./bases";
import { createChunkDrain } from "./drain";
import type { ContentStore } from "./content";
import { createKnowledgeFiles } from "./files";
import type { knowledgeBases, knowledgeFiles } from "./table";

export type KnowledgeBaseRow = typeof knowledgeBases.$inferSelect;
/** A file's record; where its bytes are kept (content_id) stays inside this service and ingestion. */
export type KnowledgeFileRow = Omit<typeof knowledgeFiles.$inferSelect, "contentId">;

export interface EmbeddingIdentity {
  model: string;
  dim: number;
}

export interface KnowledgeDeps {
  db: Db;
  clock: Clock;
  workspaces: WorkspacesService;
  jobs: JobQueue;
  /** Where files' bytes are kept (content.ts). */
  content: ContentStore;
  embedding: EmbeddingIdentity;
  /**
   * Makes commits so far durable off the event loop (platform/db/durability.ts): an upload or a
   * deletion answers once it is. Without it those are full commits.
   */
  sync?: () => Promise<void>;
}

export function createKnowledgeService(deps: KnowledgeDeps) {
  const drain = createChunkDrain(deps.db.$client);
  deps.workspaces.onRemoving((productId) => drain.workspace(productId));
  const bases = createKnowledgeBases(deps, drain);
  return { ...bases, ...createKnowledgeFiles(deps, bases, drain) };
}

export type KnowledgeService = ReturnType<typeof createKnowledgeService>;
