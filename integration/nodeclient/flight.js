'use strict';
// A small shufflenode client on Arrow Flight, written from
// docs/flight-api.md: gRPC calls (grpc-js), Arrow IPC framing on
// FlightData (apache-arrow), and the protocol's JSON bodies.

const path = require('node:path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const arrow = require('apache-arrow');

const MAX_MESSAGE = 256 << 20; // the protocol's message limit, both ways

const pkg = grpc.loadPackageDefinition(protoLoader.loadSync(path.join(__dirname, 'Flight.proto'), {
  keepCase: true, longs: String, enums: String, defaults: true,
}));
const FlightService = pkg.arrow.flight.protocol.FlightService;

/**
 * Connects to the Flight API at addr (host:port). With a token, every call
 * carries the metadata "authorization: Bearer <token>" (the document's
 * authentication section), added by a client interceptor.
 */
function connect(addr, token) {
  const opts = {
    'grpc.max_receive_message_length': MAX_MESSAGE,
    'grpc.max_send_message_length': MAX_MESSAGE,
  };
  if (token) opts.interceptors = [bearer(token)];
  return new FlightService(addr, grpc.credentials.createInsecure(), opts);
}

/** An interceptor that adds the bearer token to every call's metadata. */
function bearer(token) {
  return (options, nextCall) => new grpc.InterceptingCall(nextCall(options), {
    start(metadata, listener, next) {
      metadata.set('authorization', `Bearer ${token}`);
      next(metadata, listener);
    },
  });
}

const json = (v) => Buffer.from(JSON.stringify(v));
const cmdDescriptor = (v) => ({ type: 'CMD', cmd: json(v) });

/** Collects a server stream's messages; rejects with the call's error. */
function collect(call) {
  return new Promise((resolve, reject) => {
    const out = [];
    call.on('data', (m) => out.push(m));
    call.on('error', reject);
    call.on('end', () => resolve(out));
  });
}

function unary(client, method, req) {
  return new Promise((resolve, reject) => {
    client[method](req, { deadline: Date.now() + 60_000 }, (err, res) => (err ? reject(err) : resolve(res)));
  });
}

/**
 * Runs an action; resolves with its one JSON reply (undefined for none). A
 * Buffer body is sent as it is, anything else as JSON.
 */
async function action(client, type, body) {
  const raw = Buffer.isBuffer(body) ? body : json(body === undefined ? {} : body);
  const results = await collect(client.DoAction({ type, body: raw }));
  return results.length ? JSON.parse(Buffer.from(results[0].body).toString()) : undefined;
}

// --- Arrow IPC on Flight ------------------------------------------------

/** Splits IPC stream bytes into messages: {header, body}. */
function ipcMessages(buf) {
  const dv = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  const out = [];
  let o = 0;
  while (o + 8 <= buf.length) {
    let n = dv.getInt32(o, true);
    o += 4;
    if (n === -1) { n = dv.getInt32(o, true); o += 4; }
    if (n === 0) break;
    const header = buf.subarray(o, o + n);
    o += n;
    const bodyLen = Number(arrow.Message.decode(header).bodyLength);
    out.push({ header, body: buf.subarray(o, o + bodyLen) });
    o += bodyLen;
  }
  return out;
}

/** The IPC stream bytes of a schema and batches (a Table of them). */
function ipcStream(schema, batches) {
  return arrow.tableToIPC(new arrow.Table(schema, batches), 'stream');
}

/** The serialized schema of the protocol: one encapsulated message. */
function serializeSchema(schema) {
  const b = ipcStream(schema, []);
  const n = new DataView(b.buffer, b.byteOffset).getInt32(4, true);
  return Buffer.from(b.subarray(0, 8 + n));
}

/** Decodes a serialized schema (FlightInfo.schema, SchemaResult.schema). */
function deserializeSchema(bytes) {
  const eos = Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
  return arrow.tableFromIPC(Buffer.concat([Buffer.from(bytes), eos])).schema;
}

/** Rebuilds an IPC stream from FlightData messages. */
function flightDataToIPC(msgs) {
  const parts = [];
  for (const m of msgs) {
    const header = Buffer.from(m.data_header || []);
    if (!header.length) continue;
    const pad = (8 - (header.length % 8)) % 8;
    const prefix = Buffer.alloc(8);
    prefix.writeUInt32LE(0xffffffff, 0);
    prefix.writeInt32LE(header.length + pad, 4);
    parts.push(prefix, header, Buffer.alloc(pad), Buffer.from(m.data_body || []));
  }
  parts.push(Buffer.from([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]));
  return Buffer.concat(parts);
}

// --- the shuffle's calls --------------------------------------------------

/**
 * Puts one task attempt: the batches (of schema) as a DoPut stream tagged
 * with {shuffle, task, attempt}. Resolves with the PutReply JSON.
 */
function put(client, cmd, schema, batches) {
  return putFrames(client, ipcMessages(ipcStream(schema, batches)).map((m, i) => (
    { flight_descriptor: i === 0 ? cmdDescriptor(cmd) : null, data_header: m.header, data_body: m.body })));
}

/** Sends FlightData messages as one DoPut; resolves with the PutReply JSON. */
function putFrames(client, frames) {
  return new Promise((resolve, reject) => {
    const call = client.DoPut({ deadline: Date.now() + 120_000 });
    let reply;
    call.on('data', (r) => { reply = JSON.parse(Buffer.from(r.app_metadata).toString()); });
    call.on('error', reject);
    call.on('end', () => resolve(reply));
    frames.forEach((fd) => call.write(fd));
    call.end();
  });
}

/** Lists a shuffle's endpoints: [{partition, addr, ticket}]. */
async function locations(client, shuffle) {
  const info = await unary(client, 'GetFlightInfo', cmdDescriptor({ shuffle }));
  return info.endpoint.map((e, i) => ({
    partition: i,
    addr: e.location[0].uri.replace(/^grpc\+tcp:\/\//, ''),
    ticket: Buffer.from(e.ticket.ticket),
  }));
}

/** DoGets a ticket; resolves with the stream's Table. */
async function read(client, ticket) {
  const msgs = await collect(client.DoGet({ ticket }));
  return arrow.tableFromIPC(flightDataToIPC(msgs));
}

/**
 * DoGets an op ticket; resolves with the result's Table, the stats of its
 * first batch's app metadata, and the app metadata of every message
 * (strings, '' for none; the first is the schema message's).
 */
async function runOp(client, op) {
  const msgs = await collect(client.DoGet({ ticket: json(op) }));
  const metas = msgs.map((m) => Buffer.from(m.app_metadata || []).toString());
  const stats = metas.length > 1 && metas[1] ? JSON.parse(metas[1]) : undefined;
  return { table: arrow.tableFromIPC(flightDataToIPC(msgs)), stats, metas };
}

async function getSchema(client, shuffle) {
  return deserializeSchema(await schemaBytes(client, shuffle));
}

/** The raw serialized schema of GetSchema ('GetSchema') or GetFlightInfo. */
async function schemaBytes(client, shuffle, method = 'GetSchema') {
  const r = await unary(client, method, cmdDescriptor({ shuffle }));
  return Buffer.from(r.schema);
}

async function listActions(client) {
  return collect(client.ListActions({}));
}

/** Handshakes without a request; resolves with {protocol_version, payload}. */
async function handshake(client) {
  const call = client.Handshake();
  const p = collect(call);
  call.end();
  const [r] = await p;
  return { protocol_version: Number(r.protocol_version), payload: JSON.parse(Buffer.from(r.payload).toString()) };
}

module.exports = {
  grpc, arrow, connect, action, put, putFrames, locations, read, runOp, getSchema, schemaBytes, listActions, handshake,
  serializeSchema, ipcMessages, ipcStream, cmdDescriptor,
};
