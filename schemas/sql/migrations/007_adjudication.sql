-- 007: a run's adjudication settings as named columns, no longer a
-- positional bigint[6] (protocol version 3 names them in the task message
-- too).  No SQL defaults: the store writes every run's settings
-- (STORE_ADJUDICATION_DEFAULT in store/store.h when a run names
-- none), so they are written down in one place.  The worker accepts
-- 0-100000 for each (0 turns a rule off); so does the table.

ALTER TABLE runs
    ADD COLUMN resign_moves bigint,
    ADD COLUMN resign_score bigint,
    ADD COLUMN draw_after   bigint,
    ADD COLUMN draw_moves   bigint,
    ADD COLUMN draw_score   bigint,
    ADD COLUMN max_plies    bigint;

UPDATE runs SET resign_moves = adjudication[1], resign_score = adjudication[2],
                draw_after = adjudication[3], draw_moves = adjudication[4],
                draw_score = adjudication[5], max_plies = adjudication[6];

ALTER TABLE runs
    ALTER COLUMN resign_moves SET NOT NULL,
    ALTER COLUMN resign_score SET NOT NULL,
    ALTER COLUMN draw_after   SET NOT NULL,
    ALTER COLUMN draw_moves   SET NOT NULL,
    ALTER COLUMN draw_score   SET NOT NULL,
    ALTER COLUMN max_plies    SET NOT NULL,
    ADD CONSTRAINT runs_adjudication_range CHECK (
        resign_moves BETWEEN 0 AND 100000 AND resign_score BETWEEN 0 AND 100000 AND
        draw_after BETWEEN 0 AND 100000 AND draw_moves BETWEEN 0 AND 100000 AND
        draw_score BETWEEN 0 AND 100000 AND max_plies BETWEEN 0 AND 100000),
    DROP COLUMN adjudication;
