// The templates bench/services.js and bench/modes.js clone: SQL of about 100 MB at scale 1.
const rows = (scale, n) => Math.round(n * scale);

// Two templates of about 100 MB each. `app` is shaped like an application's database: keys,
// unique columns, foreign keys, checks and the indexes its queries need (a search among them),
// which a restore rebuilds and checks and a clone copies as bytes. `flat` is one table and one
// index: the restore's easiest case, where the clone's fixed cost (it fsyncs each of the ~300
// files of a database) weighs most.
export const SHAPES = {
  app: {
    what: 'five tables: 5 primary keys, 2 unique, 5 foreign keys, 4 checks, 6 more indexes (one full-text)',
    sql: (
      scale,
    ) => `CREATE TABLE customers (id bigint PRIMARY KEY, email text NOT NULL UNIQUE, name text NOT NULL, created_at timestamptz NOT NULL);
CREATE TABLE products (id bigint PRIMARY KEY, sku text NOT NULL UNIQUE, title text NOT NULL, price_cents integer NOT NULL CHECK (price_cents > 0));
CREATE TABLE orders (id bigint PRIMARY KEY, customer_id bigint NOT NULL REFERENCES customers, status text NOT NULL CHECK (status IN ('new', 'paid', 'shipped', 'returned')), placed_at timestamptz NOT NULL);
CREATE TABLE order_lines (order_id bigint NOT NULL REFERENCES orders, line integer NOT NULL, product_id bigint NOT NULL REFERENCES products, quantity integer NOT NULL CHECK (quantity > 0), PRIMARY KEY (order_id, line));
CREATE TABLE reviews (id bigint PRIMARY KEY, product_id bigint NOT NULL REFERENCES products, customer_id bigint NOT NULL REFERENCES customers, rating smallint NOT NULL CHECK (rating BETWEEN 1 AND 5), body text NOT NULL);
INSERT INTO customers SELECT g, 'user' || g || '@example.com', initcap(md5(g::text)), now() - g * interval '1 minute' FROM generate_series(1, ${rows(scale, 40_000)}) g;
INSERT INTO products SELECT g, 'SKU-' || lpad(g::text, 8, '0'), md5((g * 3)::text), 100 + g % 9000 FROM generate_series(1, ${rows(scale, 8_000)}) g;
INSERT INTO orders SELECT g, 1 + (g::bigint * 7919) % ${rows(scale, 40_000)}, (ARRAY['new', 'paid', 'shipped', 'returned'])[1 + g % 4], now() - g * interval '1 second' FROM generate_series(1, ${rows(scale, 110_000)}) g;
INSERT INTO order_lines SELECT o, l, 1 + (o * 31 + l * 17) % ${rows(scale, 8_000)}, 1 + (o + l) % 5 FROM generate_series(1, ${rows(scale, 110_000)}) o, generate_series(1, 3) l;
INSERT INTO reviews SELECT g, 1 + (g * 13) % ${rows(scale, 8_000)}, 1 + (g::bigint * 7) % ${rows(scale, 40_000)}, 1 + g % 5,
  (SELECT string_agg(w, ' ') FROM (SELECT (ARRAY['great', 'slow', 'broken', 'works', 'fast', 'cheap', 'returned', 'again', 'quality', 'shipping', 'size', 'colour', 'battery', 'screen', 'sound', 'price', 'gift', 'daughter', 'loved', 'hated'])[1 + ((g * 7 + i * 13) % 20)]
    || CASE WHEN i % 3 = 0 THEN ' ' || substr(md5((g * i)::text), 1, 6) ELSE '' END AS w FROM generate_series(1, 30) i) s)
  FROM generate_series(1, ${rows(scale, 55_000)}) g;
CREATE INDEX orders_customer ON orders (customer_id);
CREATE INDEX orders_status_placed ON orders (status, placed_at);
CREATE INDEX order_lines_product ON order_lines (product_id);
CREATE INDEX customers_created ON customers (created_at);
CREATE INDEX reviews_product ON reviews (product_id);
CREATE INDEX reviews_search ON reviews USING gin (to_tsvector('english', body));
`,
  },
  flat: {
    what: 'one table and one index',
    sql: (
      scale,
    ) => `CREATE TABLE events (id bigint PRIMARY KEY, kind text NOT NULL, body text NOT NULL, at timestamptz NOT NULL);
INSERT INTO events SELECT g, md5(g::text), repeat(md5((g * 7)::text), 4), now() - g * interval '1 second' FROM generate_series(1, ${rows(scale, 330_000)}) g;
CREATE INDEX events_kind ON events (kind);
`,
  },
};
