import http from 'node:http';

/**
 * podman's REST API (libpod, Docker-compatible) over its unix socket: the one seam that talks to
 * it. A long-lived container per task, then an exec per command through this socket: 0.3 s an
 * exec here, against 0.8 s for `podman exec` (docs/design/runners.md).
 */
export const API = '/v4.0.0/libpod';

export interface ApiAnswer {
  status: number;
  body: unknown;
}

export function apiRequest(socket: string, method: string, path: string, body?: unknown): Promise<ApiAnswer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { socketPath: socket, method, path, headers: { 'Content-Type': 'application/json' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let parsed: unknown = text;
          try {
            parsed = text === '' ? null : JSON.parse(text);
          } catch {
            // not JSON: kept as text, for the error
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

/** True when podman's service answers on `socket`. */
export async function apiAnswers(socket: string): Promise<boolean> {
  try {
    const r = await apiRequest(socket, 'GET', `${API}/_ping`);
    return r.status === 200;
  } catch {
    return false;
  }
}

/** The words of an API error, for a message. */
export function apiError(answer: ApiAnswer): string {
  const b = answer.body as { message?: unknown; cause?: unknown } | string | null;
  if (b && typeof b === 'object' && typeof b.message === 'string') return b.message;
  return `HTTP ${answer.status}${typeof b === 'string' && b !== '' ? `: ${b.trim()}` : ''}`;
}
