// run_litert.mjs — runs a TFLite model with TFLite's own runtime (LiteRT: WebAssembly, its CPU
// path XNNPACK) under Node.js, for nnhal's comparisons (tools/common/litert_reference.h).
//
// Usage: node run_litert.mjs REQUEST.json
// REQUEST: {"model": "m.tflite", "outputDir": "dir",
//           "inputs": [{"name": "...", "dtype": "float32|int32|int64|uint8|int8|int16",
//                       "shape": [..], "file": "raw bytes"}]}
// Inputs are matched to the model's by name when every name is one of the model's inputs,
// else by position. Prints {"outputs": [{"name", "dtype", "shape", "file"}]} on stdout (the
// raw bytes of output k in outputDir/output_k.bin); LiteRT's own logs go to stderr. Exit
// status 1 with the reason on stderr when anything fails.
import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import {createRequire} from 'node:module';
import {fileURLToPath} from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const wasmDir = path.join(here, 'node_modules', '@litertjs', 'core', 'wasm');

// LiteRT.js loads its Emscripten module the way a web worker does (importScripts, self);
// Node.js gets those, and the script's CommonJS names, from here.
globalThis.self = globalThis;
globalThis.require = createRequire(import.meta.url);
globalThis.__dirname = wasmDir;
globalThis.__filename = path.join(wasmDir, 'litert_wasm_internal.js');
globalThis.importScripts = (url) => {
  vm.runInThisContext(fs.readFileSync(String(url), 'utf8'), {filename: String(url)});
};

const kArrays = {
  float32: Float32Array,
  int32: Int32Array,
  int64: BigInt64Array,
  uint8: Uint8Array,
  int8: Int8Array,
  int16: Int16Array,
};

function typedArray(dtype, bytes) {
  const Type = kArrays[dtype];
  if (!Type) throw new Error(`input type ${dtype} is not supported here`);
  const copy = new Uint8Array(bytes.length);
  copy.set(bytes);
  return new Type(copy.buffer, 0, bytes.length / Type.BYTES_PER_ELEMENT);
}

// LiteRT.js's JavaScript layer lists only float32, int32 and uint8 tensors (its DATATYPES
// table), although its runtime computes the others: models with int8, int16 or int64 inputs
// and outputs need the table completed. A copy of the module with the completed table
// is written beside it once (same folder, so that its imports resolve) and loaded instead.
async function withAllTypes() {
  const dist = path.join(here, 'node_modules', '@litertjs', 'core', 'dist');
  const patched = path.join(dist, 'index.nnhal-types.mjs');
  if (!fs.existsSync(patched)) {
    const source = fs.readFileSync(path.join(dist, 'index.js'), 'utf8');
    // The table ends right before getDataType; the new entries go last, so that a
    // Uint8Array still means uint8.
    const end = '\n]);\nfunction getDataType(';
    if (!source.includes('var DATATYPES = Object.freeze([') || !source.includes(end)) {
      return '@litertjs/core';  // another layout: as it is
    }
    const extra = [
      ['int8', 'Int8Array', 'INT8'], ['int16', 'Int16Array', 'INT16'],
      ['int64', 'BigInt64Array', 'INT64'],
    ].map(([dtype, array, element]) =>
        `,\n  {dtype: "${dtype}", typedArrayConstructor: ${array}, elementType: ElementType.${element}}`);
    const temporary = `${patched}.${process.pid}`;
    try {
      fs.writeFileSync(temporary, source.replace(end, extra.join('') + end));
      fs.renameSync(temporary, patched);
    } catch (error) {
      // A read-only installation: float32, int32 and uint8 models still run.
      console.error(`run_litert: cannot write ${patched} (${error.message}): ` +
                    'int8, int16 and int64 tensors are not available');
      return '@litertjs/core';
    }
  }
  return patched;
}

async function main() {
  const request = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  // LiteRT writes its informational logs with console.log: they belong on stderr here.
  const stdoutLog = console.log;
  console.log = (...args) => console.error(...args);
  const {loadLiteRt, loadAndCompile, Tensor} = await import(await withAllTypes());
  await loadLiteRt(wasmDir + '/');
  const model =
      await loadAndCompile(new Uint8Array(fs.readFileSync(request.model)), {accelerator: 'wasm'});
  const details = model.getInputDetails();
  const byName = request.inputs.every((i) => details.some((d) => d.name === i.name));
  const tensors = details.map((detail, position) => {
    const given = byName ? request.inputs.find((i) => i.name === detail.name)
                         : request.inputs[position];
    if (!given) throw new Error(`no value for input ${detail.name}`);
    return new Tensor(typedArray(given.dtype, fs.readFileSync(given.file)), given.shape);
  });
  const results = await model.run(tensors);
  const outputDetails = model.getOutputDetails();
  const outputs = [];
  for (let k = 0; k < results.length; ++k) {
    const host = await results[k].copyTo('wasm');
    const values = host.toTypedArray();
    const file = path.join(request.outputDir, `output_${k}.bin`);
    fs.writeFileSync(file, new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
    outputs.push({
      name: outputDetails[k].name,
      dtype: outputDetails[k].dtype,
      shape: Object.values(outputDetails[k].shape),
      file,
    });
    host.delete();
    results[k].delete();
  }
  for (const tensor of tensors) tensor.delete();
  stdoutLog(JSON.stringify({outputs}));
}

main().then(() => process.exit(0), (error) => {
  console.error(`run_litert: ${error && error.stack ? error.stack : error}`);
  process.exit(1);
});
