// node query.mjs DIR SQL...: runs each SQL statement with DIR as the working
// directory (so read_json_auto('index.ndjson') reads DIR/index.ndjson) and
// prints one JSON array of rows per statement, one per line.
import { DuckDBInstance } from '@duckdb/node-api';

const [dir, ...statements] = process.argv.slice(2);
process.chdir(dir);
const db = await DuckDBInstance.create(':memory:');
const conn = await db.connect();
for (const sql of statements) {
  const reader = await conn.runAndReadAll(sql);
  console.log(JSON.stringify(reader.getRowsJson()));
}
