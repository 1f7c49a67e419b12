-- 038: what a run's book was, beside its openings (runs.book): the file's
-- format and SHA-256 (so that the same file can be recognised, as
-- sha256sum prints it), how many openings the run holds and how many
-- repeated positions the file had, the ply a PGN's games were cut at,
-- and the book's balance where its lines carry an engine score (EPD's
-- "ce", the "(+N)" comment of xqf-match makebook).  Written with the run,
-- in its transaction; runs made before, or by a chain's next stage, have
-- no row, and show their book by its name and its count of lines.
CREATE TABLE run_books (
    run_id      bigint PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
    format      text NOT NULL CHECK (format IN ('book', 'fen', 'epd', 'pgn')),
    sha256      text NOT NULL CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    openings    integer NOT NULL CHECK (openings > 0),
    duplicates  integer NOT NULL DEFAULT 0 CHECK (duplicates >= 0),
    plies       integer NOT NULL DEFAULT 0 CHECK (plies >= 0),
    scored      integer NOT NULL DEFAULT 0 CHECK (scored >= 0 AND scored <= openings),
    score_min   integer NOT NULL DEFAULT 0,   -- of |score|, over the scored openings
    score_max   integer NOT NULL DEFAULT 0,
    score_mean  double precision NOT NULL DEFAULT 0
);

-- Records a run's book, once (its row is never changed): the dashboard
-- writes no table of its own, it makes runs through xqf_create_run and
-- their book's row through this, in the same transaction.

INSERT INTO role_grants (role, kind, object, privileges) VALUES
    ('xqf_web', 'table', 'run_books', 'SELECT'),
    ('xqf_web', 'function', 'xqf_run_book_add', 'EXECUTE'),
    ('xqf_coordinator', 'table', 'run_books', 'SELECT');

SELECT xqf_apply_grants();
