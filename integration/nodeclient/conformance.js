'use strict';
// The conformance client: drives a running shufflenode cluster through
// Flight as docs/flight-api.md says, and checks what the document promises.
//
//   node conformance.js HOST:PORT,HOST:PORT,... [ID-PREFIX] [--token-file FILE]
//   node conformance.js HOST:PORT,HOST:PORT,... ID-PREFIX --lost-owner PID [--token-file FILE]
//
// It prints what it checks on stderr, and on stdout one JSON line the Go
// test compares with its own client: the hash shuffle's row IDs per
// partition and the status code of each bad request. It exits 1 on the
// first broken promise. The hash shuffle is left open for that comparison.
//
// --token-file: the nodes require the bearer token in FILE; every call
// carries it, and calls without it or with a wrong one must fail with
// UNAUTHENTICATED. --lost-owner PID: instead of the conformance cases, run
// a shuffle, read it, SIGKILL the process PID (the one serving the last
// address), and read every partition again as the document's "resuming a
// read after a lost owner" says.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const f = require('./flight');

const { arrow, grpc } = f;
const code = grpc.status;
const log = (...a) => console.error('conformance:', ...a);

/** Parses the command line: positional addresses and prefix, then options. */
function parseArgs(argv) {
  const pos = [];
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--token-file') opts.token = fs.readFileSync(argv[++i], 'utf8').trim();
    else if (argv[i] === '--lost-owner') opts.lostOwner = Number(argv[++i]);
    else pos.push(argv[i]);
  }
  return { nodes: (pos[0] || '').split(',').filter(Boolean), prefix: pos[1] || `node-${process.pid}`, ...opts };
}

