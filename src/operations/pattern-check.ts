/**
 * Whether an operator's JSON Schema `pattern` can backtrack badly
 * (docs/CONFIGURATION.md, "Declaring operations"). Patterns run in V8's
 * backtracking engine; a pattern that can match one text in many ways
 * (`(a+)+$`, `(a|ab)*`, `\d+\d+`) makes a failing text cost exponential or
 * polynomial time. So a declared pattern is taken only when it is
 * unambiguous over any length: no two different ways through it ever read
 * the same arbitrarily long text.
 *
 * The check: the pattern's position automaton (one state per character or
 * class it reads, with how many ways each step can be taken), and its product
 * with itself. Two ways that read the same text are a path of pairs; they
 * cost more than a constant only when a pair of *different* states, or a
 * step that can be taken two ways, lies on a cycle of that product. Counted
 * repetitions above one are read as `+` or `*` (which can only find more
 * ambiguity, never less: `\d{2}\d{2}` is refused, `\d{4}` taken). Backreferences and
 * lookarounds are refused: they are outside JSON Schema's recommended
 * subset of regular expressions, and cannot be checked this way.
 */

/** Why a pattern is refused, or null when it is taken. */
export function patternProblem(source: string): string | null {
  let tree: Node;
  try {
    tree = new Parser(source).parse();
  } catch (err) {
    if (err instanceof Unsupported) return err.message;
    throw err;
  }
  const automaton = new Automaton();
  const root = automaton.build(tree);
  if (automaton.positions.length > MAX_POSITIONS) {
    return `is too long to check: at most ${MAX_POSITIONS} characters and classes, repetitions counted`;
  }
  return ambiguity(automaton, root.first);
}

/** Characters and classes a checked pattern may have. */
const MAX_POSITIONS = 1000;
/** Pairs of states the check may visit before it gives up (and refuses). */
const MAX_PAIRS = 200_000;

// ---- Character sets: sorted, disjoint [lo, hi] ranges of UTF-16 code units ----

type CharSet = [number, number][];
const MAX_UNIT = 0xffff;

const range = (lo: number, hi: number): CharSet => [[lo, hi]];
const single = (c: number): CharSet => [[c, c]];

function union(...sets: CharSet[]): CharSet {
  const all = sets.flat().sort((a, b) => a[0] - b[0]);
  const out: CharSet = [];
  for (const [lo, hi] of all) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

function complement(set: CharSet): CharSet {
  const out: CharSet = [];
  let next = 0;
  for (const [lo, hi] of union(set)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_UNIT) out.push([next, MAX_UNIT]);
  return out;
}

function overlap(a: CharSet, b: CharSet): boolean {
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as [number, number];
    const y = b[j] as [number, number];
    if (x[1] < y[0]) i++;
    else if (y[1] < x[0]) j++;
    else return true;
  }
  return false;
}

function intersect(a: CharSet, b: CharSet): CharSet {
  const out: CharSet = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as [number, number];
    const y = b[j] as [number, number];
    const lo = Math.max(x[0], y[0]);
    const hi = Math.min(x[1], y[1]);
    if (lo <= hi) out.push([lo, hi]);
    if (x[1] < y[1]) i++;
    else j++;
  }
  return out;
}

const code = (s: string) => s.charCodeAt(0);
const DIGIT = range(code('0'), code('9'));
const WORD = union(range(code('a'), code('z')), range(code('A'), code('Z')), DIGIT, single(95));
const SPACE = union(
  range(9, 13),
  single(32),
  single(0xa0),
  single(0x1680),
  range(0x2000, 0x200a),
  range(0x2028, 0x2029),
  single(0x202f),
  single(0x205f),
  single(0x3000),
  single(0xfeff),
);
const LINE_END = union(single(10), single(13), range(0x2028, 0x2029));
const ANY_BUT_LINE_END = complement(LINE_END);

// ---- Parsing: JavaScript's pattern syntax without flags (as `new RegExp(pattern)`) ----

type Node =
  | { kind: 'set'; set: CharSet }
  | { kind: 'empty' }
  | { kind: 'cat'; items: Node[] }
  | { kind: 'alt'; items: Node[] }
  | { kind: 'rep'; item: Node; min: number; max: number };

class Unsupported extends Error {}

const CLASS_ESCAPES: Record<string, CharSet> = {
  d: DIGIT,
  D: complement(DIGIT),
  w: WORD,
  W: complement(WORD),
  s: SPACE,
  S: complement(SPACE),
};
const CONTROL_ESCAPES: Record<string, number> = { t: 9, n: 10, v: 11, f: 12, r: 13 };

class Parser {
  private at = 0;

