// A real MCP Apps host for the tests, in the browser: the TypeScript MCP client talks to
// Vaider over Streamable HTTP (holding the token, as a host does), and the ext-apps SDK's
// AppBridge renders a tool's view in a sandbox proxy on another origin, as web hosts must.
// Bundled by esbuild (lib/apps-host/server.mjs); the test drives it through window.host.
import { AppBridge, PostMessageTransport, getToolUiResourceUri, RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/app-bridge';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const HOST_INFO = { name: 'vaider-test-host', version: '1.0.0' };
const UI = 'io.modelcontextprotocol/ui';

const state = { client: null, tools: new Map(), toView: [], viewCalls: [], bridge: null };

/** Connects the host's MCP client; `views: false` is a client without the extension. */
async function connect(url, token, { views = true } = {}) {
  const capabilities = views ? { extensions: { [UI]: { mimeTypes: [RESOURCE_MIME_TYPE] } } } : {};
  const client = new Client(HOST_INFO, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL(url),
    { requestInit: { headers: { Authorization: `Bearer ${token}` } } }));
  state.client = client;
  const { tools } = await client.listTools();
  state.tools = new Map(tools.map((t) => [t.name, t]));
  return tools.map((t) => t.name);
}

/** What the model is offered: the spec has hosts leave out tools not visible to "model". */
function modelTools() {
  return [...state.tools.values()]
    .filter((t) => { const v = t._meta?.ui?.visibility; return !v || v.includes('model'); })
    .map((t) => t.name);
}

/** The model's own tools/call, straight from the host's client. */
async function callAsModel(name, args) {
  return state.client.callTool({ name, arguments: args });
}

async function readView(uri) {
  const read = await state.client.readResource({ uri });
  const content = read.contents[0];
  if (content.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`unexpected type ${content.mimeType}`);
  return { html: content.text, csp: content._meta?.ui?.csp };
}

/** Loads the sandbox proxy (another origin, CSP from the view's declaration) into `iframe`. */
function loadSandbox(iframe, sandboxUrl, csp) {
  const ready = new Promise((resolve) => {
    const listener = ({ source, data }) => {
      if (source === iframe.contentWindow && data?.method === 'ui/notifications/sandbox-proxy-ready') {
        window.removeEventListener('message', listener);
        resolve();
      }
    };
    window.addEventListener('message', listener);
  });
  const url = new URL(sandboxUrl);
  url.searchParams.set('csp', JSON.stringify(csp || {}));
  iframe.src = url.href;
  return ready;
}

/** Calls `name` as the model would and shows its result in the tool's view. */
async function show(name, args, sandboxUrl) {
  const tool = state.tools.get(name);
  const uri = tool && getToolUiResourceUri(tool);
  if (!uri) throw new Error(`${name} has no view`);
  const result = state.client.callTool({ name, arguments: args });
  const view = await readView(uri);
  const slot = document.getElementById('views');
  const iframe = document.createElement('iframe');
  iframe.id = 'view';
  iframe.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
  iframe.style.cssText = 'width: 1000px; height: 900px; border: 1px solid #ccc';
  slot.replaceChildren(iframe);
  await loadSandbox(iframe, sandboxUrl, view.csp);

  const bridge = new AppBridge(state.client, HOST_INFO, { serverTools: {}, serverResources: {}, logging: {} });
  bridge.onsizechange = ({ height }) => { if (height) iframe.style.height = `${Math.min(height + 4, 2000)}px`; };
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  const transport = new PostMessageTransport(iframe.contentWindow, iframe.contentWindow);
  // Everything the view is sent is kept, so the test can look for the token in it.
  const send = transport.send.bind(transport);
  transport.send = (message, options) => { state.toView.push(JSON.stringify(message)); return send(message, options); };
  await bridge.connect(transport);
  // A compliant host: a view may call only the tools offered to views ("app"). Set after
  // connect(), which installs the SDK's plain forwarding to the server.
  bridge.oncalltool = async (params) => {
    state.viewCalls.push(params);
    const target = state.tools.get(params.name);
    const visibility = target?._meta?.ui?.visibility || ['model', 'app'];
    if (!visibility.includes('app')) throw new Error(`${params.name} is not offered to views`);
    return state.client.callTool(params);
  };
  await bridge.sendSandboxResourceReady({ html: view.html, csp: view.csp });
  await initialized;
  await bridge.sendToolInput({ arguments: args });
  const done = await result;
  await bridge.sendToolResult(done);
  state.bridge = bridge;
  return done;
}

window.host = {
  connect, modelTools, callAsModel, show, readView,
  toView: () => state.toView.join('\n'),
  viewCalls: () => state.viewCalls,
};
window.hostReady = true;
