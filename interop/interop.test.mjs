// Interop: the official ACP TypeScript SDK's client drives the built dshd
// binary (bin/dshd, embedded demo script) through initialize, session/new, a
// prompt that reads, edits (with a permission request) and runs a command,
// and session/load in a second daemon process. Every message the daemon
// sends is validated against the official schema's per-method $defs.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { client, ndJsonStream } from "@agentclientprotocol/sdk";
import Ajv2020 from "ajv/dist/2020.js";

const here = dirname(fileURLToPath(import.meta.url));
const binary = process.env.DSHD_BIN ?? join(here, "..", "bin", "dshd");
const require = createRequire(import.meta.url);
const schemaPath = process.env.ACP_SCHEMA ?? require.resolve("@agentclientprotocol/sdk/schema/v1/schema.json");
const schema = JSON.parse(readFileSync(schemaPath, "utf8"));

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
ajv.addSchema(schema, "acp");
const validators = new Map();
function check(def, value, what) {
  if (!validators.has(def)) validators.set(def, ajv.getSchema(`acp#/$defs/${def}`));
  const validate = validators.get(def);
  assert.ok(validate, `schema has no $defs/${def}`);
  if (!validate(value)) {
    assert.fail(`${what} does not match $defs/${def}: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(value)}`);
  }
}

// Per-method $defs (DIGEST.md §8.2): results of our requests, params of the
// daemon's requests and notifications.
const resultDefs = {
  initialize: "InitializeResponse",
  "session/new": "NewSessionResponse",
  "session/load": "LoadSessionResponse",
  "session/prompt": "PromptResponse",
  "session/list": "ListSessionsResponse",
};
const paramDefs = {
  "session/update": "SessionNotification",
  "session/request_permission": "RequestPermissionRequest",
  "fs/read_text_file": "ReadTextFileRequest",
  "fs/write_text_file": "WriteTextFileRequest",
  "terminal/create": "CreateTerminalRequest",
  "terminal/output": "TerminalOutputRequest",
  "terminal/wait_for_exit": "WaitForTerminalExitRequest",
  "terminal/kill": "KillTerminalRequest",
  "terminal/release": "ReleaseTerminalRequest",
};

// startDaemon spawns dshd and returns an SDK stream whose inbound side is
// also parsed line by line here, so every raw message can be validated.
function startDaemon(stateDir, cwd) {
  const child = spawn(binary, ["--state-dir", stateDir], { cwd, stdio: ["pipe", "pipe", "inherit"] });
  const sent = new Map(); // our request id -> method
  const received = [];
  let buffered = "";
  child.stdout.on("data", (chunk) => {
    buffered += chunk.toString("utf8");
    let nl;
    while ((nl = buffered.indexOf("\n")) >= 0) {
      const line = buffered.slice(0, nl);
      buffered = buffered.slice(nl + 1);
      if (line.trim() !== "") received.push(JSON.parse(line));
    }
  });
  const input = Readable.toWeb(child.stdout);
  const stdin = Writable.toWeb(child.stdin);
  // Record the method of every request we send, to know each response's $def.
  const encoder = new TextDecoder();
  const output = new WritableStream({
    async write(chunk) {
      for (const line of encoder.decode(chunk).split("\n")) {
        if (line.trim() === "") continue;
        const msg = JSON.parse(line);
        if (msg.method && msg.id !== undefined) sent.set(msg.id, msg.method);
      }
      const writer = stdin.getWriter();
      try { await writer.write(chunk); } finally { writer.releaseLock(); }
    },
    async close() { child.stdin.end(); },
  });
  const validateAll = () => {
    assert.ok(received.length > 0, "the daemon sent nothing");
    for (const msg of received) {
      assert.equal(msg.jsonrpc, "2.0");
      if (msg.method) {
        const def = paramDefs[msg.method];
        assert.ok(def, `unexpected method from the daemon: ${msg.method}`);
        check(def, msg.params, msg.method);
      } else {
        assert.ok(!msg.error, `error response: ${JSON.stringify(msg)}`);
        const method = sent.get(msg.id);
        const def = resultDefs[method];
        if (def) check(def, msg.result, `${method} result`);
      }
    }
    return received;
  };
  const stop = () => new Promise((resolve) => {
    child.once("exit", resolve);
    child.stdin.end();
    setTimeout(() => child.kill("SIGKILL"), 5000).unref();
  });
  return { stream: ndJsonStream(output, input), validateAll, stop };
}