  constructor(private readonly src: string) {}

  parse(): Node {
    const node = this.alternation();
    if (this.at < this.src.length) throw new Unsupported('cannot be read: an unmatched )');
    return node;
  }

  private peek(): string | undefined {
    return this.src[this.at];
  }

  private alternation(): Node {
    const items = [this.sequence()];
    while (this.peek() === '|') {
      this.at++;
      items.push(this.sequence());
    }
    return items.length === 1 ? (items[0] as Node) : { kind: 'alt', items };
  }

  private sequence(): Node {
    const items: Node[] = [];
    for (let c = this.peek(); c !== undefined && c !== '|' && c !== ')'; c = this.peek()) {
      const atom = this.atom();
      items.push(this.quantified(atom));
    }
    return { kind: 'cat', items };
  }

  private quantified(atom: Node): Node {
    const bounds = this.quantifier();
    if (!bounds) return atom;
    if (this.peek() === '?') this.at++; // lazy: the same ways through, tried in another order
    return { kind: 'rep', item: atom, min: bounds[0], max: bounds[1] };
  }

  private quantifier(): [number, number] | null {
    const c = this.peek();
    if (c === '*' || c === '+' || c === '?') {
      this.at++;
      return c === '*' ? [0, Infinity] : c === '+' ? [1, Infinity] : [0, 1];
    }
    if (c !== '{') return null;
    // Not a quantifier unless it reads as one: then `{` is a plain character.
    const m = /^\{(\d+)(,(\d*))?\}/.exec(this.src.slice(this.at));
    if (!m) return null;
    this.at += m[0].length;
    const min = Number(m[1]);
    const max = m[2] === undefined ? min : m[3] === '' ? Infinity : Number(m[3]);
    return [min, max];
  }

  private atom(): Node {
    const c = this.src[this.at++] as string;
    if (c === '^' || c === '$') return { kind: 'empty' };
    if (c === '.') return { kind: 'set', set: ANY_BUT_LINE_END };
    if (c === '[') return { kind: 'set', set: this.charClass() };
    if (c === '(') return this.group();
    if (c === '\\') return this.escape();
    if (c === '*' || c === '+' || c === '?')
      throw new Unsupported('cannot be read: nothing to repeat');
    return { kind: 'set', set: single(code(c)) };
  }

  private group(): Node {
    if (this.src.startsWith('?:', this.at)) this.at += 2;
    else if (/^\?<[A-Za-z_$]/.test(this.src.slice(this.at))) {
      this.at = this.src.indexOf('>', this.at) + 1;
    } else if (this.peek() === '?') {
      throw new Unsupported(
        "uses a lookahead or lookbehind, which declared patterns do not take (outside JSON Schema's recommended subset, and not checkable for backtracking)",
      );
    }
    const inner = this.alternation();
    if (this.src[this.at++] !== ')') throw new Unsupported('cannot be read: an unclosed (');
    return inner;
  }

  private escape(): Node {
    const c = this.src[this.at++];
    if (c === undefined) throw new Unsupported('cannot be read: it ends with \\');
    if (c === 'b' || c === 'B') return { kind: 'empty' };
    if (/[1-9]/.test(c) || c === 'k') {
      throw new Unsupported(
        'uses a backreference, which declared patterns do not take (it can make matching take exponential time)',
      );
    }
    return { kind: 'set', set: this.escapedSet(c) };
  }

  /** The set an escape after `\` reads (c already consumed), inside a class or out. */
  private escapedSet(c: string): CharSet {
    const known = CLASS_ESCAPES[c];
    if (known) return known;
    const control = CONTROL_ESCAPES[c];
    if (control !== undefined) return single(control);
    if (c === '0') return single(0);
    if (c === 'x' || c === 'u') {
      const digits = c === 'x' ? 2 : 4;
      const hex = this.src.slice(this.at, this.at + digits);
      if (new RegExp(`^[0-9A-Fa-f]{${digits}}$`).test(hex)) {
        this.at += digits;
        return single(Number.parseInt(hex, 16));
      }
      return single(code(c));
    }
    if (c === 'c' && /[A-Za-z]/.test(this.peek() ?? '')) {
      return single(code(this.src[this.at++] as string) % 32);
    }
    return single(code(c));
  }

