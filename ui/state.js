// The page's shared state (session, settings, server state, the current view) and its small
// event bus: live events from the server are re-emitted here for the view that is shown.

export const app = {
  // This tab's UI session (never the token): sent in X-Vaider-Session.
  session: null,
  settings: null,
  paused: false,
  online: true,
  unauthorized: false,
  view: null,
  events: new EventTarget(),
  eventSource: null,
  reconnectDelay: 1000,
  // The live-events stream broke since it last opened (see server.js).
  eventsLost: false,
  pending: new Set(), // ids just started by "Run again" that may not be in the history yet
};

export function emit(type, detail) {
  app.events.dispatchEvent(new CustomEvent(type, { detail }));
}

/** Subscribes for the life of a view; returns the unsubscribe function. */
export function on(type, fn) {
  const listener = (e) => fn(e.detail);
  app.events.addEventListener(type, listener);
  return () => app.events.removeEventListener(type, listener);
}
