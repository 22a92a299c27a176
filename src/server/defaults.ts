// Where the daemon listens unless told otherwise (a module of its own, so clients need not load the server).
export const DEFAULT_PORT = 7777;
export const DEFAULT_HOST = "127.0.0.1";
