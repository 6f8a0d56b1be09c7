// Preloaded (`node --require`) into a CLI that a test starts: its multipart uploads use S3's minimum part size (5 MiB)
// instead of the CLI's 16 MiB, as the in-process push tests do (pushTargetModel's partSize). An upload is under way,
// with its first part in S3, after 5 MiB per part in flight read, hashed and sent instead of 16: a third of the work
// the CLI and the S3 stand-in do before a test may send its signal. Nothing else about the upload changes.
// The CLI loads @aws-sdk/lib-storage with import(); node hands it this module's exports when the module is already in
// require's cache, so the class is replaced here before the CLI ever sees it.
'use strict';
const { dirname } = require('node:path');

const PART_SIZE = 5 * 1024 * 1024;
const entry = process.argv[1];
const path = require.resolve('@aws-sdk/lib-storage', { paths: [entry ? dirname(entry) : process.cwd()] });
const storage = require(path);
const { Upload } = storage;
if (typeof Upload !== 'function' || Upload.MIN_PART_SIZE !== PART_SIZE) {
  throw new Error(`small-parts.cjs: ${path} has no Upload class with a 5 MiB minimum part size`);
}
storage.Upload = class SmallPartUpload extends Upload {
  constructor(options) {
    super({ ...options, partSize: PART_SIZE });
  }
};
