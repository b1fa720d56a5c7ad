#!/usr/bin/env node
// The `holdfast` command, as bin/holdfast.js runs it (compiled, or the sources in the repository).
import 'reflect-metadata';
import { runCli } from './cli';

void runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
