// Health: what /health reports, refreshed every 10 s.
import { useEffect } from "preact/hooks";
import { Badge, ErrorNote, Section, Spinner, useLoad } from "../ui/kit";

interface Health {
  status: string;
  version: string;
  checks: Record<string, { status: string; detail?: string; reason?: string }>;
}

export function Health() {
  const health = useLoad(async () => (await fetch("/health", { cache: "no-store" })).json() as Promise<Health>, []);
  useEffect(() => {
    const timer = setInterval(health.reload, 10_000);
    return () => clearInterval(timer);
  }, []);
  if (health.loading && !health.data) return <Spinner />;
  if (health.error) return <ErrorNote error={health.error} />;
  const h = health.data!;
  return (
    <Section title={`Hearth ${h.version}`} actions={<Badge value={h.status} />}>
      <div class="scroll">
      <table class="table">
        <thead>
          <tr>
            <th>Part</th>
            <th>Status</th>
            <th>Detail</th>
          </tr>
        </thead>
        <tbody>
          {Object.entries(h.checks).map(([name, c]) => (
            <tr>
              <td>{name}</td>
              <td>
                <Badge value={c.status} />
              </td>
              <td>{c.reason ?? c.detail ?? ""}</td>
            </tr>
          ))}
        </tbody>
      </table>
      </div>
    </Section>
  );
}
