// A real Effect RPC client (effect 4.1.0) that drives a T3-compatible
// orchestration server the way the live verifier does: HTTP token exchange,
// project creation and WebSocket ticket with fetch, then Effect's own
// RpcClient over a WebSocket with the json serialization. wireproof's Go test
// (interop/interop_test.go) runs it against the fixture server, directly and
// through the recording proxy, to prove the fixture speaks Effect RPC as the
// real server does.
//
// Usage: node client.mjs BASE_URL BOOTSTRAP_TOKEN GATE_URL SECRET [THREAD_ID]
// or the same through WIREPROOF_BASE_URL, WIREPROOF_BOOTSTRAP_TOKEN,
// WIREPROOF_GATE_URL, WIREPROOF_SECRET and WIREPROOF_THREAD_ID.
//
// On success it prints one JSON line {"threadId","runs":[statuses],"ack":true}
// and exits 0. Any failed expectation exits 1 with the reason on stderr.

import * as NodeCrypto from "node:crypto";
import * as NodeOS from "node:os";
import * as Cause from "effect/Cause";
import * as Effect from "effect/Effect";
import * as Exit from "effect/Exit";
import * as Layer from "effect/Layer";
import * as Schema from "effect/Schema";
import * as Stream from "effect/Stream";
import { Socket } from "effect/socket";
import { Rpc, RpcClient, RpcGroup, RpcSerialization } from "effect/rpc";
import * as NodeWS from "@effect/platform-node/NodeWS";

const [argBase, argToken, argGate, argSecret, argThread] = process.argv.slice(2);
const baseURL = argBase ?? process.env.WIREPROOF_BASE_URL;
const bootstrapToken = argToken ?? process.env.WIREPROOF_BOOTSTRAP_TOKEN;
const gateURL = argGate ?? process.env.WIREPROOF_GATE_URL;
const secret = argSecret ?? process.env.WIREPROOF_SECRET;
const threadId = argThread ?? process.env.WIREPROOF_THREAD_ID ?? NodeCrypto.randomUUID();
for (const [name, value] of Object.entries({ baseURL, bootstrapToken, gateURL, secret })) {
  if (!value) {
    console.error(`client.mjs: missing ${name} (usage: node client.mjs BASE_URL BOOTSTRAP_TOKEN GATE_URL SECRET [THREAD_ID])`);
    process.exit(2);
  }
}
const origin = baseURL.replace(/\/+$/, "");
// verify's defaults (verify.DefaultProvider, verify.DefaultModel).
const provider = "claudeAgent";
const model = "claude-sonnet-4-6";

// The prompt of the idle scenario, word for word as verify.Prompt writes it.
const prompt = (gate, provider, model) =>
  `This is a live background-delivery verification. Use T3 delegate_task with mode=async to create exactly one child using provider ${provider}, model ${model}. Give the child this task: Run curl --fail --silent ${gate} with a terminal tool timeout of 600000 milliseconds and return exactly the response as your final answer. Do not read other files. Do not retry failures. The background HTTP request will wait until you end your initial turn. Immediately end your turn with exactly PARENT_RELEASED. Do not wait or poll, and do not call any more tools in this turn. When the completion notification arrives, use task_status to read the child result and reply with exactly ACK: followed by that result with no space after the colon. Do not guess the result or run the background command yourself.`;

// --- The RPC contract, as much of it as this client reads. ---

const Projection = Schema.Struct({
  runs: Schema.Array(Schema.Struct({ id: Schema.String, status: Schema.String })),
  messages: Schema.Array(Schema.Struct({ role: Schema.String, text: Schema.String })),
});

const ThreadError = (tag) =>
  Schema.TaggedStruct(tag, { threadId: Schema.String, message: Schema.String });

const LaunchThread = Rpc.make("orchestration.launchThread", {
  payload: {
    commandId: Schema.String,
    threadId: Schema.String,
    projectId: Schema.String,
    title: Schema.String,
    modelSelection: Schema.Struct({ instanceId: Schema.String, model: Schema.String }),
    runtimeMode: Schema.Literal("full-access"),
    interactionMode: Schema.Literal("default"),
    workspaceStrategy: Schema.Struct({ type: Schema.Literal("root") }),
    initialMessage: Schema.Struct({ text: Schema.String, attachments: Schema.Array(Schema.Unknown) }),
  },
  success: Schema.Struct({ threadId: Schema.String, projection: Projection, resumed: Schema.Boolean }),
  error: ThreadError("OrchestrationV2LaunchThreadError"),
});

const SubscribeThread = Rpc.make("orchestration.subscribeThread", {
  payload: { threadId: Schema.String },
  success: Schema.Unknown,
  error: ThreadError("OrchestrationV2SubscribeThreadError"),
  stream: true,
});

const GetThreadProjection = Rpc.make("orchestration.getThreadProjection", {
  payload: { threadId: Schema.String },
  success: Projection,
  error: ThreadError("OrchestrationV2GetThreadProjectionError"),
});

const Orchestration = RpcGroup.make(LaunchThread, SubscribeThread, GetThreadProjection);

// Calls the server must refuse with a Die: a method it does not have, and a
// known method whose payload does not decode (threadId must be a string).
const Probes = RpcGroup.make(
  Rpc.make("orchestration.noSuchMethod", { payload: { threadId: Schema.String }, success: Schema.Unknown }),
  Rpc.make("orchestration.getThreadProjection", { payload: { threadId: Schema.Number }, success: Schema.Unknown }),
);

// --- HTTP setup, as the verifier does it. ---

const postJSON = async (path, headers, body) => {
  const res = await fetch(origin + path, { method: "POST", headers, body });
  const text = await res.text();
  if (!res.ok) throw new Error(`POST ${path}: HTTP ${res.status}: ${text}`);
  return JSON.parse(text);
};

