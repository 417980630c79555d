'use strict';
// The conformance client: drives a running shufflenode cluster through
// Flight as docs/flight-api.md says, and checks what the document promises.
//
//   node conformance.js HOST:PORT,HOST:PORT,... [ID-PREFIX]
//
// It prints what it checks on stderr, and on stdout one JSON line the Go
// test compares with its own client: the hash shuffle's row IDs per
// partition and the status code of each bad request. It exits 1 on the
// first broken promise. The hash shuffle is left open for that comparison.

const assert = require('node:assert/strict');
const f = require('./flight');

const { arrow, grpc } = f;
const code = grpc.status;
const log = (...a) => console.error('conformance:', ...a);

const nodes = (process.argv[2] || '').split(',').filter(Boolean);
const prefix = process.argv[3] || `node-${process.pid}`;
if (nodes.length === 0) {
  console.error('usage: node conformance.js HOST:PORT[,HOST:PORT...] [ID-PREFIX]');
  process.exit(2);
}
const clients = nodes.map(f.connect);
const byAddr = new Map(nodes.map((a, i) => [a, clients[i]]));
const clientAt = (addr) => {
  if (!byAddr.has(addr)) byAddr.set(addr, f.connect(addr));
  return byAddr.get(addr);
};

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

/** Puts tasks (attempt numbers from next), a few at a time, spread over nodes. */
async function putAll(id, tasks, next, input, sch) {
  const queue = [...tasks];
  const worker = async () => {
    for (let t = queue.shift(); t !== undefined; t = queue.shift()) {
      for (let tries = 0; ; tries++) {
        const attempt = next(t);
        const c = clients[(t + attempt) % clients.length];
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
  await Promise.all([...Array(2 * clients.length)].map(worker));
}

/** Creates, puts every task, and runs barrier rounds until sealed. */
async function runShuffle(spec, input, sch) {
  const reply = await f.action(clients[0], 'create', { ...spec, version: 1 });
  assert.deepEqual(reply, { shuffle: spec.id, coordinator: reply.coordinator, version: 1 }, 'create reply');
  const attempts = new Map();
  const next = (t) => { const a = attempts.get(t) || 0; attempts.set(t, a + 1); return a; };
  let tasks = [...Array(spec.tasks).keys()];
  for (let round = 1; ; round++) {
    await putAll(spec.id, tasks, next, input, sch);
    const b = await f.action(clients[0], 'barrier', { shuffle: spec.id });
    assert.equal(typeof b.epoch, 'number', 'barrier reply has an epoch');
    if (b.sealed) {
      log(`${spec.id}: sealed after ${round} round(s), epoch ${b.epoch}`);
      return;
    }
    assert.ok(round < 30, `${spec.id} not sealed after 30 rounds`);
    tasks = b.replay || [];
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function hashShuffle() {
  const id = `${prefix}-hash`;
  await runShuffle({
    id, kind: 'dataframe', tasks: TASKS, partitions: PARTITIONS,
    schema: f.serializeSchema(schema).toString('base64'),
    rule: { kind: 'hash', columns: ['key', 'name'] },
  }, taskBatches, schema);
  const got = (await f.getSchema(clients[1], id));
  assert.deepEqual(got.fields.map((x) => `${x.name}:${x.type}:${x.nullable}`), schema.fields.map((x) => `${x.name}:${x.type}:${x.nullable}`), 'GetSchema');
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
  const { table, stats } = await f.runOp(clientAt(ep.addr), { op: 'sort', shuffles: [id], partition: ep.partition, column: 'key' });
  assert.deepEqual(stats.input_rows, [rows.length], 'sort stats: input rows');
  assert.equal(stats.remote, 0, 'sort at the owner reads nothing remote');
  const keys = [...table.getChild('key')].map(Number);
  const got = [...table.getChild('row')].map(Number);
  assert.deepEqual([...got].sort((a, b) => a - b), [...rows].sort((a, b) => a - b), 'sort keeps the rows');
  keys.forEach((k, i) => assert.ok(i === 0 || keys[i - 1] <= k, `sorted by key at row ${i}`));
  keys.forEach((k, i) => assert.ok(i === 0 || keys[i - 1] < k || got[i - 1] < got[i], `stable sort at row ${i}`));
  log(`${id}: sort op of partition ${ep.partition} on its owner ${stats.node}: ${got.length} rows in key order, stable`);
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
  await runShuffle({ id, kind: 'array', dtype: '<i4', old_chunks: OLD, new_chunks: NEW, tasks: 4, partitions: 3 }, input, sch);
  for (const ep of await f.locations(clients[0], id)) {
    const table = await f.read(clientAt(ep.addr), ep.ticket);
    assert.equal(table.numRows, 1, `new chunk ${ep.partition} is one row`);
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
  assert.deepEqual(first, { rows: ROWS_PER_TASK, bytes: first.bytes }, 'first put reply');
  await expect('put: same attempt again, same node', f.put(clients[1], { shuffle: id, task: 0, attempt: 0 }, schema, taskBatches(0)), code.ALREADY_EXISTS);
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
  assert.equal(late.skipped, true, 'a put after the seal is skipped');
  await expect('unknown action', f.action(clients[0], 'explode', {}), code.UNIMPLEMENTED);
  await f.action(clients[0], 'close', { shuffle: id });
  await expect('closed shuffle: status', f.action(clients[0], 'status', { shuffle: id }), code.NOT_FOUND);
  log(`bad requests: ${Object.keys(codes).length} cases gave the documented codes`);
  return codes;
}

async function verbs() {
  const hs = await f.handshake(clients[0]);
  assert.equal(hs.protocol_version, 1, 'handshake protocol_version');
  assert.equal(hs.payload.version, 1, 'handshake payload version');
  const actions = (await f.listActions(clients[1])).map((a) => a.type).sort();
  assert.deepEqual(actions, ['barrier', 'close', 'create', 'layout', 'members', 'status'], 'ListActions');
  const m = await f.action(clients[2 % clients.length], 'members');
  assert.equal(m.version, 1, 'members version');
  assert.equal(m.members.length, nodes.length, 'members count');
  assert.deepEqual(m.members.map((x) => x.api_addr).sort(), [...nodes].sort(), 'members api_addr');
  log('handshake, ListActions and members as documented');
}

async function statusOf(id) {
  const st = await f.action(clients[0], 'status', { shuffle: id });
  assert.equal(st.phase, 'sealed', 'status phase');
  assert.equal(st.tasks_done, TASKS, 'status tasks_done on the coordinator');
}

async function main() {
  await verbs();
  const hash = await hashShuffle();
  await statusOf(hash.shuffle);
  await arrayRechunk();
  const codes = await badRequests();
  process.stdout.write(`${JSON.stringify({ hash, codes })}\n`);
}

main().then(() => process.exit(0), (err) => {
  console.error('conformance: FAIL:', err.message);
  process.exit(1);
});