  private charClass(): CharSet {
    const negated = this.peek() === '^';
    if (negated) this.at++;
    const parts: CharSet[] = [];
    while (this.peek() !== ']') {
      if (this.peek() === undefined) throw new Unsupported('cannot be read: an unclosed [');
      const lo = this.classAtom();
      const after = this.src[this.at + 1];
      if (this.peek() !== '-' || after === ']' || after === undefined) {
        parts.push(lo);
        continue;
      }
      this.at++;
      const hi = this.classAtom();
      const from = unitOf(lo);
      const to = unitOf(hi);
      // A range between two characters; next to a class escape, `-` is itself.
      if (from !== null && to !== null) parts.push(range(from, to));
      else parts.push(lo, single(code('-')), hi);
    }
    this.at++;
    const set = union(...parts);
    return negated ? complement(set) : set;
  }

  private classAtom(): CharSet {
    const c = this.src[this.at++] as string;
    if (c !== '\\') return single(code(c));
    const e = this.src[this.at++];
    if (e === undefined) throw new Unsupported('cannot be read: it ends with \\');
    if (e === 'b') return single(8);
    if (e === '-') return single(code('-'));
    return this.escapedSet(e);
  }
}

/** The one code unit a set holds, or null. */
function unitOf(set: CharSet): number | null {
  const only = set.length === 1 ? (set[0] as [number, number]) : null;
  return only && only[0] === only[1] ? only[0] : null;
}

// ---- The position automaton, with how many ways each step can be taken ----

interface Built {
  nullable: boolean;
  first: Set<number>;
  last: Set<number>;
}

class Automaton {
  readonly positions: CharSet[] = [];
  /** follow[p]: the states after p, each with the number of ways (capped at 2). */
  readonly follow = new Map<number, Map<number, number>>();

  build(node: Node): Built {
    if (this.positions.length > MAX_POSITIONS)
      return { nullable: true, first: new Set(), last: new Set() };
    switch (node.kind) {
      case 'empty':
        return { nullable: true, first: new Set(), last: new Set() };
      case 'set': {
        const p = this.positions.push(node.set) - 1;
        return { nullable: false, first: new Set([p]), last: new Set([p]) };
      }
      case 'cat':
        return node.items.reduce<Built>((a, item) => this.followedBy(a, this.build(item)), {
          nullable: true,
          first: new Set(),
          last: new Set(),
        });
      case 'alt': {
        const all = node.items.map((item) => this.build(item));
        return {
          nullable: all.some((b) => b.nullable),
          first: new Set(all.flatMap((b) => [...b.first])),
          last: new Set(all.flatMap((b) => [...b.last])),
        };
      }
      case 'rep':
        return this.repeated(node.item, node.min, node.max);
    }
  }

  private repeated(item: Node, min: number, max: number): Built {
    if (max === 0) return { nullable: true, first: new Set(), last: new Set() };
    if (max === 1) return this.optionalIf(min === 0, this.build(item));
    // Any count above one is read as a loop (`+`, or `*` when it may be absent): copies
    // written out would have no cycle to hold their ambiguity, yet k copies of an ambiguous
    // item match one text in up to 2^k ways, and nested counts multiply (`(a{1,16}){1,16}`).
    const body = this.build(item);
    this.link(body.last, body.first);
    return { ...body, nullable: min === 0 || body.nullable };
  }

  private optionalIf(optional: boolean, b: Built): Built {
    return optional ? { ...b, nullable: true } : b;
  }

  /** a followed by b. */
  private followedBy(a: Built, b: Built): Built {
    this.link(a.last, b.first);
    return {
      nullable: a.nullable && b.nullable,
      first: a.nullable ? new Set([...a.first, ...b.first]) : a.first,
      last: b.nullable ? new Set([...a.last, ...b.last]) : b.last,
    };
  }

  /** Each of `from` may be followed by each of `to`: one more way for each such step. */
  private link(from: Set<number>, to: Set<number>): void {
    for (const p of from) {
      const next = this.follow.get(p) ?? new Map<number, number>();
      this.follow.set(p, next);
      for (const q of to) next.set(q, Math.min(2, (next.get(q) ?? 0) + 1));
    }
  }
}

/**
 * Why two ways through the pattern can read the same long text, or null.
 * Tarjan's strongly connected components over the reachable pairs of states.
 */
