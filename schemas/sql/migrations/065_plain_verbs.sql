-- A plain verb's write (run_verbs.def's RUN_PLAIN_VERB) is WRITE(run,
-- actor) returning NULL when done, else why the run's state refused it:
-- xqf_stop_run takes the actor's name for the verdict and returns text
-- (its file has the new body).  Who may execute a function is now its
-- file's "-- grant:" line (store.c, function_grants).
DROP FUNCTION IF EXISTS xqf_stop_run(bigint, text);
