// Load a trace into Perfetto's trace processor (its WebAssembly build, as the
// Perfetto UI ships it) in Node, run SQL queries and print their results.
//
//     node bench/perfetto_query.js ENGINE_DIR TRACE SQL...
//
// ENGINE_DIR holds the UI's engine_bundle.js and trace_processor*.wasm
// (bench/validate_trace_perfetto.py fetches them). Prints one JSON object:
// {"load_error": ..., "results": [{"columns": [...], "rows": [[...]], "error": ...}]}.
//
// engine_bundle.js is the UI's Web Worker: it builds a WasmBridge that passes
// bytes between a MessagePort and the trace processor's RPC entry point. We run
// it in a vm context that looks like a worker, hand it a fake port, and speak the
// RPC protocol (protos/perfetto/trace_processor/trace_processor.proto) ourselves.
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

const [engineDir, tracePath, ...queries] = process.argv.slice(2);
if (!tracePath) {
  console.error('usage: node perfetto_query.js ENGINE_DIR TRACE SQL...');
  process.exit(2);
}

// TraceProcessorRpc methods and fields used here.
const TPM_APPEND_TRACE_DATA = 1;
const TPM_FINALIZE_TRACE_DATA = 2;
const TPM_QUERY_STREAMING = 3;
const RPC = { seq: 1, request: 2, response: 3, invalidRequest: 4, fatalError: 5,
  appendTraceData: 101, queryArgs: 103, appendResult: 201, queryResult: 203 };
const CELL = { NULL: 1, VARINT: 2, FLOAT64: 3, STRING: 4, BLOB: 5 };
const APPEND_CHUNK = 16 << 20;  // the UI appends big traces in pieces too

// --- protobuf wire format, just what the RPC messages need -------------------

