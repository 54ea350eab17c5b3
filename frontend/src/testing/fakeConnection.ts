// A stand-in for the page's one connection (store/connection.ts) in unit tests of the stores
// that meet in store/reactions.ts: handlers registered by event, pushed events emitted by the
// test, requests recorded and answered from `fake.replies`. A test file mocks the connection
// module with `connectionModule` (store/reactions.test.ts shows how).
type Handler = (payload: unknown) => void;

export const fake = {
  handlers: new Map<string, Handler[]>(),
  replies: new Map<string, unknown>(),
  requests: [] as [string, unknown][],
};

const connection = {
  socket: { connected: true },
  on: (event: string, handler: Handler) => {
    fake.handlers.set(event, [...(fake.handlers.get(event) ?? []), handler]);
    return () => fake.handlers.set(event, (fake.handlers.get(event) ?? []).filter((h) => h !== handler));
  },
  onStatus: () => () => {},
  onRuns: () => () => {},
  // records come packed on the wire; these tests send plain ones
  expandRecords: (_: string, wire: unknown[]) => wire,
  request: (event: string, payload: unknown) => {
    fake.requests.push([event, payload]);
    return Promise.resolve(fake.replies.get(event) ?? {});
  },
};

export const connectionModule = { getConnection: () => connection };

/** The server pushing `event` to the page. */
export const emit = (event: string, payload: unknown) => (fake.handlers.get(event) ?? []).forEach((h) => h(payload));
