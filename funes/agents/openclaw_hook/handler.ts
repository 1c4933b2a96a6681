// funes for OpenClaw — a managed hook written by `funes add openclaw` (see HOOK.md). Plain
// JavaScript in a .ts file (the name OpenClaw's loader looks for first): no types to strip.
// HOOK is the index hook's argv; PUSH, with a Hub memory bound, the push hook's, run when a
// session ends.
import { spawn } from "node:child_process";

const HOOK = /* funes: hook */ [];
const PUSH = /* funes: push */ [];
const PUSH_EVENT = "session:end";

function detached(argv, payload) {
  try {
    const child = spawn("bash", argv, { stdio: ["pipe", "ignore", "ignore"], detached: true });
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    child.stdin.end(payload);
    child.unref();
  } catch {
    // best effort: the next reply catches up
  }
}

function text(value) {
  return typeof value === "string" ? value : "";
}

const handler = async (event) => {
  if (!event || HOOK.length === 0) return;
  const ctx = event.context ?? {};
  const entry = ctx.previousSessionEntry ?? ctx.sessionEntry ?? {};
  const name = `${text(event.type)}:${text(event.action)}`;
  const payload = JSON.stringify({
    session_id: text(ctx.sessionId) || text(entry.sessionId) || text(event.sessionKey),
    transcript_path: text(entry.sessionFile),
    hook_event_name: name,
    cwd: text(ctx.workspaceDir),
  });
  detached(HOOK, payload);
  if (PUSH.length > 0 && name === PUSH_EVENT) detached(PUSH, payload);
};

export default handler;
