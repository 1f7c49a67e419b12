-- ops/bench web: a database the size of a busy cluster's.  100 runs (90
-- SPRT, 10 SPSA of 20 parameters) holding 10 million games, 1,000
-- workers, 200,000 tasks with their leases' results, 2,000 progress
-- points and (SPSA) 400 theta iterations a run; 40 nets (each named by
-- two of the runs), 100,000 lines of the events log, 10 progressions of 8
-- commits each (80 of the runs), 20 presets of our engine.
\set ON_ERROR_STOP on
BEGIN;
INSERT INTO workers (name, build_id, cores, concurrency, last_seen)
SELECT 'node' || lpad(i::text, 4, '0'), 'xqf-bench', 16, 16, now() - (i % 600) * interval '1 second'
FROM generate_series(1, 1000) i;
INSERT INTO runs (kind, name, name0, name1, params0, book, book_name, nodes, pairs_per_task, max_pairs,
                  elo0, elo1, alpha, beta, tasks_on_claim, pairs, wins, draws, losses, ll, ld, dd, wd, ww,
                  llr, state, owner, created_at, resign_moves, resign_score, draw_after, draw_moves,
                  draw_score, max_plies)
SELECT CASE WHEN i <= 90 THEN 'sprt' ELSE 'spsa' END, 'bench run ' || i, 'test', 'base',
       CASE WHEN i <= 90 THEN 'NullR=' || (i % 4 + 1) ELSE '' END, '{startpos}', 'bench', 3000, 8, 100000,
       0, 5, 0.05, 0.05, i <= 90, 50000, 40000, 20000, 40000, 5000, 10000, 20000, 10000, 5000,
       (i % 7) * 0.3 - 1, CASE WHEN i % 3 = 0 THEN 'finished' ELSE 'active' END,
       'user' || (i % 5), now() - interval '2 hours', 4, 600, 40, 8, 10, 0
FROM generate_series(1, 100) i;
-- 2,000 tasks a run over the workers, each with one lease's result
INSERT INTO tasks (run_id, first_pair, n_pairs, state, params0, params1, worker_id, lease_token, done_pairs,
                   wins, draws, losses, dd, attempts, reasons)
SELECT r.id, t * 25, 25, CASE WHEN t % 100 = 0 THEN 'leased' ELSE 'done' END, '', '',
       1 + (r.id * 2000 + t) % 1000, r.id * 100000 + t, 25, 20, 10, 20, 25, 1,
       '{0,10,0,0,10,5,10,10,0,0,0,0,5,0,0,0,0}'
FROM runs r, generate_series(0, 1999) t;
INSERT INTO results (task_id, lease_token, worker_id, base_pairs, pairs, wins, draws, losses, dd, reports)
SELECT id, lease_token, worker_id, 0, 25, 20, 10, 20, 25, 3 FROM tasks;
INSERT INTO run_progress (run_id, pairs, wins, draws, losses, ll, ld, dd, wd, ww, recorded_at)
SELECT r.id, p * 25, p * 20, p * 10, p * 20, p * 2, p * 5, p * 11, p * 5, p * 2,
       r.created_at + p * interval '3 seconds'
FROM runs r, generate_series(1, 2000) p;
INSERT INTO run_params (run_id, idx, name, start, min, max, c_end, r_end, theta)
SELECT r.id, k, 'P' || k, 100, 0, 200, 10, 0.002, 100 + k FROM runs r, generate_series(0, 19) k WHERE r.kind = 'spsa';
INSERT INTO run_param_history (run_id, iteration, idx, theta)
SELECT r.id, it * 125, k, 100 + k * sin(it / 50.0) FROM runs r, generate_series(1, 400) it, generate_series(0, 19) k
WHERE r.kind = 'spsa';
UPDATE runs SET iter = 50000, settings = '{"alpha":0.602,"gamma":0.101,"a_ratio":0.1}' WHERE kind = 'spsa';
INSERT INTO nets (sha256, name, description, provenance, bytes, added_by, approved)
SELECT lpad(to_hex(i), 64, '0'), 'bench-' || i || '.nnue', 'a bench net', 'trained by chain ' || i, '\x00'::bytea,
       'user' || (i % 5), i % 10 <> 0
FROM generate_series(1, 40) i;
UPDATE runs SET test_net = (SELECT id FROM nets ORDER BY id OFFSET (runs.id % 40) LIMIT 1) WHERE id <= 80;
INSERT INTO web_audit (at, actor, run_id, action, detail)
SELECT now() - i * interval '10 seconds', 'user' || (i % 5), CASE WHEN i % 10 = 0 THEN NULL ELSE 1 + i % 100 END,
       CASE WHEN i % 10 = 0 THEN 'net upload' WHEN i % 3 = 0 THEN 'modify' ELSE 'create' END,
       'priority 0 -> ' || (i % 4)
FROM generate_series(1, 100000) i;
INSERT INTO progressions (name, engine, base_ref, base_commit, base_date, base_subject, created_by)
SELECT 'bench progression ' || p, 'xqf', 'v0', lpad(to_hex(p), 40, 'a'), now() - interval '60 days',
       'the base of progression ' || p, 'user' || (p % 5)
FROM generate_series(1, 10) p;
INSERT INTO progression_points (progression_id, run_id, ref, git_commit, committed_at, subject)
SELECT 1 + (r.id - 1) / 8, r.id, 'v' || r.id, lpad(to_hex(r.id), 40, 'c'), now() - (80 - r.id) * interval '12 hours',
       'a change of the engine, commit ' || r.id
FROM runs r WHERE r.id <= 80;
INSERT INTO engine_presets (engine_id, name, settings, updated_by)
SELECT e.id, 'bench' || i, ('{"tc": "' || i || '+0.1", "elo0": "0", "elo1": "5", "max-pairs": "20000", "threads": "'
                            || (1 + i % 4) || '"}')::jsonb, 'bench'
FROM engines e, generate_series(1, 16) i WHERE e.name = 'xqf';
COMMIT;
ANALYZE;
