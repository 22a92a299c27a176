// Imported first by main.ts, before pi-ai loads: the vendor SDKs read variables of their own (organisation and
// project headers, a second auth token, logging), and pi-ai reads PI_*. Brain already starts runners with a
// minimal environment; this makes the runner just as clean when someone starts it by hand.
const LEAKY = /^(OPENAI_|ANTHROPIC_|AZURE_OPENAI_|PI_)/;

for (const name of Object.keys(process.env)) {
  if (LEAKY.test(name)) delete process.env[name];
}

export {};
