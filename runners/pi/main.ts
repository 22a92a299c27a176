// Brain's reference runner: pi's agent core (@mariozechner/pi-agent-core + pi-ai) behind the runner stdio
// protocol. Start it as `node runners/pi/dist/main.js`; everything it needs arrives in the `open` frame.
// README.md beside this file lists the config it reads.
import "./env.js"; // first: clears the variables the vendor SDKs would read, before they load
import { serve } from "../../sdk/ts/index.js";
import { openPiSession } from "./session.js";
import { Warmer } from "./warm.js";

const log = (message: string) => process.stderr.write(`${message}\n`);
const warmer = new Warmer();

serve({ open: (params) => openPiSession(params, log, warmer) }, { log });
