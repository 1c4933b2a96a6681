// funes for OpenClaw — a managed hook written by `funes add openclaw` (see HOOK.md). Plain
// JavaScript in a .ts file (the name OpenClaw's loader looks for first): no types to strip.
import { spawn } from "node:child_process";

const HOOK = /* funes: hook */ [];

function text(value) {
  return typeof value === "string" ? value : "";
}

const handler = async (event) => {
  if (!event || HOOK.length === 0) return;
  const ctx = event.context ?? {};
  const entry = ctx.previousSessionEntry ?? ctx.sessionEntry ?? {};
  const payload = JSON.stringify({
    session_id: text(ctx.sessionId) || text(entry.sessionId) || text(event.sessionKey),
    transcript_path: text(entry.sessionFile),
    hook_event_name: `${text(event.type)}:${text(event.action)}`,
    cwd: text(ctx.workspaceDir),
  });
  try {
    const child = spawn("bash", HOOK, { stdio: ["pipe", "ignore", "ignore"], detached: true });
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    child.stdin.end(payload);
    child.unref();
  } catch {
    // best effort: the next reply catches up
  }
};

export default handler;
