-- 066: the contributors page's figures, per machine, made again from the
-- results at most once a minute by xqf_contributors_refresh (the page
-- calls it; as Fishtest's user statistics, made periodically rather than
-- at every view: the union of a machine's lease spans over every result
-- costs a scan of them all).  One row a machine that reported; as_of
-- says when they were made (-infinity: never).
CREATE TABLE contributors (
    worker_id   bigint PRIMARY KEY,
    name        text NOT NULL,
    who         text NOT NULL,            -- its key's allow-list name, '' for none
    concurrency integer NOT NULL,
    cpu_hours   double precision NOT NULL,
    pairs       bigint NOT NULL,
    tasks       bigint NOT NULL,
    crashes     bigint NOT NULL,
    time_losses bigint NOT NULL,
    seen        timestamptz NOT NULL
);
CREATE TABLE contributors_made (
    one   boolean PRIMARY KEY DEFAULT true CHECK (one),
    as_of timestamptz NOT NULL
);
INSERT INTO contributors_made (as_of) VALUES ('-infinity');

INSERT INTO role_grants (role, kind, object, privileges) VALUES
    ('xqf_web', 'table', 'contributors', 'SELECT'),
    ('xqf_web', 'table', 'contributors_made', 'SELECT');

SELECT xqf_apply_grants();
