-- 009: signed engine builds (docs/cluster.md, "Trust").  A build carries the Ed25519
-- signature of an operator key over its SHA-256 and its name (build_id),
-- as schemas/keys.h defines it: 128 lowercase hex digits, NULL when the
-- build is unsigned.  Workers run a build only when a key they trust
-- signed it; the database only keeps and serves the signature (it holds
-- no key and cannot make one).

ALTER TABLE engine_builds ADD COLUMN signature text
    CHECK (signature ~ '^[0-9a-f]{128}$');
