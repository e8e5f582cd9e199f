import { jsonBytes, PayloadLimits, type AgentOutput } from '@berth/contracts';

type Block = Readonly<Record<string, unknown>>;

const cutNote = (cutBytes: number, limit: number) => `\n[Berth: ${cutBytes} more bytes of this output were cut; one agent output is kept to ${limit} bytes]`;
const droppedNote = (type: unknown, bytes: number) => `[Berth: a ${String(type)} block of ${bytes} bytes was dropped; one agent output is kept to ${PayloadLimits.agentOutputBytes} bytes]`;

/** The longest prefix of `text` whose UTF-8 form has at most `bytes` bytes (never half a character). */
function utf8Prefix(text: string, bytes: number): string {
  const encoded = Buffer.from(text, 'utf8');
  if (encoded.length <= bytes) return text;
  let end = Math.max(0, bytes);
  while (end > 0 && (encoded[end] & 0xc0) === 0x80) end--;
  return encoded.subarray(0, end).toString('utf8');
}

/**
 * Keeps a list of content blocks within `limit` bytes of JSON: text blocks are kept in order until
 * the budget runs out, the one that crosses it is cut and marked, later texts are dropped into that
 * marker's count; a non-text block that does not fit whole is replaced by a note saying so.
 */
function boundBlocks(blocks: readonly Block[], limit: number): Block[] {
  const out: Block[] = [];
  let cutBytes = 0;
  let budget = limit;
  for (const block of blocks) {
    const size = jsonBytes(block);
    if (cutBytes === 0 && size <= budget) {
      out.push(block);
      budget -= size + 1;
    } else if (block.type === 'text' && typeof block.text === 'string') {
      const text = block.text;
      if (cutBytes === 0 && budget > 256) {
        // JSON escaping can make text longer than its UTF-8 bytes: shrink until the block fits.
        let keep = budget - 256;
        let prefix = utf8Prefix(text, keep);
        while (keep > 0 && jsonBytes({ ...block, text: prefix }) > budget - 256) prefix = utf8Prefix(text, (keep = Math.floor(keep * 0.8)));
        out.push({ ...block, text: prefix });
        budget = 0;
        cutBytes += Buffer.byteLength(text, 'utf8') - Buffer.byteLength(prefix, 'utf8');
      } else {
        cutBytes += Buffer.byteLength(text, 'utf8');
      }
    } else {
      out.push({ type: 'text', text: droppedNote(block.type, size) });
    }
  }
  if (cutBytes > 0) {
    const last = out.findLastIndex((b) => b.type === 'text');
    const note = cutNote(cutBytes, PayloadLimits.agentOutputBytes);
    if (last >= 0) out[last] = { ...out[last], text: `${String(out[last].text)}${note}` };
    else out.push({ type: 'text', text: note.trimStart() });
  }
  return out;
}

/**
 * One agent output kept under `PayloadLimits.agentOutputBytes` of JSON, so the command and event
 * that carry it fit in one NATS message: a larger message or tool result is cut with a marker saying
 * how much was cut, a larger tool input is replaced by its JSON's prefix (marked the same way).
 * Deterministic: the live stream and a recovery from the output file bound an output identically.
 */
export function boundAgentOutput(output: AgentOutput, limit: number = PayloadLimits.agentOutputBytes): AgentOutput {
  if (jsonBytes(output) <= limit) return output;
  // Room for the output's own fields and the marker.
  const room = limit - 1_024;
  switch (output.kind) {
    case 'message':
      return { ...output, content: boundBlocks(output.content as readonly Block[], room) as typeof output.content };
    case 'tool_result':
    case 'mcp_tool_result':
      return { ...output, content: boundBlocks(output.content, room) };
    case 'tool_use':
    case 'mcp_tool_use': {
      const json = JSON.stringify(output.input);
      const kept = utf8Prefix(json, Math.floor(room / 2));
      return { ...output, input: { berth_truncated_input: `${kept}${cutNote(Buffer.byteLength(json, 'utf8') - Buffer.byteLength(kept, 'utf8'), PayloadLimits.agentOutputBytes)}` } };
    }
    default:
      return output;
  }
}

/**
 * Splits outputs, in order, into runs that each fit one command: at most `maxCount` outputs and
 * `maxBytes` bytes of JSON (an output is never split; bounded outputs always fit alone).
 */
export function splitOutputs<T>(outputs: readonly T[], maxCount: number, maxBytes: number = PayloadLimits.commandBytes - 4_096): T[][] {
  const runs: T[][] = [];
  let run: T[] = [];
  let bytes = 0;
  for (const output of outputs) {
    const size = jsonBytes(output) + 1;
    if (run.length > 0 && (run.length >= maxCount || bytes + size > maxBytes)) {
      runs.push(run);
      run = [];
      bytes = 0;
    }
    run.push(output);
    bytes += size;
  }
  if (run.length > 0) runs.push(run);
  return runs;
}
