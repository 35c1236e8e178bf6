// A small history-API router: the path is a signal; links and navigate() push, Back pops.
import { signal } from "@preact/signals";

export const path = signal(location.pathname);

export function navigate(to: string, replace = false) {
  if (to === location.pathname + location.search) return;
  if (replace) history.replaceState(null, "", to);
  else history.pushState(null, "", to);
  path.value = location.pathname;
}

addEventListener("popstate", () => {
  path.value = location.pathname;
});

/** onClick for same-origin <a href>: navigates without reloading (modified clicks open a tab). */
export function follow(e: MouseEvent) {
  const a = (e.currentTarget as HTMLAnchorElement) ?? null;
  if (!a || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  e.preventDefault();
  navigate(a.getAttribute("href")!);
}