function ambiguity(a: Automaton, first: Set<number>): string | null {
  const START = -1;
  const followOf = (p: number): Map<number, number> =>
    p === START ? new Map([...first].map((q) => [q, 1])) : (a.follow.get(p) ?? new Map());
  const setOf = (p: number) => a.positions[p] as CharSet;
  const key = (p: number, q: number) => `${p},${q}`;
  /** The pairs after (p, q), each with whether it is a step that can be taken two ways. */
  const next = (p: number, q: number): [number, number, boolean][] => {
    const out: [number, number, boolean][] = [];
    const fp = followOf(p);
    const fq = p === q ? fp : followOf(q);
    for (const [p2, ways] of fp) {
      for (const [q2] of fq) {
        if (p2 === q2) out.push([p2, q2, p === q && ways > 1]);
        else if (overlap(setOf(p2), setOf(q2))) out.push([p2, q2, false]);
      }
    }
    return out;
  };

  /** Whether some text w leads p to p, p to q and q to q at once: a walk of triples. */
  const polynomial = (p: number, q: number): boolean | 'too complex' => {
    const goal = `${p},${q},${q}`;
    const seen = new Set<string>();
    const queue: [number, number, number][] = [[p, p, q]];
    while (queue.length > 0) {
      const [x, y, z] = queue.shift() as [number, number, number];
      for (const [x2] of followOf(x)) {
        for (const [y2] of followOf(y)) {
          const xy = intersect(setOf(x2), setOf(y2));
          if (xy.length === 0) continue;
          for (const [z2] of followOf(z)) {
            if (!overlap(xy, setOf(z2))) continue;
            const k = `${x2},${y2},${z2}`;
            if (k === goal) return true;
            if (seen.has(k)) continue;
            if (seen.size > MAX_PAIRS) return 'too complex';
            seen.add(k);
            queue.push([x2, y2, z2]);
          }
        }
      }
    }
    return false;
  };

  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: [number, number][] = [];
  let counter = 0;
  let problem: string | null = null;

  // Iterative Tarjan: each frame is a pair and the successors still to visit.
  type Frame = { p: number; q: number; rest: [number, number, boolean][] };
  const enter = (p: number, q: number): Frame => {
    const k = key(p, q);
    index.set(k, counter);
    low.set(k, counter);
    counter++;
    stack.push([p, q]);
    onStack.add(k);
    return { p, q, rest: next(p, q) };
  };
  const frames: Frame[] = [enter(START, START)];
  while (frames.length > 0 && problem === null) {
    if (counter > MAX_PAIRS) return 'is too complex to check for backtracking: simplify it';
    const frame = frames[frames.length - 1] as Frame;
    const k = key(frame.p, frame.q);
    const step = frame.rest.pop();
    if (step) {
      const [p2, q2] = step;
      const k2 = key(p2, q2);
      if (!index.has(k2)) frames.push(enter(p2, q2));
      else if (onStack.has(k2)) {
        low.set(k, Math.min(low.get(k) as number, index.get(k2) as number));
      }
      continue;
    }
    frames.pop();
    const parent = frames[frames.length - 1];
    if (parent) {
      const pk = key(parent.p, parent.q);
      low.set(pk, Math.min(low.get(pk) as number, low.get(k) as number));
    }
    if (low.get(k) !== index.get(k)) continue;
    // k roots a component: pop it, and see whether it is a cycle of two different ways.
    const members: [number, number][] = [];
    let member: [number, number];
    do {
      member = stack.pop() as [number, number];
      onStack.delete(key(member[0], member[1]));
      members.push(member);
    } while (key(member[0], member[1]) !== k);
    problem = componentProblem(members, next, polynomial);
  }
  return problem;
}

/** Why a component of pairs makes two ways read the same long text, or null. */
function componentProblem(
  members: [number, number][],
  next: (p: number, q: number) => [number, number, boolean][],
  polynomial: (p: number, q: number) => boolean | 'too complex',
): string | null {
  const inside = new Set(members.map(([p, q]) => `${p},${q}`));
  const edges = members.flatMap(([p, q]) =>
    next(p, q).filter(([p2, q2]) => inside.has(`${p2},${q2}`)),
  );
  if (edges.length === 0) return null; // a single pair with no loop: no cycle
  const split = members.some(([p, q]) => p !== q);
  // Two different ways from a state back to itself over one text: exponential.
  if ((split && members.some(([p, q]) => p === q)) || edges.some(([, , twoWays]) => twoWays)) {
    return 'can backtrack catastrophically: a repetition inside a repetition can split the same text in many ways (as in (a+)+, (a|a)* or (a*b?)*), so a text that fails takes exponential time';
  }
  if (!split) return null;
  // Two states that each loop over a text, where the first can also reach the second over
  // it (Weber and Seidl's condition): polynomial, as in \d+\d+. Two loops that only run
  // side by side, as in (\d+\.)+\d+, are not: the text that leaves one cannot stay in the other.
  for (const [p, q] of members) {
    if (p === q) continue;
    const found = polynomial(p, q);
    if (found === 'too complex') return 'is too complex to check for backtracking: simplify it';
    if (found) {
      return 'can backtrack catastrophically: two parts of it can match the same text over and over (as in (a|ab)* or \\d+\\d+), so a text that fails takes polynomial time';
    }
  }
  return null;
}
