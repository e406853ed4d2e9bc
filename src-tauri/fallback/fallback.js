// The fallback page: asks the app why its server is not running and offers the way out
// (another port, saved in the config, or another try on the same one). On success the app
// itself moves this window to the server's UI.
"use strict";

const invoke = window.__TAURI__.core.invoke;
const $ = (id) => document.getElementById(id);

function render(status) {
  const usePort = $("use-port");
  const retry = $("retry");
  usePort.hidden = true;
  retry.hidden = true;
  switch (status.state) {
    case "starting":
    case "running": // the app is about to show the UI
      $("title").textContent = "Starting Vaider…";
      $("message").textContent = "";
      setTimeout(refresh, 500);
      break;
    case "portInUse":
      $("title").textContent = `Port ${status.port} is already in use`;
      $("message").textContent = status.byVaider
        ? `Another Vaider is already running on port ${status.port} (perhaps \`vaider serve\` in a terminal). Stop it and try again, or run this one on another port.`
        : `Another program is listening on port ${status.port}, so Vaider's server cannot start there. Stop that program and try again, or use another port.`;
      if (status.nextFree) {
        usePort.textContent = `Use port ${status.nextFree} instead`;
        usePort.dataset.port = String(status.nextFree);
        usePort.hidden = false;
      }
      retry.hidden = false;
      break;
    default:
      $("title").textContent = "Vaider's server could not start";
      $("message").textContent = status.message;
      retry.hidden = false;
  }
}

async function refresh() {
  render(await invoke("server_status"));
}
window.vaiderRefresh = refresh;

async function act(button, command, args) {
  $("failure").hidden = true;
  button.disabled = true;
  try {
    await invoke(command, args);
  } catch (error) {
    $("failure").textContent = String(error);
    $("failure").hidden = false;
  } finally {
    button.disabled = false;
  }
  await refresh();
}

$("use-port").addEventListener("click", (event) =>
  act(event.currentTarget, "use_port", { port: Number(event.currentTarget.dataset.port) }));
$("retry").addEventListener("click", (event) => act(event.currentTarget, "retry", {}));
refresh();
