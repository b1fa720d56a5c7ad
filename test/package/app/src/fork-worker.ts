import { uniqueTablePrefix } from '@holdfast/testing';

const prefix: string = uniqueTablePrefix('worker');
process.send?.({ ready: true, prefix }, () => process.exit(0));
