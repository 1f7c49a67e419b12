-- 051: the pairs a replay audit checks are chosen with a secret; the search
-- audit's verdicts.
--
-- xqf_replayed chose them by hashint8(run * 1000003 + pair), and every
-- task carries its run and first pair: a worker knew which of its pairs
-- would be replayed, played those honestly and made up the others.  The
-- choice is now an HMAC-SHA256 (RFC 2104) of the run and the pair under a
-- key drawn here, once, when the database is migrated (xqf-coordinator
-- --migrate, or its first start as the schema's owner), from PostgreSQL's
-- strong random source (gen_random_uuid, pg_strong_random: two of them,
-- 244 random bits, hashed to the 32-byte key).  It lives in this table:
-- readable by the tables' owner and the coordinator's role only (the one
-- that stores games and queues their audits, xqf_games_batch), never by
-- the dashboard's, the builder's or the signer's role, and never sent to a
-- worker.  A table rather than a key file beside the coordinator's CURVE
-- keys: the choice is made inside the statement that stores the games,
-- several coordinators of one database choose alike, and whoever can read
-- the database as its owner can rewrite results anyway.  The key is kept
-- as the HMAC's two padded keys (K xor ipad, K xor opad, 64 bytes each),
-- so that xqf_replayed is two SHA-256 calls.  One row (one: true).
CREATE TABLE audit_secret (
    one       boolean PRIMARY KEY DEFAULT true CHECK (one),
    inner_pad bytea NOT NULL CHECK (length(inner_pad) = 64),
    outer_pad bytea NOT NULL CHECK (length(outer_pad) = 64)
);

INSERT INTO audit_secret (inner_pad, outer_pad)
SELECT decode(string_agg(lpad(to_hex(x.b # 54), 2, '0'), '' ORDER BY x.i), 'hex'),
       decode(string_agg(lpad(to_hex(x.b # 92), 2, '0'), '' ORDER BY x.i), 'hex')
  FROM (SELECT i, CASE WHEN i < 32 THEN get_byte(k.key, i) ELSE 0 END AS b
          FROM (SELECT sha256(convert_to(gen_random_uuid()::text || gen_random_uuid()::text, 'UTF8')) AS key) k,
               generate_series(0, 63) AS i) AS x;

-- The search audit of runs on a clock or of several threads (xqf-tune
-- audit, tuner/cli/audit.c): positions drawn from each worker's games,
-- searched again at a fixed depth with the mover's set, the worker's
-- agreement judged by an SPRT.  One row per worker per audit; a worker's
-- last verdict of a run is its standing there (RUN_WORKERS flags it).
CREATE TABLE search_audits (
    id        bigserial PRIMARY KEY,
    run_id    bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    worker_id integer NOT NULL,
    depth     integer NOT NULL,
    positions bigint NOT NULL CHECK (positions >= 0),
    agree     bigint NOT NULL CHECK (agree BETWEEN 0 AND positions),
    honest    double precision NOT NULL,     -- H0's agreement
    llr       double precision NOT NULL,
    verdict   text NOT NULL CHECK (verdict IN ('clean', 'undecided', 'flagged')),
    at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX search_audits_run ON search_audits (run_id, worker_id, id);

INSERT INTO role_grants (role, kind, object, privileges) VALUES
    ('xqf_coordinator', 'table', 'audit_secret', 'SELECT'),
    ('xqf_coordinator', 'table', 'search_audits', 'SELECT'),
    ('xqf_web', 'table', 'search_audits', 'SELECT');

SELECT xqf_apply_grants();