function app(log) {
  return client({ name: "dshd-interop" })
    .onRequest("session/request_permission", ({ params }) => {
      log.permissions.push(params);
      const allow = params.options.find((o) => o.kind === "allow_once");
      return { outcome: { outcome: "selected", optionId: allow.optionId } };
    })
    .onNotification("session/update", ({ params }) => { log.updates.push(params.update); });
}

test("the official TypeScript client drives dshd end to end", { timeout: 120_000 }, async () => {
  const stateDir = mkdtempSync(join(tmpdir(), "dshd-interop-state-"));
  const cwd = mkdtempSync(join(tmpdir(), "dshd-interop-cwd-"));
  writeFileSync(join(cwd, "README.md"), "# interop\n\nA file for the demo to read.\n");

  const first = { permissions: [], updates: [] };
  const daemon = startDaemon(stateDir, cwd);
  let sessionId;
  await app(first).connectWith(daemon.stream, async (ctx) => {
    const init = await ctx.request("initialize", {
      protocolVersion: 1,
      clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
      clientInfo: { name: "interop", version: "1.0.0" },
    });
    assert.equal(init.protocolVersion, 1);
    assert.equal(init.agentCapabilities.loadSession, true);
    const session = await ctx.request("session/new", { cwd, mcpServers: [] });
    sessionId = session.sessionId;
    const response = await ctx.request("session/prompt", {
      sessionId,
      prompt: [{ type: "text", text: "Show me the demo" }],
    });
    assert.equal(response.stopReason, "end_turn");
  });
  const firstMessages = daemon.validateAll();
  await daemon.stop();

  const kinds = first.updates.filter((u) => u.sessionUpdate === "tool_call").map((u) => u.kind);
  for (const kind of ["read", "edit", "execute"]) assert.ok(kinds.includes(kind), `no ${kind} tool call in ${kinds}`);
  assert.ok(first.permissions.length >= 1, "no permission was asked");
  assert.ok(first.updates.some((u) => u.sessionUpdate === "plan"), "no plan update");
  assert.ok(first.updates.some((u) => u.sessionUpdate === "tool_call_update" && u.status === "completed"
    && (u.content ?? []).some((c) => c.type === "diff")), "no completed diff card");
  const finals = first.updates.filter((u) => u.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed"));
  assert.equal(new Set(finals.map((u) => u.toolCallId)).size, kinds.length, "every tool call ends completed or failed");
  assert.ok(firstMessages.length > 0);

  // A second daemon on the same state directory loads the session and
  // replays what the first one showed.
  const second = { permissions: [], updates: [] };
  const again = startDaemon(stateDir, cwd);
  await app(second).connectWith(again.stream, async (ctx) => {
    await ctx.request("initialize", { protocolVersion: 1, clientCapabilities: {} });
    const list = await ctx.request("session/list", { cwd });
    assert.ok(list.sessions.some((s) => s.sessionId === sessionId), "session/list misses the session");
    const loaded = await ctx.request("session/load", { sessionId, cwd, mcpServers: [] });
    assert.equal(typeof loaded, "object", "session/load answers an object");
  });
  again.validateAll();
  await again.stop();
  const shown = (us) => us.filter((u) => u.sessionUpdate !== "available_commands_update").map((u) => u.sessionUpdate);
  const originalShown = shown(first.updates);
  const replayed = shown(second.updates);
  // A live client never sees its own prompt echoed; the replay shows it.
  assert.ok(replayed.includes("user_message_chunk"), "the replay lacks the user's prompt");
  for (const kind of ["agent_message_chunk", "tool_call", "tool_call_update", "plan"]) {
    assert.equal(replayed.filter((k) => k === kind).length, originalShown.filter((k) => k === kind).length,
      `replay of ${kind} differs`);
  }
  assert.equal(second.permissions.length, 0, "a replay asks nothing");
});
