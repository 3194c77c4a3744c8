/**
 * Greeting and sample prompts when a workspace has none of its own: drawn from what the
 * workspace is (its name, its models, its instructions), never empty.
 */
export interface WorkspaceFacts {
  name: string;
  modelNames: string[];
  systemInstructions: string | null;
  contextTitles: string[];
}

function list(names: string[]): string {
  if (names.length <= 1) return names[0] ?? '';
  return `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

export function defaultGreeting(f: WorkspaceFacts): string {
  const models = f.modelNames.length > 0 ? ` You are chatting with ${list(f.modelNames)}.` : '';
  const docs = f.contextTitles.length > 0 ? ` Answers can draw on ${list(f.contextTitles.slice(0, 3))}.` : '';
  return `Welcome to ${f.name}!${models}${docs} Ask a question to get started.`;
}

export function defaultSamplePrompts(f: WorkspaceFacts): string[] {
  const out: string[] = [];
  for (const title of f.contextTitles.slice(0, 3)) {
    out.push(`Summarize the key points of "${title}".`);
    out.push(`What questions does "${title}" answer?`);
  }
  const focus = f.systemInstructions?.split(/(?<=[.!?])\s/)[0]?.trim();
  if (focus && focus.length <= 160) out.push(`Given that "${focus}", what can you help me with?`);
  out.push(
    `What can you help me with in ${f.name}?`,
    `Give me a short overview of the topics ${f.name} covers.`,
    `Draft a first plan for a task in ${f.name}, step by step.`,
    `Explain an important idea from ${f.name} as if I were new to it.`,
    'Turn my notes into a clear, well-structured summary.',
    'List the questions I should ask before making a decision here.',
  );
  if (f.modelNames.length > 0) out.push(`What are you, ${f.modelNames[0]}, best at?`);
  return [...new Set(out)];
}
