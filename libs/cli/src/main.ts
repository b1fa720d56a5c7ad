#!/usr/bin/env node
// The `holdfast` bin.
import 'reflect-metadata';
import { runCli } from './cli';

void runCli(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
