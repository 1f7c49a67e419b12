-- 025: nets (NNUE weights, docs/nnue.md) are artifacts of the system, as
-- engine builds are: registered by their SHA-256 with their provenance
-- (xqf-tune net add), signed by an operator key over (sha256, name)
-- (schemas/keys.h, "xqf-net-v1"), fetched by workers on first use,
-- verified and cached.  The bytes live here, as a build's do, because the
-- coordinator serves them in chunks.

CREATE TABLE nets (
    id          bigserial PRIMARY KEY,
    sha256      text NOT NULL UNIQUE CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    name        text NOT NULL UNIQUE CHECK (name ~ '^[!-~]{1,64}$'),  -- what is signed (keys.h)
    description text NOT NULL DEFAULT '',  -- the net file's own description (its header's provenance)
    provenance  text NOT NULL DEFAULT '',  -- what the operator adds: data, training settings
    bytes       bytea NOT NULL,
    signature   text CHECK (signature ~ '^[0-9a-f]{128}$'),  -- NULL: unsigned
    added_by    text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL DEFAULT now()
);

-- The net each side of a run plays: NULL, the engine's own evaluation
-- (its compiled-in net, else the hand-crafted one); *_hce true forces the
-- hand-crafted evaluation (UseNNUE false, xqf-tune --test-net none), which
-- stays a choice once a default net exists.
ALTER TABLE runs ADD COLUMN test_net bigint REFERENCES nets(id);
ALTER TABLE runs ADD COLUMN base_net bigint REFERENCES nets(id);
ALTER TABLE runs ADD COLUMN test_hce boolean NOT NULL DEFAULT false;
ALTER TABLE runs ADD COLUMN base_hce boolean NOT NULL DEFAULT false;
ALTER TABLE runs ADD CONSTRAINT runs_test_net_or_hce CHECK (NOT (test_hce AND test_net IS NOT NULL));
ALTER TABLE runs ADD CONSTRAINT runs_base_net_or_hce CHECK (NOT (base_hce AND base_net IS NOT NULL));
