// funes for pi — installed by `funes add pi` into ~/.funes/integrations/pi (`pi install <dir>`).
//
// pi has no MCP client, so this extension is one: it spawns `funes mcp` once, keeps it warm
// (unref'd, so an idle server never holds pi open), and forwards the `recall` and `get` tools
// over newline-delimited JSON-RPC. It also indexes each finished agent run: on `agent_end` it
// hands the session file to the funes hook script (the same one Claude Code and Codex run),
// which returns at once and indexes in a detached worker — pi itself never waits on funes.
//
// Configuration, beside this file (written by `funes add pi|omp`): `agent`, `funes-bin` (the funes
// executable; $FUNES_BIN overrides), `memory` (the memory to use; $FUNES_MEMORY overrides; absent
// = the local default), and scripts/funes-index.sh. With a Hub memory bound, `push-memory` names
// it and scripts/funes-push.sh publishes it on `session_shutdown` (detached, like indexing); the
// index hook then writes the local memory, which that push publishes.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const HERE = dirname(fileURLToPath(import.meta.url));
const PROTOCOL_VERSION = "2024-11-05";
const CALL_TIMEOUT_MS = 120_000;
const INDEX_SCRIPT = join(HERE, "scripts", "funes-index.sh");
const PUSH_SCRIPT = join(HERE, "scripts", "funes-push.sh");

function readBeside(name: string): string {
  try {
    return readFileSync(join(HERE, name), "utf8").trim();
  } catch {
    return "";
  }
}

const FUNES_BIN = (process.env.FUNES_BIN || readBeside("funes-bin") || "funes").trim();
// The agent this extension serves (`pi`, or `omp` for Oh My Pi, which loads pi's extensions):
// the name the hook logs under and whose sessions it falls back to.
const AGENT = readBeside("agent") || "pi";
const MEMORY = (process.env.FUNES_MEMORY || readBeside("memory")).trim();
const PUSH_MEMORY = readBeside("push-memory");
const INDEX_MEMORY = PUSH_MEMORY ? "" : MEMORY;

type Pending = {
  resolve: (value: any) => void;
  reject: (err: Error) => void;
  timer: ReturnType<typeof setTimeout>;
};

// A minimal MCP stdio client for one `funes mcp` child: stdout carries JSON-RPC, stderr logs.
class FunesMcp {
  private child?: ChildProcessWithoutNullStreams;
  private ready?: Promise<void>;
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private buffer = "";

