import { describe, expect, it } from "vitest";
import { decodeBrainFrame, decodeRunnerFrame, ProtocolError } from "./frames.js";

// The protocol's examples (docs/protocol.md), verbatim: they must decode.
const seedBrainFrames = [
  '{"attachment":"ATTACHMENT_ID","id":"REQUEST_ID","method":"open","params":{"session_id":"SESSION_ID","dir":"/path/to/native","config":{"model":"openai/gpt-4.1-mini","tools":["echo"]},"tools":[{"name":"echo","description":"Echo text","input_schema":{"type":"object"}}],"provider":{"api_key":"PROVIDER_TOKEN"}}}',
  '{"attachment":"ATTACHMENT_ID","turn":"TURN_ID","id":"REQUEST_ID","method":"prompt","params":{"text":"Hello"}}',
  '{"attachment":"ATTACHMENT_ID","id":"REQUEST_ID","method":"checkpoint","params":null}',
  '{"attachment":"ATTACHMENT_ID","turn":"TURN_ID","id":"CALL_FRAME_ID","result":{"content":[{"type":"text","text":"hi"}],"is_error":false}}',
];
const seedRunnerFrames = [
  '{"attachment":"ATTACHMENT_ID","turn":"TURN_ID","id":"REQUEST_ID","result":{}}',
  '{"attachment":"ATTACHMENT_ID","turn":"TURN_ID","id":"REQUEST_ID","error":{"code":"provider_error","message":"upstream rate limit exceeded"}}',
  '{"attachment":"ATTACHMENT_ID","turn":"TURN_ID","event":"assistant.delta","data":{"text":"Hello"}}',
  '{"attachment":"ATTACHMENT_ID","turn":"TURN_ID","id":"CALL_FRAME_ID","method":"tool.call","params":{"id":"TOOL_CALL_ID","name":"echo","arguments":{"value":"hi"}}}',
  '{"attachment":"ATTACHMENT_ID","turn":"TURN_ID","event":"assistant.message","data":{"text":"Hello!","usage":{"input":12,"output":4},"stop_reason":"stop"}}',
];

describe("runner frames", () => {
  it.each(seedBrainFrames)("decodes the seed's Brain → runner frame %#", (line) => {
    expect(() => decodeBrainFrame(line)).not.toThrow();
  });

  it.each(seedRunnerFrames)("decodes the seed's runner → Brain frame %#", (line) => {
    expect(() => decodeRunnerFrame(line)).not.toThrow();
  });

  it.each([
    [
      '{"attachment":"A","turn":"T","event":"assistant.delta","data":{"text":"x"},"extra":1}',
      /Unrecognized key.*extra/,
    ],
    [
      '{"attachment":"A","turn":"T","event":"assistant.delta","data":{"text":"x","bold":true}}',
      /data: Unrecognized key/,
    ],
    ['{"attachment":"A","event":"assistant.delta","data":{"text":"x"}}', /turn/],
    ['{"attachment":"A","turn":"T","event":"assistant.shout","data":{"text":"x"}}', /event/],
    [
      '{"attachment":"A","turn":"T","id":"1","method":"prompt","params":{"text":"x"}}',
      /may only send method "tool.call"/,
    ],
    ['{"attachment":"A","id":"1","error":{"code":"oops","message":"x"}}', /reply frame/],
    ['{"attachment":"A","id":"1"}', /none of "event", "method", "result" or "error"/],
    ["[1,2]", /must be a JSON object/],
    ["{not json", /not JSON/],
  ])("refuses %s", (line, message) => {
    expect(() => decodeRunnerFrame(line)).toThrow(ProtocolError);
    expect(() => decodeRunnerFrame(line)).toThrow(message);
  });

  it.each([
    ['{"attachment":"A","id":"1","error":{"code":"oops","message":"x"}}', /error\.code: Invalid option/],
    ['{"attachment":"A","id":"1","error":"upstream down"}', /error: Invalid input: expected object/],
    ['{"attachment":"A","id":"1","error":{"message":"x"}}', /error\.code/],
    ['{"id":"1","result":{}}', /attachment: Invalid input: expected string/],
    ['{"attachment":"A","id":1,"result":{}}', /id: Invalid input: expected string/],
    ['{"attachment":"A","id":"1","result":{},"error":{"code":"brain_error","message":"x"}}', /not both/],
    ['{"attachment":"A","id":"1","error":null}', /error: Invalid input: expected object/],
    ['{"attachment":"A","turn":"T","event":"assistant.message","data":{"text":null}}', /data\.text/],
  ])("names the field a bad reply frame gets wrong: %s", (line, message) => {
    expect(() => decodeRunnerFrame(line)).toThrow(message);
  });

  it("names an empty line and a leading byte order mark, which JSON.parse's message leaves unseen", () => {
    expect(() => decodeRunnerFrame("")).toThrow(/an empty line is not a frame/);
    expect(() => decodeRunnerFrame(" \r")).toThrow(/an empty line is not a frame/);
    const bom = '\ufeff{"attachment":"A","turn":"T","event":"assistant.delta","data":{"text":"x"}}';
    expect(() => decodeRunnerFrame(bom)).toThrow(/byte order mark \(U\+FEFF\)/);
    expect(() => decodeBrainFrame(bom)).toThrow(/byte order mark/);
  });

  it("reads the member a Go runner's reply does not use, written as null, as absent", () => {
    const error =
      '{"attachment":"A","turn":null,"id":"1","result":null,"error":{"code":"brain_error","message":"x"}}';
    expect(decodeRunnerFrame(error)).toStrictEqual({
      attachment: "A",
      id: "1",
      error: { code: "brain_error", message: "x" },
    });
    const result = '{"attachment":"A","turn":"T","id":"1","result":null,"error":null}';
    expect(decodeRunnerFrame(result)).toStrictEqual({ attachment: "A", turn: "T", id: "1", result: null });
    const noTurn = '{"attachment":"A","turn":"","id":"1","result":{}}';
    expect(decodeRunnerFrame(noTurn)).toStrictEqual({ attachment: "A", id: "1", result: {} });
  });

  it("defaults append_only to false when a checkpoint entry leaves it out", () => {
    const frame = decodeRunnerFrame('{"attachment":"A","id":"1","result":[{"path":"a","size":1}]}');
    expect(frame).toMatchObject({ result: [{ path: "a", size: 1 }] });
  });
});

describe("field values that are objects", () => {
  it("give the protocol error, not a TypeError from turning them into strings", () => {
    for (const line of [
      '{"event":{"toString":1}}',
      '{"event":{"toString":null,"valueOf":null}}',
      '{"attachment":"A","turn":"T","event":{"toString":1},"data":{}}',
    ]) {
      expect(() => decodeRunnerFrame(line), line).toThrow(ProtocolError);
    }
    expect(() => decodeRunnerFrame('{"event":{"toString":1}}')).toThrow(/event frame \{"toString":1\}/);
    expect(() => decodeBrainFrame('{"method":{"toString":1}}')).toThrow(ProtocolError);
  });
});
