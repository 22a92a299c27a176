// What the daemon answered when it said no: its status, error code, message and the field at fault.

export class ClientError extends Error {
  override name = "ClientError";
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
  ) {
    super(message);
  }
}

export function errorOf(status: number, text: string): ClientError {
  try {
    const body = JSON.parse(text) as { error?: { code?: string; message?: string; field?: string } };
    if (body.error?.message) {
      return new ClientError(status, body.error.code ?? "error", body.error.message, body.error.field);
    }
  } catch {}
  return new ClientError(status, "error", `HTTP ${status}: ${text.slice(0, 200)}`);
}