const args = parseArgs(process.argv.slice(2));
const { nodes, prefix, token } = args;
if (nodes.length === 0) {
  console.error('usage: node conformance.js HOST:PORT[,HOST:PORT...] [ID-PREFIX] [--token-file FILE] [--lost-owner PID]');
  process.exit(2);
}
const connect = (addr) => f.connect(addr, token);
const clients = nodes.map(connect);
const byAddr = new Map(nodes.map((a, i) => [a, clients[i]]));
const clientAt = (addr) => {
  if (!byAddr.has(addr)) byAddr.set(addr, connect(addr));
  return byAddr.get(addr);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// --- what the document states, read from it ------------------------------------

const doc = fs.readFileSync(path.join(__dirname, '..', '..', 'docs', 'flight-api.md'), 'utf8');

/** The first capture of re in the document; fails when the statement is gone. */
function stated(re, what) {
  const m = doc.match(re);
  assert.ok(m, `docs/flight-api.md no longer states ${what} (${re})`);
  return m[1];
}

const REVISION = Number(stated(/^# .*protocol version 1 \(revision (\d+)\)/m, 'its revision'));
const ACTIONS = stated(/Every action above \(([^)]+)\)/, 'the actions ListActions lists')
  .split(',').map((a) => a.trim().replace(/`/g, '')).sort();
const capOf = (flag) => 2 ** Number(stated(new RegExp(`\\| \`--${flag}\` \\(\`\\w+\`\\) \\| 2\\^(\\d+)`), `the default of --${flag}`));
const UNSUPPORTED_EXAMPLE = stated(/message names the column and its type, e\.g\. `([^`]+)`/, 'how an unsupported column is named').replace(/\s+/g, ' ');

// --- the hash rule, as the document states it -----------------------------

const M64 = (1n << 64n) - 1n;
const S = 0x9E3779B97F4A7C15n;

function fmix64(x) {
  x ^= x >> 33n;
  x = (x * 0xFF51AFD7ED558CCDn) & M64;
  x ^= x >> 33n;
  x = (x * 0xC4CEB9FE1A85EC53n) & M64;
  x ^= x >> 33n;
  return x;
}

function hashBytes(b) {
  let h = S ^ BigInt(b.length);
  if (b.length === 0) return fmix64(h);
  for (let o = 0; o < b.length; o += 8) {
    const word = Buffer.alloc(8);
    b.copy(word, 0, o, Math.min(o + 8, b.length));
    h = fmix64(h ^ word.readBigUInt64LE(0));
  }
  return h;
}

const hashInt64 = (v) => fmix64(S ^ 8n ^ BigInt.asUintN(64, BigInt(v)));
const combine = (h, c) => fmix64((((h * S) & M64) + c) & M64);
const reduce = (h, p) => Number((h * BigInt(p)) >> 64n);

// The document's worked value: the int64 key 0.
assert.equal(hashInt64(0), 0xecc3d462bf4e9f2bn, 'hash of the int64 0');
assert.equal(reduce(hashInt64(0), 1000), 924, 'partition of the int64 0 of 1000');

/** The partition of a row with keys (int64 key, nullable string name). */
function partitionOf(key, name, P) {
  if (name === null) return 0;
  return reduce(combine(hashInt64(key), hashBytes(Buffer.from(name, 'utf8'))), P);
}

// --- input ------------------------------------------------------------------

const TASKS = 50;
const PARTITIONS = 7;
const ROWS_PER_TASK = 120;

const schema = new arrow.Schema([
  new arrow.Field('row', new arrow.Int64(), false),
  new arrow.Field('key', new arrow.Int64(), false),
  new arrow.Field('name', new arrow.Utf8(), true),
  new arrow.Field('score', new arrow.Float64(), false),
]);

/** Builds a record batch of schema from column arrays. */
function batch(sch, cols) {
  const children = sch.fields.map((fl, i) => arrow.vectorFromArray(cols[i], fl.type).data[0]);
  const data = arrow.makeData({ type: new arrow.Struct(sch.fields), length: cols[0].length, nullCount: 0, children });
  return new arrow.RecordBatch(sch, data);
}

/** Task t's rows, the same on every attempt, in two batches. */
function taskBatches(t) {
  const rows = [...Array(ROWS_PER_TASK).keys()].map((i) => t * 1000 + i);
  const cols = (ids) => [
    BigInt64Array.from(ids, (r) => BigInt(r)),
    BigInt64Array.from(ids, (r) => BigInt((r * 7919) % 613) - 300n),
    ids.map((r) => (r % 17 === 0 ? null : `n${r % 101}-${'x'.repeat(r % 13)}`)),
    Float64Array.from(ids, (r) => r / 3),
  ];
  const half = ROWS_PER_TASK / 2;
  return [batch(schema, cols(rows.slice(0, half))), batch(schema, cols(rows.slice(half)))];
}

function expectedRow(r) {
  const key = (r * 7919) % 613 - 300;
  const name = r % 17 === 0 ? null : `n${r % 101}-${'x'.repeat(r % 13)}`;
  return { key, name };
}

// --- driving a shuffle ------------------------------------------------------

// The codes after which a put runs again with a new attempt number.
const RETRY = [code.UNAVAILABLE, code.INTERNAL, code.UNKNOWN, code.CANCELLED, code.DEADLINE_EXCEEDED];

/** Puts tasks (attempt numbers from next), a few at a time, spread over the nodes of pool. */
async function putAll(id, tasks, next, input, sch, pool = clients) {
  const queue = [...tasks];
  const worker = async () => {
    for (let t = queue.shift(); t !== undefined; t = queue.shift()) {
      for (let tries = 0; ; tries++) {
        const attempt = next(t);
        const c = pool[(t + attempt) % pool.length];
        try {
          await f.put(c, { shuffle: id, task: t, attempt }, sch, input(t));
          break;
        } catch (err) {
          if (!RETRY.includes(err.code)) throw new Error(`put of ${id} task ${t} attempt ${attempt}: ${err.message}`);
          if (tries >= 2) break; // left to the barrier, which names it again
        }
      }
    }
  };
  await Promise.all([...Array(2 * pool.length)].map(worker));
}

/** A shuffle's attempt numbers: next(t) is a number task t never used. */
function attemptCounter() {
  const used = new Map();
  return (t) => { const a = used.get(t) || 0; used.set(t, a + 1); return a; };
}

/**
 * Creates the shuffle on clients[0] (its coordinator), puts every task,
 * and runs barrier rounds until sealed. Resolves with its attempt counter.
 */
async function runShuffle(spec, input, sch) {
  const reply = await f.action(clients[0], 'create', { ...spec, version: 1 });
  assert.deepEqual(reply, { shuffle: spec.id, coordinator: reply.coordinator, version: 1 }, 'create reply');
  const next = attemptCounter();
  await sealRounds(spec.id, [...Array(spec.tasks).keys()], next, input, sch, clients);
  return next;
}

/**
 * Puts tasks, then barrier rounds (on pool[0]) putting each round's
 * replay with new attempt numbers, until sealed; resolves with the last
 * barrier reply.
 */
async function sealRounds(id, tasks, next, input, sch, pool) {
  for (let round = 1; ; round++) {
    await putAll(id, tasks, next, input, sch, pool);
    const b = await f.action(pool[0], 'barrier', { shuffle: id });
    assert.equal(typeof b.epoch, 'number', 'barrier reply has an epoch');
    if (b.sealed) {
      if (tasks.length || round > 1) log(`${id}: sealed after ${round} round(s), epoch ${b.epoch}`);
      return b;
    }
    assert.ok(round < 30, `${id} not sealed after 30 rounds`);
    tasks = b.replay || [];
    await sleep(100);
  }
}

/** The spec of the hash shuffle id over the test's input. */
const hashSpec = (id) => ({
  id, kind: 'dataframe', tasks: TASKS, partitions: PARTITIONS,
  schema: f.serializeSchema(schema).toString('base64'),
  rule: { kind: 'hash', columns: ['key', 'name'] },
});

async function hashShuffle() {
  const id = `${prefix}-hash`;
  await runShuffle(hashSpec(id), taskBatches, schema);
  const got = (await f.getSchema(clients[1], id));
  assert.deepEqual(got.fields.map((x) => `${x.name}:${x.type}:${x.nullable}`), schema.fields.map((x) => `${x.name}:${x.type}:${x.nullable}`), 'GetSchema');
  for (const method of ['GetSchema', 'GetFlightInfo']) {
    const b = await f.schemaBytes(clients[0], id, method);
    assert.equal(b.readUInt32LE(0), 0xffffffff, `${method}: the serialized schema starts with the continuation marker`);
    assert.equal(b.length, 8 + b.readInt32LE(4), `${method}: the serialized schema is 8 + n bytes, nothing after the message`);
  }
  const eps = await f.locations(clients[2 % clients.length], id);
  assert.equal(eps.length, PARTITIONS, 'one endpoint per partition');
  const seen = new Map();
  const byPartition = [];
  for (const ep of eps) {
    const table = await f.read(clientAt(ep.addr), ep.ticket);
    const rows = [...table.getChild('row')].map(Number);
    byPartition.push(rows);
    const keys = [...table.getChild('key')].map(Number);
    const names = [...table.getChild('name')];
    rows.forEach((r, i) => {
      assert.ok(!seen.has(r), `row ${r} in partitions ${seen.get(r)} and ${ep.partition}`);
      seen.set(r, ep.partition);
      const want = expectedRow(r);
      assert.equal(keys[i], want.key, `row ${r} key`);
      assert.equal(names[i], want.name, `row ${r} name`);
      assert.equal(partitionOf(keys[i], names[i], PARTITIONS), ep.partition, `row ${r} (key ${keys[i]}, name ${names[i]}) in partition ${ep.partition}`);
      if (i > 0) assert.ok(Math.floor(rows[i - 1] / 1000) <= Math.floor(r / 1000), `partition ${ep.partition}: rows not in task order at ${r}`);
    });
  }
  assert.equal(seen.size, TASKS * ROWS_PER_TASK, 'every row arrived once');
  await sortOp(id, eps[1], byPartition[1]);
  log(`${id}: ${seen.size} rows, each once, in the partition the hash rule names, in task order`);
  return { shuffle: id, partitions: byPartition };
}

/** Sorts partition ep.partition by key at its owner (an op ticket). */
async function sortOp(id, ep, rows) {
  const { table, stats, metas } = await f.runOp(clientAt(ep.addr), { op: 'sort', shuffles: [id], partition: ep.partition, column: 'key' });
  assert.equal(metas[0], metas[1], 'op stats: the schema message carries the first batch\'s');
  assert.ok(metas.slice(2).every((m) => m === ''), 'op stats: later batches carry none');
  assert.deepEqual(stats.input_rows, [rows.length], 'sort stats: input rows');
  assert.equal(stats.remote, 0, 'sort at the owner reads nothing remote');
  const keys = [...table.getChild('key')].map(Number);
  const got = [...table.getChild('row')].map(Number);
  assert.deepEqual([...got].sort((a, b) => a - b), [...rows].sort((a, b) => a - b), 'sort keeps the rows');
  keys.forEach((k, i) => assert.ok(i === 0 || keys[i - 1] <= k, `sorted by key at row ${i}`));
  keys.forEach((k, i) => assert.ok(i === 0 || keys[i - 1] < k || got[i - 1] < got[i], `stable sort at row ${i}`));
  log(`${id}: sort op of partition ${ep.partition} on its owner ${stats.node}: ${got.length} rows in key order, stable`);
}

// --- a co-partitioned join at the owners ---------------------------------------

const JOIN_P = 5;
const leftSchema = new arrow.Schema([
  new arrow.Field('row', new arrow.Int64(), false),
  new arrow.Field('key', new arrow.Int64(), false),
]);
const rightSchema = new arrow.Schema([
  new arrow.Field('rkey', new arrow.Int64(), false),
  new arrow.Field('rval', new arrow.Int64(), false),
]);
const leftRows = (t) => [...Array(50).keys()].map((i) => t * 1000 + i);
const leftKey = (r) => (r * 31) % 97; // keys 0..96; the right side has 0..79
const big = (xs) => BigInt64Array.from(xs, (x) => BigInt(x));
const leftInput = (t) => [batch(leftSchema, [big(leftRows(t)), big(leftRows(t).map(leftKey))])];
const rightKeys = (t) => [...Array(40).keys()].map((i) => t * 40 + i);
const rightInput = (t) => [batch(rightSchema, [big(rightKeys(t)), big(rightKeys(t).map((k) => 10 * k))])];
const keyPartition = (k) => reduce(hashInt64(k), JOIN_P);

/**
 * Creates a left and a co-partitioned right shuffle, runs both, and joins
 * every partition at the owner its left endpoint names: nothing remote,
 * every left row with a matching key once, with the right value.
 */
async function coPartitionJoin() {
  const [l, r] = [`${prefix}-left`, `${prefix}-right`];
  const df = (id, sch, tasks, key, extra) => ({
    id, kind: 'dataframe', tasks, partitions: JOIN_P, schema: f.serializeSchema(sch).toString('base64'),
    rule: { kind: 'hash', columns: [key] }, ...extra,
  });
  await runShuffle(df(l, leftSchema, 4, 'key'), leftInput, leftSchema);
  await runShuffle(df(r, rightSchema, 2, 'rkey', { co_partition: l }), rightInput, rightSchema);
  const [el, er] = [await f.locations(clients[1], l), await f.locations(clients[2 % clients.length], r)];
  assert.deepEqual(el.map((e) => e.addr), er.map((e) => e.addr), 'co-partitioned: partition p of both on one node');
  let joined = 0;
  for (const ep of el) joined += await joinAt(l, r, ep);
  const all = [0, 1, 2, 3].flatMap(leftRows).filter((x) => leftKey(x) < 80);
  assert.equal(joined, all.length, 'the join gives every left row with a right key once');
  await f.action(clients[0], 'close', { shuffle: l });
  await f.action(clients[0], 'close', { shuffle: r });
  log(`${l} join ${r}: ${joined} rows over ${JOIN_P} partitions, each joined at its owner, nothing remote`);
}

/** Joins partition ep.partition of l and r at its owner; resolves with the row count. */
async function joinAt(l, r, ep) {
  const p = ep.partition;
  const op = { op: 'join', shuffles: [l, r], partition: p, join: { left_on: ['key'], right_on: ['rkey'], how: 'inner' } };
  const { table, stats } = await f.runOp(clientAt(ep.addr), op);
  const lefts = [0, 1, 2, 3].flatMap(leftRows).filter((x) => keyPartition(leftKey(x)) === p);
  const rights = [0, 1].flatMap(rightKeys).filter((k) => keyPartition(k) === p);
  assert.deepEqual(stats.input_rows, [lefts.length, rights.length], `join partition ${p}: input rows`);
  assert.equal(stats.remote, 0, `join partition ${p} at its owner reads nothing remote`);
  assert.deepEqual(table.schema.fields.map((x) => x.name), ['row', 'key', 'rkey', 'rval'], `join partition ${p}: the left's columns, then the right's`);
  const rows = [...table.getChild('row')].map(Number);
  const vals = [...table.getChild('rval')].map(Number);
  rows.forEach((x, i) => assert.equal(vals[i], 10 * leftKey(x), `join partition ${p}: row ${x} got rval ${vals[i]}`));
  assert.deepEqual([...rows].sort((a, b) => a - b), lefts.filter((x) => leftKey(x) < 80).sort((a, b) => a - b), `join partition ${p}: rows`);
  return rows.length;
}

// --- an array rechunk ---------------------------------------------------------

const SHAPE = [6, 8];
const OLD = [[3, 3], [4, 4]];
const NEW = [[2, 2, 2], [8]];

const starts = (axis) => axis.reduce((acc, n) => [...acc, acc[acc.length - 1] + n], [0]);

/** The elements (int32, value = row*8+col) of the chunk at grid index g of chunks. */
function chunkBytes(chunks, g) {
  const [r0, c0] = [starts(chunks[0])[g[0]], starts(chunks[1])[g[1]]];
  const [nr, nc] = [chunks[0][g[0]], chunks[1][g[1]]];
  const b = Buffer.alloc(nr * nc * 4);
  for (let r = 0; r < nr; r++) for (let c = 0; c < nc; c++) b.writeInt32LE((r0 + r) * SHAPE[1] + c0 + c, (r * nc + c) * 4);
  return { shape: [nr, nc], data: b };
}

const gridIndex = (chunks, i) => [Math.floor(i / chunks[1].length), i % chunks[1].length];

function chunkSchema(dtype) {
  return new arrow.Schema([
    new arrow.Field('data', new arrow.LargeBinary(), false),
    new arrow.Field('shape', new arrow.Utf8(), false),
  ], new Map([['dtype', dtype]]));
}

async function arrayRechunk() {
  const id = `${prefix}-array`;
  const sch = chunkSchema('<i4');
  const input = (t) => {
    const c = chunkBytes(OLD, gridIndex(OLD, t));
    return [batch(sch, [[c.data], [JSON.stringify(c.shape)]])];
  };
  await f.action(clients[0], 'create', { id, kind: 'array', dtype: '<i4', old_chunks: OLD, new_chunks: NEW, tasks: 4, partitions: 3, version: 1 });
  const first = await f.put(clients[1], { shuffle: id, task: 0, attempt: 100 }, sch, input(0));
  assert.equal(first.rows, 1, 'an array put\'s rows: 1, its chunk');
  assert.ok(first.bytes > 0 && first.input_bytes > 0, 'an array put\'s bytes and input_bytes');
  await sealRounds(id, [1, 2, 3], attemptCounter(), input, sch, clients);
  for (const ep of await f.locations(clients[0], id)) {
    const table = await f.read(clientAt(ep.addr), ep.ticket);
    assert.equal(table.numRows, 1, `new chunk ${ep.partition} is one row`);
    const dd = JSON.parse(table.schema.metadata.get('dim_data')).dim_data;
    dd.forEach((d, a) => {
      assert.equal(d.dist_type, 'b', `new chunk ${ep.partition} axis ${a}: block`);
      assert.ok('start' in d && 'stop' in d, `new chunk ${ep.partition} axis ${a}: start and stop`);
      assert.ok(!('padding' in d) && !('periodic' in d), `new chunk ${ep.partition} axis ${a}: no padding, no periodic key without them`);
    });
    const want = chunkBytes(NEW, gridIndex(NEW, ep.partition));
    assert.deepEqual(JSON.parse(table.getChild('shape').get(0)), want.shape, `new chunk ${ep.partition} shape`);
    assert.ok(Buffer.from(table.getChild('data').get(0)).equals(want.data), `new chunk ${ep.partition} bytes`);
    assert.equal(table.schema.metadata.get('dtype'), '<i4', 'chunk dtype metadata');
  }
  const layout = await f.action(clients[1], 'layout', { shuffle: id });
  assert.deepEqual(layout.shape, SHAPE, 'layout shape');
  assert.deepEqual(layout.partition_tiling, [3, 1], 'layout tiling');
  assert.deepEqual(layout.partitions['2,0'].start, [4, 0], 'layout start of chunk 2,0');
  assert.deepEqual(layout.partitions['2,0'].data, { shuffle: id, partition: 2 }, 'layout ticket');
  await f.action(clients[0], 'close', { shuffle: id });
  log(`${id}: 4 old chunks -> 3 new chunks, every element in place; layout as documented`);
}

// --- bad requests, the other verbs ------------------------------------------

/** Resolves with the gRPC status code p fails with (0 if it does not). */
async function codeOf(p) {
  try { await p; return code.OK; } catch (err) { return err.code; }
}

async function badRequests() {
  const codes = {};
  const expect = async (name, p, want) => {
    codes[name] = await codeOf(p);
    assert.equal(codes[name], want, `${name}: code ${codes[name]}, want ${want}`);
  };
  const id = `${prefix}-bad`;
  await expect('unknown shuffle: barrier', f.action(clients[1], 'barrier', { shuffle: `${prefix}-nope` }), code.NOT_FOUND);
  await expect('unknown shuffle: GetFlightInfo', f.locations(clients[0], `${prefix}-nope`), code.NOT_FOUND);
  await expect('unknown shuffle: GetSchema', f.getSchema(clients[0], `${prefix}-nope`), code.NOT_FOUND);
  await expect('unknown shuffle: put', f.put(clients[0], { shuffle: `${prefix}-nope`, task: 0, attempt: 0 }, schema, taskBatches(0)), code.NOT_FOUND);
  const spec = { id, kind: 'dataframe', tasks: 2, partitions: 3, schema: f.serializeSchema(schema).toString('base64'), rule: { kind: 'hash', columns: ['key'] } };
  await expect('create: bad spec', f.action(clients[0], 'create', { ...spec, partitions: 0 }), code.INVALID_ARGUMENT);
  await expect('create: future version', f.action(clients[0], 'create', { ...spec, version: 99 }), code.UNIMPLEMENTED);
  await expect('create', f.action(clients[0], 'create', spec), code.OK);
  await expect('create: same ID', f.action(clients[1], 'create', spec), code.ALREADY_EXISTS);
  const other = new arrow.Schema([new arrow.Field('row', new arrow.Int32(), false)]);
  await expect('put: wrong schema', f.put(clients[1], { shuffle: id, task: 0, attempt: 0 }, other, [batch(other, [Int32Array.of(1, 2)])]), code.INVALID_ARGUMENT);
  await expect('put: task out of range', f.put(clients[1], { shuffle: id, task: 2, attempt: 0 }, schema, taskBatches(2)), code.INVALID_ARGUMENT);
  const first = await f.put(clients[1], { shuffle: id, task: 0, attempt: 0 }, schema, taskBatches(0));
  assert.deepEqual(first, { rows: ROWS_PER_TASK, bytes: first.bytes, input_bytes: first.input_bytes }, 'first put reply');
  assert.ok(first.input_bytes > 0, 'a put reply counts the Arrow bytes it read');
  await expect('put: same attempt again, same node', f.put(clients[1], { shuffle: id, task: 0, attempt: 0 }, schema, taskBatches(0)), code.OK);
  const same = await f.put(clients[1], { shuffle: id, task: 0, attempt: 0 }, schema, taskBatches(0));
  assert.deepEqual(same, { rows: 0, bytes: 0, skipped: true }, 'the same (task, attempt) again once its task is done: skipped, rows 0');
  const again = await f.put(clients[2 % clients.length], { shuffle: id, task: 0, attempt: 1 }, schema, taskBatches(0));
  assert.equal(again.skipped, true, 'a put of a finished task is skipped');
  const eps = await f.locations(clients[0], id);
  await expect('DoGet before the seal', f.read(clientAt(eps[0].addr), eps[0].ticket), code.FAILED_PRECONDITION);
  await expect('DoGet: partition out of range', f.read(clients[0], Buffer.from(JSON.stringify({ shuffle: id, partition: 3 }))), code.INVALID_ARGUMENT);
  const b = await f.action(clients[2 % clients.length], 'barrier', { shuffle: id });
  assert.deepEqual([b.sealed, b.replay], [false, [1]], 'the barrier names the task never put');
  await f.put(clients[0], { shuffle: id, task: 1, attempt: 0 }, schema, taskBatches(1));
  assert.equal((await f.action(clients[0], 'barrier', { shuffle: id })).sealed, true, 'sealed once task 1 is in');
  const late = await f.put(clients[0], { shuffle: id, task: 1, attempt: 5 }, schema, taskBatches(1));
  assert.deepEqual(late, { rows: 0, bytes: 0, skipped: true }, 'a put after the seal is skipped, rows 0');
  const latePair = await f.put(clients[0], { shuffle: id, task: 1, attempt: 0 }, schema, taskBatches(1));
  assert.deepEqual(latePair, { rows: 0, bytes: 0, skipped: true }, 'the same (task, attempt) after the seal: skipped, as before it');
  await expect('unknown action', f.action(clients[0], 'explode', {}), code.UNIMPLEMENTED);
  Object.assign(codes, await documentedRefusals(spec));
  await f.action(clients[0], 'close', { shuffle: id });
  await expect('closed shuffle: status', f.action(clients[0], 'status', { shuffle: id }), code.NOT_FOUND);
  log(`bad requests: ${Object.keys(codes).length} cases gave the documented codes`);
  return codes;
}

/** Resolves with the error p fails with (undefined if it does not). */
async function errorOf(p) {
  try { await p; return undefined; } catch (err) { return err; }
}

/**
 * The refusals the document describes by code and message: node caps,
 * unsupported column types, malformed puts, a create whose schema
 * carries an end-of-stream marker after it.
 */
async function documentedRefusals(spec) {
  const codes = {};
  const refused = async (name, p, want, mention) => {
    const err = await errorOf(p);
    codes[name] = err ? err.code : code.OK;
    assert.equal(codes[name], want, `${name}: code ${codes[name]}, want ${want} (${err && err.message})`);
    if (mention) assert.ok(err.details.includes(mention), `${name}: message ${JSON.stringify(err.details)} does not say ${JSON.stringify(mention)}`);
  };
  const capped = `${prefix}-capped`;
  await refused('create: over --max-tasks', f.action(clients[0], 'create', { ...spec, id: capped, tasks: capOf('max-tasks') + 1 }), code.RESOURCE_EXHAUSTED, '--max-tasks');
  await refused('create: over --max-partitions', f.action(clients[1], 'create', { ...spec, id: capped, partitions: capOf('max-partitions') + 1 }), code.RESOURCE_EXHAUSTED, '--max-partitions');
  const listSchema = new arrow.Schema([...schema.fields.slice(0, 2),
    new arrow.Field('tags', new arrow.List(new arrow.Field('item', new arrow.Int64(), true)), true)]);
  await refused('create: unsupported column type', f.action(clients[0], 'create', { ...spec, id: capped, schema: f.serializeSchema(listSchema).toString('base64') }),
    code.INVALID_ARGUMENT, UNSUPPORTED_EXAMPLE);
  const [head] = f.ipcMessages(f.ipcStream(schema, []));
  const desc = f.cmdDescriptor({ shuffle: spec.id, task: 0, attempt: 50 });
  const cut = { flight_descriptor: desc, data_header: head.header.subarray(0, head.header.length >> 1), data_body: Buffer.alloc(0) };
  await refused('put: schema message cut short', f.putFrames(clients[0], [cut]), code.INVALID_ARGUMENT);
  const huge = Buffer.from(head.header);
  huge.fill(0xff, 8, 24);
  await refused('put: garbage schema message', f.putFrames(clients[0], [{ ...cut, data_header: huge }]), code.INVALID_ARGUMENT);
  const eos = Buffer.concat([f.serializeSchema(schema), Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0])]);
  await refused('create: schema with an end-of-stream marker', f.action(clients[0], 'create', { ...spec, id: `${prefix}-eos`, schema: eos.toString('base64') }), code.INVALID_ARGUMENT);
  return codes;
}

async function verbs() {
  const hs = await f.handshake(clients[0]);
  assert.equal(hs.protocol_version, 1, 'handshake protocol_version');
  assert.equal(hs.payload.version, 1, 'handshake payload version');
  assert.equal(hs.payload.auth, token ? 'bearer' : undefined, 'handshake auth: bearer exactly when the node has a token');
  assert.equal(hs.payload.revision, REVISION, 'handshake revision: the document\'s');
  const actions = (await f.listActions(clients[1])).map((a) => a.type).sort();
  assert.deepEqual(actions, ACTIONS, 'ListActions: the actions the document lists');
  const m = await f.action(clients[2 % clients.length], 'members');
  assert.equal(m.version, 1, 'members version');
  assert.equal(m.members.length, nodes.length, 'members count');
  assert.deepEqual(m.members.map((x) => x.api_addr).sort(), [...nodes].sort(), 'members api_addr');
  assert.equal(m.revision, REVISION, 'members revision');
  const raw = await f.action(clients[0], 'members', Buffer.from('not json {'));
  assert.equal(raw.members.length, nodes.length, 'members ignores a body that is not JSON');
  log('handshake, ListActions and members as documented');
}

async function statusOf(id) {
  const st = await f.action(clients[0], 'status', { shuffle: id });
  assert.equal(st.phase, 'sealed', 'status phase');
  assert.equal(st.tasks_done, TASKS, 'status tasks_done on the coordinator');
}

// --- authentication -------------------------------------------------------------

/**
 * On nodes with a token: calls without it, or with a wrong one, fail with
 * UNAUTHENTICATED, Handshake included. Resolves with the codes by case.
 */
async function authChecks() {
  const codes = {};
  const anon = f.connect(nodes[0]);
  const wrong = f.connect(nodes[1 % nodes.length], 'not-the-token');
  const nope = `${prefix}-nope`;
  const cases = { // thunks: each call starts when its turn comes, so none rejects unheard
    'no token: handshake': () => f.handshake(anon),
    'no token: members': () => f.action(anon, 'members'),
    'no token: put': () => f.put(anon, { shuffle: nope, task: 0, attempt: 0 }, schema, taskBatches(0)),
    'no token: DoGet': () => f.read(anon, Buffer.from(JSON.stringify({ shuffle: nope, partition: 0 }))),
    'wrong token: handshake': () => f.handshake(wrong),
    'wrong token: GetFlightInfo': () => f.locations(wrong, nope),
  };
  for (const [name, call] of Object.entries(cases)) {
    codes[name] = await codeOf(call());
    assert.equal(codes[name], code.UNAUTHENTICATED, `${name}: code ${codes[name]}, want UNAUTHENTICATED`);
  }
  anon.close();
  wrong.close();
  log(`authentication: ${Object.keys(codes).length} calls without the right token refused with UNAUTHENTICATED`);
  return codes;
}

// --- resuming reads after a lost owner ------------------------------------------

const rowsOf = (table) => [...table.getChild('row')].map(Number);

// The codes after which a read may be explained by a lost owner.
const RESUME = [code.UNAVAILABLE, code.FAILED_PRECONDITION, ...RETRY];

/**
 * Runs a hash shuffle and reads it; kills the process pid (serving the
 * last address); then reads every partition again as the document says,
 * for the lost node's partitions as if the first half of their rows had
 * arrived before the failure. Every partition must give the same rows in
 * the same order, from a live owner, in a later epoch.
 */
async function lostOwner(pid) {
  const id = `${prefix}-lost`;
  const next = await runShuffle(hashSpec(id), taskBatches, schema);
  const eps = await f.locations(clients[1], id);
  const before = [];
  for (const ep of eps) before.push(rowsOf(await f.read(clientAt(ep.addr), ep.ticket)));
  const victim = nodes[nodes.length - 1];
  const lost = eps.filter((e) => e.addr === victim).map((e) => e.partition);
  assert.ok(lost.length > 0, `${victim} owns no partition of ${id}`);
  process.kill(pid, 'SIGKILL');
  log(`${id}: killed ${victim} (pid ${pid}), owner of partitions ${lost}`);
  const r = { id, next, pool: clients.slice(0, -1), eps, epoch: 0, recoveries: 0 };
  for (const ep of eps) {
    const half = lost.includes(ep.partition) ? before[ep.partition].slice(0, before[ep.partition].length >> 1) : [];
    const rows = await resumeRead(r, ep.partition, half);
    assert.deepEqual(rows, before[ep.partition], `partition ${ep.partition} after the loss: the same rows in the same order`);
  }
  const final = await f.locations(r.pool[0], id);
  assert.ok(final.every((e) => e.addr !== victim), 'no partition is left on the lost node');
  assert.ok(r.epoch >= 1, `epoch ${r.epoch} after a lost node`);
  await f.action(r.pool[0], 'close', { shuffle: id });
  log(`${id}: every partition read again after the loss, ${r.recoveries} recovery round(s), epoch ${r.epoch}`);
  return { shuffle: id, lost, epoch: r.epoch, recoveries: r.recoveries };
}

/**
 * Reads partition p, resuming after failures: recover, then read from the
 * (new) owner skipping the rows already had. Gives up after 30 s without
 * a replay, a new location or a new epoch.
 */
async function resumeRead(r, p, have) {
  let progress = Date.now();
  for (;;) {
    const ep = r.eps[p];
    try {
      const got = rowsOf(await f.read(clientAt(ep.addr), ep.ticket));
      return have.concat(got.slice(have.length));
    } catch (err) {
      if (!RESUME.includes(err.code)) throw new Error(`read of partition ${p}: ${err.message}`);
      assert.ok(Date.now() - progress < 30_000, `partition ${p}: no progress for 30 s: ${err.message}`);
      if (await recover(r)) progress = Date.now();
    }
  }
}

/**
 * The document's steps 1-3: wait; barrier rounds with the replays put
 * again under new attempt numbers (on live nodes) until sealed;
 * GetFlightInfo again. Resolves true if the epoch or a location moved.
 */
async function recover(r) {
  await sleep(250);
  let b;
  try {
    b = await sealRounds(r.id, [], r.next, taskBatches, schema, r.pool);
  } catch (err) {
    if (err.code !== code.UNAVAILABLE) throw err;
    return false; // the barrier: wait and retry
  }
  const eps = await f.locations(r.pool[0], r.id);
  const moved = b.epoch !== r.epoch || eps.some((e, i) => e.addr !== r.eps[i].addr);
  Object.assign(r, { eps, epoch: b.epoch, recoveries: r.recoveries + 1 });
  return moved;
}

async function main() {
  if (args.lostOwner) {
    const lost = await lostOwner(args.lostOwner);
    process.stdout.write(`${JSON.stringify({ lost })}\n`);
    return;
  }
  const codes = token ? await authChecks() : {};
  await verbs();
  const hash = await hashShuffle();
  await statusOf(hash.shuffle);
  await arrayRechunk();
  await coPartitionJoin();
  Object.assign(codes, await badRequests());
  process.stdout.write(`${JSON.stringify({ hash, codes })}\n`);
}

main().then(() => process.exit(0), (err) => {
  console.error('conformance: FAIL:', err.message);
  process.exit(1);
});
