// Reading a tensor typed or pasted the way PyTorch code writes it: `2.`, `-.5`, `1e-3`,
// `[2., 3.]`, `((1, 2), (3, 4))`, `torch.tensor([[1., 2.]])`, True/False. A small parser of our
// own (never eval): it says what is wrong and where ("character 7: ']' closes nothing").

export type LiteralResult = { ok: true; value: unknown } | { ok: false; error: string };

type Token =
  | { kind: "num"; text: string; at: number }
  | { kind: "word"; text: string; at: number }
  | { kind: "punct"; text: string; at: number };

const NUMBER = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?/;
const WORD = /^[A-Za-z_][\w.]*/;

class LiteralError extends Error {}

function fail(at: number, what: string): never {
  throw new LiteralError(`character ${at + 1}: ${what}`);
}

function tokenize(text: string): Token[] {
  const out: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    if (/\s/.test(c)) {
      i++;
      continue;
    }
    const rest = text.slice(i);
    const num = /^[+-]?[\d.]/.test(rest) ? NUMBER.exec(rest) : null;
    if (num) {
      out.push({ kind: "num", text: num[0], at: i });
      i += num[0].length;
      // 2x, 1.2.3: a number runs into something that is not a separator
      if (i < text.length && /[\w.]/.test(text[i])) {
        const bad = /^[^\s,\])]+/.exec(text.slice(out[out.length - 1].at))![0];
        fail(out[out.length - 1].at, `'${bad}' is not a number`);
      }
      continue;
    }
    const word = WORD.exec(rest);
    if (word) {
      out.push({ kind: "word", text: word[0], at: i });
      i += word[0].length;
      continue;
    }
    if ("[](),=".includes(c)) {
      out.push({ kind: "punct", text: c, at: i });
      i++;
      continue;
    }
    fail(i, `'${c}' cannot appear in a tensor (write numbers, commas and brackets)`);
  }
  return out;
}

const CLOSE: Record<string, string> = { "[": "]", "(": ")" };
const BOOLS: Record<string, boolean> = { True: true, False: false, true: true, false: false };
const NOT_FINITE = new Set(["nan", "inf", "math.inf", "math.nan", "torch.inf", "torch.nan", "Infinity", "NaN"]);

class Parser {
  i = 0;
  constructor(
    readonly tokens: Token[],
    readonly end: number,
  ) {}

  peek(): Token | undefined {
    return this.tokens[this.i];
  }

  /** One value: a number, a bool, or a bracketed list of values. */
  value(): unknown {
    const t = this.tokens[this.i++];
    if (!t) fail(this.end, "a value is missing here");
    if (t.kind === "num") {
      const v = Number(t.text);
      // past float64's range: JSON would send null. The literal itself says where it is.
      if (!Number.isFinite(v)) throw new LiteralError(`${t.text} is too large: values must be finite numbers`);
      return v;
    }
    if (t.kind === "word") {
      if (t.text in BOOLS) return BOOLS[t.text];
      if (NOT_FINITE.has(t.text))
        fail(t.at, `'${t.text}': values must be finite numbers, in nested lists such as [[1, 2], [3, 4]]`);
      fail(t.at, `'${t.text}' is not a number: write numbers or nested lists such as [[1, 2], [3, 4]]`);
    }
    if (t.text === "[" || t.text === "(") return this.list(t);
    fail(t.at, t.text === "," ? "a value is missing before this ','" : `'${t.text}' closes nothing`);
  }

  list(open: Token): unknown[] {
    const close = CLOSE[open.text];
    const items: unknown[] = [];
    for (;;) {
      const t = this.peek();
      if (!t) fail(this.end, `'${open.text}' opened at character ${open.at + 1} is never closed: add '${close}'`);
      if (t.kind === "punct" && t.text === close) {
        this.i++;
        return items;
      }
      items.push(this.value());
      const sep = this.peek();
      if (!sep) continue; // reported as never closed
      if (sep.kind === "punct" && sep.text === ",") this.i++;
      else if (!(sep.kind === "punct" && sep.text === close))
        fail(sep.at, sep.kind === "punct" ? `expected ',' or '${close}' before '${sep.text}'` : `a ',' is missing before '${sep.text}'`);
    }
  }
}

/** Read `text` as a tensor literal: the nested lists (or number) it holds. The call form
 * `torch.tensor(data)` and `tensor(data)` is unwrapped; keyword arguments are refused, since
 * requires_grad and dtype are fields of their own. */
export function parseLiteral(text: string): LiteralResult {
  try {
    const tokens = tokenize(text);
    if (!tokens.length) return { ok: false, error: "a value is required" };
    let body = tokens;
    const head = tokens[0];
    if (head.kind === "word" && /^(torch\.)?(tensor|Tensor|as_tensor)$/.test(head.text)) {
      const open = tokens[1];
      if (!open || open.text !== "(") fail(head.at + head.text.length, `write ${head.text}(...) with the values inside`);
      const last = tokens[tokens.length - 1];
      if (last.text !== ")") fail(text.length, `'(' opened at character ${open.at + 1} is never closed: add ')'`);
      body = tokens.slice(2, -1);
      const kw = body.findIndex((t) => t.text === "=");
      if (kw > 0)
        fail(body[kw - 1].at, `${body[kw - 1].text}=… is not part of the values: set it with its own field (requires_grad, dtype)`);
      if (body.length && body[body.length - 1].text === ",") body = body.slice(0, -1);
    }
    const p = new Parser(body, text.length);
    const value = p.value();
    const extra = p.peek();
    if (extra)
      fail(extra.at, extra.text === "," ? "several values must be inside brackets: [1, 2]" : `unexpected '${extra.text}' after the value`);
    return { ok: true, value };
  } catch (e) {
    if (e instanceof LiteralError) return { ok: false, error: e.message };
    throw e;
  }
}
