// First start on an empty database: the "Default" organization and workspace and their owner.
import type { Db } from "../../platform/db/database";
import type { WorkspacesService } from "../workspaces/service";
import type { AccountsService } from "./service";

export interface BootstrapResult {
  email: string;
  /** Set only when Hearth generated the password; main prints it once. */
  generatedPassword?: string;
}

export async function bootstrapFirstOwner(
  db: Db,
  accounts: AccountsService,
  workspaces: WorkspacesService,
  admin: { email: string; password: string | undefined },
): Promise<BootstrapResult | null> {
  if (accounts.hasUsers()) return null;
  const generated = admin.password === undefined ? randomPassword() : undefined;
  const hash = await accounts.hashPassword(admin.password ?? generated!);
  // One transaction: a crash half-way leaves an empty database, and the next start tries again.
  db.transaction(() => {
    if (accounts.hasUsers()) return;
    const org = accounts.createOrganizationRow("Default");
    const owner = accounts.insertUserRow(org.id, { email: admin.email, name: "Owner", role: "owner" }, hash, true);
    workspaces.createIn(org.id, owner.id, { name: "Default" });
  });
  return { email: admin.email, generatedPassword: generated };
}

/** 24 characters of base64url: 144 random bits. */
export function randomPassword(): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(18))).toString("base64url");
}