const setup = async () => {
  const token = await postJSON("/oauth/token", undefined, new URLSearchParams({
    grant_type: "urn:ietf:params:oauth:grant-type:token-exchange",
    subject_token: bootstrapToken,
    subject_token_type: "urn:t3:params:oauth:token-type:environment-bootstrap",
    requested_token_type: "urn:ietf:params:oauth:token-type:access_token",
  }));
  if (typeof token.access_token !== "string") throw new Error(`/oauth/token: no access_token in ${JSON.stringify(token)}`);
  const headers = {
    Authorization: `Bearer ${token.access_token}`,
    "Content-Type": "application/json",
    "x-t3-orchestration-protocol": "2",
  };
  const projectId = NodeCrypto.randomUUID();
  await postJSON("/api/projects/mutate", headers, JSON.stringify({
    type: "project.create",
    commandId: NodeCrypto.randomUUID(),
    projectId,
    title: "Effect interoperability",
    workspaceRoot: NodeOS.tmpdir(),
  }));
  const ticket = await postJSON("/api/auth/websocket-ticket", headers, undefined);
  if (typeof ticket.ticket !== "string") throw new Error(`/api/auth/websocket-ticket: no ticket in ${JSON.stringify(ticket)}`);
  return { projectId, ticket: ticket.ticket };
};

const fail = (message) => Effect.die(new Error(message));

const terminal = new Set(["completed", "failed", "cancelled", "interrupted", "rolled_back"]);

// expectDie runs a call that the server must answer with a Die, and fails
// unless it did.
const expectDie = (what, call) =>
  Effect.gen(function* () {
    const exit = yield* Effect.exit(call);
    if (Exit.isSuccess(exit)) return yield* fail(`${what}: succeeded, want a Die`);
    if (!Cause.hasDies(exit.cause)) return yield* fail(`${what}: failed without a Die: ${Cause.pretty(exit.cause)}`);
  });

const program = ({ projectId }) =>
  Effect.gen(function* () {
    const client = yield* RpcClient.make(Orchestration);
    const probes = yield* RpcClient.make(Probes);

    yield* expectDie("an unknown method", probes["orchestration.noSuchMethod"]({ threadId }));
    yield* expectDie("a payload that does not decode", probes["orchestration.getThreadProjection"]({ threadId: 42 }));

    const unknown = NodeCrypto.randomUUID();
    const missing = yield* Effect.flip(client["orchestration.getThreadProjection"]({ threadId: unknown }));
    if (missing._tag !== "OrchestrationV2GetThreadProjectionError" || missing.threadId !== unknown) {
      return yield* fail(`getThreadProjection of an unknown thread: got ${JSON.stringify(missing)}, want OrchestrationV2GetThreadProjectionError`);
    }

    const launched = yield* client["orchestration.launchThread"]({
      commandId: NodeCrypto.randomUUID(),
      threadId,
      projectId,
      title: "Effect interoperability: idle",
      modelSelection: { instanceId: provider, model },
      runtimeMode: "full-access",
      interactionMode: "default",
      workspaceStrategy: { type: "root" },
      initialMessage: { text: prompt(gateURL, provider, model), attachments: [] },
    });
    if (launched.threadId !== threadId) return yield* fail(`launchThread answered thread ${launched.threadId}, want ${threadId}`);

    const done = (projection) =>
      projection.messages.some((m) => m.role === "assistant" && m.text.includes(secret)) &&
      projection.runs.length > 0 &&
      projection.runs.every((r) => terminal.has(r.status));

    // Once this subscription shows the parent's first run completed, tell
    // the gate's controller (GET <gate>/parent-finished): the live verifier
    // releases its gate from what its own subscription shows.
    let reported = false;
    const report = (projection) =>
      reported || projection.runs[0]?.status !== "completed"
        ? Effect.void
        : Effect.promise(async () => {
            reported = true;
            const res = await fetch(`${gateURL}/parent-finished`);
            if (!res.ok) throw new Error(`GET ${gateURL}/parent-finished: HTTP ${res.status}`);
          });

    const [final] = yield* client["orchestration.subscribeThread"]({ threadId }).pipe(
      Stream.mapEffect((item) =>
        item?.kind === "snapshot"
          ? Schema.decodeUnknownEffect(Projection)(item.projection).pipe(Effect.orDie)
          : client["orchestration.getThreadProjection"]({ threadId }),
      ),
      Stream.tap(report),
      Stream.filter(done),
      Stream.take(1),
      Stream.runCollect,
    );
    if (final === undefined) return yield* fail("the subscription ended before the thread was acknowledged");
    return { threadId, runs: final.runs.map((r) => r.status), ack: true };
  });

const main = async () => {
  const session = await setup();
  const url = `${origin.replace(/^http/, "ws")}/ws?orchestrationProtocol=2&wsTicket=${encodeURIComponent(session.ticket)}`;
  const layer = RpcClient.layerProtocolSocket().pipe(
    Layer.provide(Socket.layerWebSocket(url)),
    Layer.provide(NodeWS.layerWebSocketConstructor),
    Layer.provide(process.env.WIREPROOF_SERIALIZATION === "ndjson" ? RpcSerialization.layerNdjson : RpcSerialization.layerJson),
  );
  return Effect.runPromise(program(session).pipe(Effect.scoped, Effect.provide(layer)));
};

main().then(
  (result) => {
    // No process.exit here: the RPC scope is closed by now and node exits
    // once the socket's close handshake is done, so the recording ends with
    // a clean close instead of a reset.
    process.stdout.write(JSON.stringify(result) + "\n");
  },
  (err) => {
    console.error(`client.mjs: ${err?.stack ?? err}`);
    process.exit(1);
  },
);
