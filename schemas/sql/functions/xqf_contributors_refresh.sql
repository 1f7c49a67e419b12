-- The contributors' figures made again from the results when they are
-- older than p_max_age_s seconds (the page calls it with 60): per
-- machine that reported, CPU-hours (the union of its results' spans,
-- from the lease to its last report, as a multirange, so overlapping
-- leases count once, times its concurrency: the cores it gives to
-- games), pairs, games, tasks, crashes and time losses
-- (STORE_REASON_CRASH and STORE_REASON_TIME_FORFEIT + 1: SQL arrays count
-- from 1), last seen.  One caller makes them at a time (a transaction
-- advisory lock): another, meanwhile, keeps the figures there are.
-- Returns when the figures were made.
-- grant: xqf_web
CREATE OR REPLACE FUNCTION xqf_contributors_refresh(p_max_age_s integer) RETURNS timestamptz
LANGUAGE plpgsql SECURITY DEFINER AS $$
DECLARE
    v_as_of timestamptz := (SELECT as_of FROM contributors_made);
BEGIN
    IF v_as_of > now() - make_interval(secs => greatest(p_max_age_s, 0))
       OR NOT pg_try_advisory_xact_lock(hashtext('xqf_contributors_refresh')) THEN
        RETURN v_as_of;
    END IF;
    DELETE FROM contributors;
    INSERT INTO contributors (worker_id, name, who, concurrency, cpu_hours, pairs, tasks, crashes, time_losses, seen)
    SELECT w.id, w.name, coalesce(w.auth_name, ''), w.concurrency,
           (SELECT coalesce(sum(extract(epoch FROM upper(x) - lower(x))), 0) FROM unnest(r.spans) x)
             * w.concurrency / 3600.0,
           r.pairs, r.tasks, r.crashes, r.time_losses, greatest(w.last_seen, r.seen)
      FROM workers w
      JOIN (SELECT worker_id, sum(pairs) AS pairs, count(DISTINCT task_id) AS tasks,
                   coalesce(sum(reasons[13]), 0) AS crashes, coalesce(sum(reasons[10]), 0) AS time_losses,
                   max(updated_at) AS seen, range_agg(tstzrange(created_at, updated_at, '[]')) AS spans
              FROM results WHERE worker_id IS NOT NULL GROUP BY worker_id) r ON r.worker_id = w.id;
    UPDATE contributors_made SET as_of = now();
    RETURN now();
END $$;
