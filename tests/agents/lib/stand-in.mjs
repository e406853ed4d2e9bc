// A scripted stand-in for the model services the agent CLIs talk to, on loopback only: the
// OpenAI Responses API (Codex CLI, `POST /v1/responses`) and the Gemini API (Gemini CLI,
// `POST /v1beta/models/<model>:generateContent|streamGenerateContent|countTokens`). It plays
// one scripted turn: when no tool result is in the conversation yet, it calls the tool whose
// name ends with `script.tool` with `script.args`; once the tool's result is there, it answers
// with a sentence quoting it. Every request is kept (`requests`), so a test can read which
// tools the CLI offered its model and what the tool returned. No real model is involved.
import http from 'node:http';
import fs from 'node:fs';
import zlib from 'node:zlib';

/** Starts the stand-in; `script` is `{tool, args}`. Resolves to `{url, requests, close}`. */
export async function startStandIn(script) {
  const requests = [];
  if (process.env.STAND_IN_DUMP) {
    process.on('exit', () => fs.writeFileSync(process.env.STAND_IN_DUMP, JSON.stringify(requests, null, 1)));
  }
  const server = http.createServer(async (req, res) => {
    try {
      const body = await readBody(req);
      const record = { method: req.method, path: req.url, body };
      requests.push(record);
      route(req, res, body, script, record);
    } catch (error) {
      res.writeHead(500, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: String(error) } }));
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}`;
  return { url, requests, close: () => new Promise((resolve) => server.close(resolve)) };
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  let raw = Buffer.concat(chunks);
  const encoding = (req.headers['content-encoding'] ?? '').toLowerCase();
  if (encoding === 'zstd') raw = zlib.zstdDecompressSync(raw);
  if (encoding === 'gzip') raw = zlib.gunzipSync(raw);
  if (raw.length === 0) return null;
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return raw.toString('utf8');
  }
}

function route(req, res, body, script, record) {
  const path = req.url.split('?')[0];
  if (req.method === 'GET' && path.endsWith('/models')) {
    return json(res, { object: 'list', data: [{ id: 'stand-in', object: 'model' }], models: [] });
  }
  if (req.method === 'POST' && path.endsWith('/responses')) {
    return openaiResponses(res, body, script, record);
  }
  const gemini = path.match(/\/models\/([^/:]+):(\w+)$/);
  if (req.method === 'POST' && gemini) {
    return geminiCall(res, gemini[2], body, script, record);
  }
  res.writeHead(404, { 'content-type': 'application/json' });
  res.end(JSON.stringify({ error: { code: 404, message: `the stand-in has no ${req.method} ${path}` } }));
}

function json(res, value) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(value));
}

function sse(res, events) {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) {
    const name = event.type ? `event: ${event.type}\n` : '';
    res.write(`${name}data: ${JSON.stringify(event)}\n\n`);
  }
  res.end();
}

// ---- OpenAI Responses API (Codex) ---------------------------------------------------------

function openaiResponses(res, body, script, record) {
  // Codex offers an MCP server's tools as a namespace (`mcp__vaider`) of functions.
  const offered = (body?.tools ?? []).flatMap((t) => (t.type === 'namespace'
    ? (t.tools ?? []).map((inner) => ({ namespace: t.name, name: inner.name }))
    : [{ name: t.name ?? t.function?.name }]));
  const tools = offered.filter((t) => t.name).map((t) => (t.namespace ? `${t.namespace}.${t.name}` : t.name));
  record.tools = tools;
  const input = body?.input ?? [];
  const output = input.find((item) => item.type === 'function_call_output');
  const id = `resp_${record.path.length}_${Date.now()}`;
  let item;
  if (output) {
    const text = typeof output.output === 'string' ? output.output : JSON.stringify(output.output);
    record.toolResult = text;
    item = { type: 'message', role: 'assistant', id: 'msg_1', status: 'completed',
      content: [{ type: 'output_text', text: `Vaider answered: ${text.slice(0, 400)}`, annotations: [] }] };
  } else {
    const name = tools.find((t) => t.endsWith(script.tool));
    const target = offered.find((t) => t.name === script.tool);
    if (!name || !target) {
      item = { type: 'message', role: 'assistant', id: 'msg_0', status: 'completed',
        content: [{ type: 'output_text', text: `no tool ending in ${script.tool} was offered`, annotations: [] }] };
    } else {
      record.called = name;
      item = { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: target.name,
        ...(target.namespace ? { namespace: target.namespace } : {}), status: 'completed',
        arguments: JSON.stringify(script.args) };
    }
  }
  const usage = { input_tokens: 10, input_tokens_details: { cached_tokens: 0 }, output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 15 };
  sse(res, [
    { type: 'response.created', response: { id, status: 'in_progress', output: [] } },
    { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress' } },
    { type: 'response.output_item.done', output_index: 0, item },
    { type: 'response.completed', response: { id, status: 'completed', output: [item], usage } },
  ]);
}

// ---- Gemini API (Gemini CLI) --------------------------------------------------------------

function geminiCall(res, method, body, script, record) {
  if (method === 'countTokens') return json(res, { totalTokens: 10 });
  const config = body?.generationConfig ?? {};
  const wantsJson = config.responseMimeType === 'application/json';
  let part;
  if (wantsJson) {
    // A helper call (routing, next speaker, ...): an answer that fits the asked schema.
    const schema = config.responseJsonSchema ?? config.responseSchema ?? {};
    part = { text: JSON.stringify(fitting(schema)) };
  } else {
    const declarations = (body?.tools ?? []).flatMap((t) => t.functionDeclarations ?? []);
    const names = declarations.map((d) => d.name);
    const result = lastFunctionResponse(body?.contents ?? []);
    if (declarations.length > 0) {
      record.tools = names;
      record.declarations = declarations;
    }
    const name = names.find((n) => n.endsWith(script.tool));
    if (result) {
      const text = JSON.stringify(result.response ?? result);
      record.toolResult = text;
      part = { text: `Vaider answered: ${text.slice(0, 400)}` };
    } else if (name) {
      record.called = name;
      part = { functionCall: { name, args: script.args } };
    } else {
      part = { text: 'Hello.' };
    }
  }
  const answer = {
    candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: 'stand-in',
  };
  if (method === 'streamGenerateContent') return sse(res, [answer]);
  return json(res, answer);
}

function lastFunctionResponse(contents) {
  const last = contents[contents.length - 1];
  return (last?.parts ?? []).map((p) => p.functionResponse).find(Boolean) ?? null;
}

/** A value that satisfies a (simple) JSON schema: required fields filled, first enum value. */
function fitting(schema) {
  const type = String(schema?.type ?? 'object').toLowerCase();
  if (schema?.enum?.length) return schema.enum[0];
  if (type === 'object') {
    const out = {};
    for (const [key, sub] of Object.entries(schema.properties ?? {})) out[key] = fitting(sub);
    return out;
  }
  if (type === 'array') return [];
  if (type === 'boolean') return false;
  if (type === 'number' || type === 'integer') return 0;
  return '';
}
