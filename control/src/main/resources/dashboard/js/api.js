// The REST API with the bearer token from sessionStorage, and the event stream.

const KEY = 'kairos.token';

export const token = {
  get: () => sessionStorage.getItem(KEY),
  set: (t) => sessionStorage.setItem(KEY, t),
  clear: () => sessionStorage.removeItem(KEY),
};

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail || `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

let unauthorized = () => {};
/** Called when the API refuses the token (expired, revoked): the page shows the login form. */
export function onUnauthorized(handler) {
  unauthorized = handler;
}

function headers(extra) {
  return { Accept: 'application/json', Authorization: `Bearer ${token.get() || ''}`, ...extra };
}

async function fail(res) {
  let problem = null;
  try {
    problem = await res.json();
  } catch {
    problem = { detail: res.statusText };
  }
  if (res.status === 401) unauthorized();
  return new ApiError(res.status, problem);
}

/** GET a JSON resource. */
export async function get(path) {
  const res = await fetch(path, { headers: headers() });
  if (!res.ok) throw await fail(res);
  return res.json();
}

/** GET a task's log bytes from an offset: {text, offset, done}. */
export async function logs(id, { task = 0, stream = 'stdout', offset = 0 } = {}) {
  const q = new URLSearchParams({ task, stream, offset });
  const res = await fetch(`/api/v1/jobs/${id}/logs?${q}`, { headers: headers({ Accept: 'text/plain' }) });
  if (!res.ok) throw await fail(res);
  return {
    text: await res.text(),
    offset: Number(res.headers.get('Kairos-Log-Offset') || offset),
    done: res.headers.get('Kairos-Log-Done') === 'true',
  };
}

/** Checks a token without storing it: the user it names, or an ApiError. */
export async function whoami(candidate) {
  const res = await fetch('/api/v1/whoami', {
    headers: { Accept: 'application/json', Authorization: `Bearer ${candidate}` },
  });
  if (!res.ok) {
    let problem = null;
    try { problem = await res.json(); } catch { problem = null; }
    throw new ApiError(res.status, problem);
  }
  return res.json();
}

/**
 * Follows GET /api/v1/events with fetch, not EventSource: EventSource cannot send the
 * Authorization header, and a token in the URL would end up in logs and history. Calls
 * onChange(version) for each "changed" event and onStatus('live' | 'retrying'); reconnects
 * after the server's retry delay. Returns a function that stops it.
 */
export function listen(onChange, onStatus) {
  const abort = new AbortController();
  let retryMs = 3000;
  let stopped = false;

  async function once() {
    const res = await fetch('/api/v1/events', {
      headers: headers({ Accept: 'text/event-stream' }),
      signal: abort.signal,
      cache: 'no-store',
    });
    if (!res.ok) throw await fail(res);
    onStatus('live');
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value;
      let end;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let event = 'message';
        let data = '';
        for (const line of frame.split('\n')) {
          if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data += line.slice(5).trim();
          else if (line.startsWith('retry:')) retryMs = Number(line.slice(6)) || retryMs;
        }
        if (event === 'changed') {
          try {
            onChange(JSON.parse(data).version);
          } catch {
            onChange(null);
          }
        }
      }
    }
  }

  (async () => {
    while (!stopped) {
      try {
        await once();
      } catch (e) {
        if (stopped || abort.signal.aborted) return;
        if (e instanceof ApiError && e.status === 401) return;
      }
      if (stopped) return;
      onStatus('retrying');
      await new Promise((r) => setTimeout(r, retryMs));
    }
  })();

  return () => {
    stopped = true;
    abort.abort();
  };
}