function varint(value) {
  const out = [];
  let n = BigInt.asUintN(64, BigInt(value));
  do {
    let byte = Number(n & 0x7fn);
    n >>= 7n;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return Buffer.from(out);
}

const varintField = (number, value) => Buffer.concat([varint(number << 3), varint(value)]);
const bytesField = (number, bytes) => Buffer.concat([varint((number << 3) | 2), varint(bytes.length), bytes]);

function readVarint(buf, offset) {
  let value = 0n, shift = 0n, byte;
  do {
    if (offset >= buf.length) throw new Error('truncated varint');
    byte = buf[offset++];
    value |= BigInt(byte & 0x7f) << shift;
    shift += 7n;
  } while (byte & 0x80);
  return [value, offset];
}

// Yields [field number, value]: a BigInt for varints, a byte view otherwise.
function* fields(buf) {
  let offset = 0;
  while (offset < buf.length) {
    let key, value, length;
    [key, offset] = readVarint(buf, offset);
    const number = Number(key >> 3n), wireType = Number(key & 7n);
    if (wireType === 0) {
      [value, offset] = readVarint(buf, offset);
    } else if (wireType === 1 || wireType === 5) {
      length = wireType === 1 ? 8 : 4;
      value = buf.subarray(offset, offset + length);
      offset += length;
    } else if (wireType === 2) {
      [length, offset] = readVarint(buf, offset);
      value = buf.subarray(offset, offset + Number(length));
      offset += Number(length);
    } else {
      throw new Error('unexpected wire type ' + wireType);
    }
    yield [number, value];
  }
}

// A repeated varint field arrives packed (bytes) or, legally, one by one.
function varints(value) {
  if (typeof value === 'bigint') return [value];
  const out = [];
  for (let offset = 0; offset < value.length;) {
    let n;
    [n, offset] = readVarint(value, offset);
    out.push(n);
  }
  return out;
}

const utf8 = new TextDecoder();

// --- the engine: engine_bundle.js in a worker-like vm context -----------------

const engineLog = [];  // its console output, shown only when something fails
const log = (...args) => engineLog.push(args.join(' '));
const sandbox = {
  console: { log, info: log, warn: log, error: log, debug: log },
  WorkerGlobalScope: function WorkerGlobalScope() {},  // makes Emscripten take the worker path
  location: { href: 'file://' + path.resolve(engineDir) + '/' },
  // A worker loads the .wasm with a synchronous XHR; read it from ENGINE_DIR.
  XMLHttpRequest: class {
    open(_method, url) { this.url = url; }
    send() {
      const bytes = fs.readFileSync(path.join(engineDir, path.basename(this.url)));
      this.response = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
    }
  },
  TextDecoder, TextEncoder, URL, performance, crypto: globalThis.crypto,
  setTimeout, clearTimeout, setInterval, clearInterval,
};
sandbox.self = sandbox;
const context = vm.createContext(sandbox);
vm.runInContext(fs.readFileSync(path.join(engineDir, 'engine_bundle.js'), 'utf8'), context,
  { filename: 'engine_bundle.js' });
// The bridge checks `data instanceof Uint8Array` against the context's own class.
const EngineUint8Array = vm.runInContext('Uint8Array', context);

let received = Buffer.alloc(0);
const port = {
  postMessage(data) { received = Buffer.concat([received, Buffer.from(data)]); },
};
sandbox.onmessage({ data: port });  // the worker's first message is its port

let seq = 0;
// Sends one request; the bridge answers synchronously, so its replies are
// waiting in `received` when this returns: each one is a TraceProcessorRpcStream
// entry (field 1, length-delimited) holding a TraceProcessorRpc.
function call(method, argField, argBytes) {
  const parts = [varintField(RPC.seq, seq++), varintField(RPC.request, method)];
  if (argField) parts.push(bytesField(argField, argBytes));
  port.onmessage({ data: new EngineUint8Array(bytesField(1, Buffer.concat(parts))) });
  const replies = [];
  for (const [number, message] of fields(received)) {
    if (number !== 1) throw new Error('unexpected RPC stream field ' + number);
    const reply = {};
    for (const [field, value] of fields(message)) reply[field] = value;
    if (reply[RPC.fatalError]) throw new Error('trace processor: ' + utf8.decode(reply[RPC.fatalError]));
    if (reply[RPC.invalidRequest] !== undefined) throw new Error('trace processor does not know method ' + method);
    replies.push(reply);
  }
  received = Buffer.alloc(0);
  return replies;
}

function errorOf(message) {
  for (const [field, value] of fields(message)) if (field === 2) return utf8.decode(value);
  return null;
}

function load(trace) {
  for (let offset = 0; offset < trace.length; offset += APPEND_CHUNK) {
    for (const reply of call(TPM_APPEND_TRACE_DATA, RPC.appendTraceData, trace.subarray(offset, offset + APPEND_CHUNK))) {
      const error = reply[RPC.appendResult] && errorOf(reply[RPC.appendResult]);
      if (error) return error;
    }
  }
  call(TPM_FINALIZE_TRACE_DATA);
  return null;
}

// QueryResult: column names, an error, and batches of cells listed row by row,
// each cell's value taken in turn from the list for its type.
function query(sql) {
  const result = { columns: [], rows: [], error: null };
  const cells = [];
  let complete = false;
  for (const reply of call(TPM_QUERY_STREAMING, RPC.queryArgs, bytesField(1, Buffer.from(sql)))) {
    if (!reply[RPC.queryResult]) continue;
    for (const [field, value] of fields(reply[RPC.queryResult])) {
      if (field === 1) result.columns.push(utf8.decode(value));
      else if (field === 2) result.error = utf8.decode(value);
      else if (field === 3) complete = readBatch(value, cells) || complete;
    }
  }
  if (!complete && !result.error) result.error = 'the result ended without its last batch';
  const width = result.columns.length;
  for (let i = 0; width && i < cells.length; i += width) result.rows.push(cells.slice(i, i + width));
  return result;
}

function readBatch(batch, cells) {
  let types = [], integers = [], floats = [], strings = [], last = false;
  for (const [field, value] of fields(batch)) {
    if (field === 1) types = types.concat(varints(value).map(Number));
    else if (field === 2) integers = integers.concat(varints(value).map(n => Number(BigInt.asIntN(64, n))));
    else if (field === 3) {
      const view = new DataView(value.buffer, value.byteOffset, value.byteLength);
      for (let i = 0; i < value.length; i += 8) floats.push(view.getFloat64(i, true));
    } else if (field === 5) strings = strings.concat(utf8.decode(value).split('\0').slice(0, -1));
    else if (field === 6) last = value === 1n;
    // field 4 holds blob cells: no query here returns one
  }
  let integer = 0, float = 0, string = 0;
  for (const type of types) {
    if (type === CELL.NULL) cells.push(null);
    else if (type === CELL.VARINT) cells.push(integers[integer++]);
    else if (type === CELL.FLOAT64) cells.push(floats[float++]);
    else if (type === CELL.STRING) cells.push(strings[string++]);
    else if (type === CELL.BLOB) cells.push('<blob>');
    else throw new Error('unknown cell type ' + type);
  }
  return last;
}

// The bridge connects to the module once the runtime is up, after pending
// promise callbacks: start on the next turn of the event loop.
setTimeout(() => {
  try {
    const loadError = load(fs.readFileSync(tracePath));
    const results = loadError ? [] : queries.map(query);
    console.log(JSON.stringify({ load_error: loadError, results }));
  } catch (error) {
    console.error(engineLog.join('\n'));
    console.error(error && error.stack || error);
    process.exit(1);
  }
}, 0);