  private start(): Promise<void> {
    if (this.child && this.ready) return this.ready;
    const args = MEMORY ? ["mcp", "--memory", MEMORY] : ["mcp"];
    const child = spawn(FUNES_BIN, args, { stdio: ["pipe", "pipe", "pipe"] });
    this.child = child;
    child.unref();
    (child.stdin as any).unref?.();
    (child.stdout as any).unref?.();
    (child.stderr as any).unref?.();
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => this.receive(chunk));
    child.stderr.resume();
    const fail = (err: Error) => {
      if (this.child !== child) return;
      this.child = undefined;
      this.ready = undefined;
      for (const p of this.pending.values()) {
        clearTimeout(p.timer);
        p.reject(err);
      }
      this.pending.clear();
    };
    child.on("exit", (code) => fail(new Error(`funes mcp exited (code ${code})`)));
    child.on("error", (e) => fail(new Error(`cannot start ${FUNES_BIN}: ${e.message}`)));
    const ready = (async () => {
      try {
        await this.request("initialize", {
          protocolVersion: PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: "pi-funes-bridge", version: "0.1.0" },
        });
        this.send({ jsonrpc: "2.0", method: "notifications/initialized", params: {} });
      } catch (err) {
        if (this.child === child) {
          child.kill();
          this.child = undefined;
          this.ready = undefined;
        }
        throw err;
      }
    })();
    this.ready = ready;
    return ready;
  }

  private receive(chunk: string) {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf("\n")) >= 0) {
      const line = this.buffer.slice(0, nl).trim();
      this.buffer = this.buffer.slice(nl + 1);
      if (!line) continue;
      let msg: any;
      try {
        msg = JSON.parse(line);
      } catch {
        continue;
      }
      const p = typeof msg.id === "number" ? this.pending.get(msg.id) : undefined;
      if (!p) continue;
      this.pending.delete(msg.id);
      clearTimeout(p.timer);
      if (msg.error) p.reject(new Error(msg.error.message || JSON.stringify(msg.error)));
      else p.resolve(msg.result);
    }
  }

  private send(message: unknown) {
    if (!this.child) throw new Error("funes mcp is not running");
    this.child.stdin.write(JSON.stringify(message) + "\n");
  }

  private request(method: string, params: unknown, signal?: AbortSignal): Promise<any> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const settle = (err: Error) => {
        const p = this.pending.get(id);
        if (!p) return;
        this.pending.delete(id);
        clearTimeout(p.timer);
        reject(err);
      };
      const timer = setTimeout(() => settle(new Error(`${method} timed out`)), CALL_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      signal?.addEventListener("abort", () => settle(new Error(`${method} cancelled`)), { once: true });
      try {
        this.send({ jsonrpc: "2.0", id, method, params });
      } catch (err: any) {
        settle(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  async call(name: string, args: Record<string, unknown>, signal?: AbortSignal): Promise<string> {
    await this.start();
    const result = await this.request("tools/call", { name, arguments: args }, signal);
    const parts: any[] = result?.content ?? [];
    return parts
      .filter((c) => c?.type === "text")
      .map((c) => c.text)
      .join("\n");
  }
}

const funes = new FunesMcp();

const TOOLS = [
  {
    name: "recall",
    label: "funes recall",
    description:
      "Search the user's past coding-agent sessions (decisions, rationale, context) and return " +
      "ranked passages with provenance and neighbouring turns. Use it when the user refers to " +
      "earlier work, before re-deriving how something behaves, and before asserting that " +
      "something was never built. Each hit ends with a `→ get <session_id> <turn_uuid>` line.",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", description: "what to look for" },
        k: { type: "integer", description: "number of passages (default 8)" },
        memory: { type: "string", description: "another memory to search" },
      },
      required: ["query"],
    },
  },
  {
    name: "get",
    label: "funes get",
    description:
      "Fetch a turn from a past session and the turns around it, reassembled; pass the ids " +
      "(and memory) from a recall hit's `→ get` line.",
    parameters: {
      type: "object",
      properties: {
        session_id: { type: "string" },
        turn_uuid: { type: "string" },
        window: { type: "integer", description: "turns on each side (default 3)" },
        memory: { type: "string" },
      },
      required: ["session_id", "turn_uuid"],
    },
  },
];

// Hand the session file to the hook script and forget it: the script detaches its worker,
// and no failure of indexing is worth disturbing the session with.
function indexSession(ctx: any, reason: string) {
  const file = ctx?.sessionManager?.getSessionFile?.();
  if (!file || !existsSync(INDEX_SCRIPT)) return;
  const payload = JSON.stringify({
    session_id: ctx?.sessionManager?.getSessionId?.() ?? "",
    transcript_path: file,
    cwd: ctx?.cwd ?? process.cwd(),
    hook_event_name: reason,
  });
  const args = [INDEX_SCRIPT, AGENT, "--funes", FUNES_BIN];
  if (INDEX_MEMORY) args.push("--memory", INDEX_MEMORY);
  runDetached(args, payload);
}

// Publish the bound Hub memory (`funes push <memory> --yes` in a detached worker).
function pushMemory(ctx: any, reason: string) {
  if (!PUSH_MEMORY || !existsSync(PUSH_SCRIPT)) return;
  const payload = JSON.stringify({
    session_id: ctx?.sessionManager?.getSessionId?.() ?? "",
    hook_event_name: reason,
  });
  runDetached([PUSH_SCRIPT, AGENT, "--funes", FUNES_BIN, "--memory", PUSH_MEMORY], payload);
}

function runDetached(args: string[], payload: string) {
  try {
    const child = spawn("bash", args, { stdio: ["pipe", "ignore", "ignore"], detached: true });
    child.on("error", () => {});
    child.stdin.on("error", () => {});
    child.stdin.end(payload);
    child.unref();
  } catch {
    // best effort: the next turn (or session) catches up
  }
}

export default function (pi: any) {
  for (const tool of TOOLS) {
    pi.registerTool({
      ...tool,
      async execute(_id: string, params: Record<string, unknown>, signal?: AbortSignal) {
        let text: string;
        try {
          text = await funes.call(tool.name, params, signal);
        } catch (e: any) {
          text = `${tool.name} error: ${e?.message || String(e)}`;
        }
        return { content: [{ type: "text", text }], details: {} };
      },
    });
  }

  pi.on("agent_end", async (_event: any, ctx: any) => indexSession(ctx, "agent_end"));
  pi.on("session_shutdown", async (_event: any, ctx: any) => {
    indexSession(ctx, "session_shutdown");
    pushMemory(ctx, "session_shutdown");
  });
}
