// funes for OpenCode — written by `funes add opencode` into OpenCode's global plugin folder;
// `funes remove opencode` deletes it.
//
// When a session goes idle (the agent finished its turn) the session's id is handed to the
// funes hook script (the one Claude Code, Codex and pi run), which returns at once and indexes
// OpenCode's database in a detached worker, logging to funes' hooks.log. OpenCode never waits
// on funes, and nothing funes does can fail a session.
import { spawn } from "node:child_process";

const HOOK = /* funes: hook */ [];

export const FunesIndex = async ({ directory }) => ({
  event: async ({ event }) => {
    if (!event || event.type !== "session.idle" || HOOK.length === 0) return;
    const payload = JSON.stringify({
      session_id: event.properties?.sessionID ?? "",
      hook_event_name: "session.idle",
      cwd: directory ?? process.cwd(),
    });
    try {
      const child = spawn("bash", HOOK, { stdio: ["pipe", "ignore", "ignore"], detached: true });
      child.on("error", () => {});
      child.stdin.on("error", () => {});
      child.stdin.end(payload);
      child.unref();
    } catch {
      // best effort: the next idle session catches up
    }
  },
});
